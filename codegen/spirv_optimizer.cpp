#include "codegen/spirv_optimizer.h"

#include <spirv-tools/libspirv.hpp>
#include <spirv-tools/optimizer.hpp>
#include <string>
#include <vector>

namespace vkfuse {
namespace {

constexpr spv_target_env kEnv = SPV_ENV_VULKAN_1_1;

// spirv-opt's performance passes (-O, SPIRV-Tools 2023.1) without the global value numbering
// (redundancy-elimination) that -O runs right after unrolling the loops, and combine-access-chains:
// that first run works on the unrolled code and took about half of -O's time. The run at the end, on
// code already cleaned up, stays: without it some fused groups took half again as long. Compiles take about
// half as long as with -O, at -O's speed (docs/tuning-log.md, "kPasses").
const std::vector<std::string> kPasses = {
    "--wrap-opkill", "--eliminate-dead-branches", "--merge-return", "--inline-entry-points-exhaustive",
    "--eliminate-dead-functions", "--eliminate-dead-code-aggressive", "--private-to-local",
    "--eliminate-local-single-block", "--eliminate-local-single-store", "--eliminate-dead-code-aggressive",
    "--scalar-replacement=100", "--convert-local-access-chains", "--eliminate-local-single-block",
    "--eliminate-local-single-store", "--eliminate-dead-code-aggressive", "--ssa-rewrite",
    "--eliminate-dead-code-aggressive", "--ccp", "--eliminate-dead-code-aggressive", "--loop-unroll",
    "--eliminate-dead-branches", "--simplify-instructions", "--scalar-replacement=100",
    "--convert-local-access-chains", "--eliminate-local-single-block", "--eliminate-local-single-store",
    "--eliminate-dead-code-aggressive", "--ssa-rewrite", "--eliminate-dead-code-aggressive", "--vector-dce",
    "--eliminate-dead-inserts", "--eliminate-dead-branches", "--simplify-instructions", "--if-conversion",
    "--copy-propagate-arrays", "--reduce-load-size", "--eliminate-dead-code-aggressive", "--merge-blocks",
    "--redundancy-elimination", "--eliminate-dead-branches", "--merge-blocks", "--simplify-instructions"};

}  // namespace

Result<std::vector<std::uint32_t>> optimize_and_validate(const std::vector<std::uint32_t>& spirv,
                                                         std::string_view label) {
  std::string messages;
  auto consumer = [&messages](spv_message_level_t, const char*, const spv_position_t& position, const char* text) {
    messages += "  [word " + std::to_string(position.index) + "] " + text + "\n";
  };
  spvtools::Optimizer optimizer(kEnv);
  optimizer.SetMessageConsumer(consumer);
  if (!optimizer.RegisterPassesFromFlags(kPasses))
    return make_error(ErrorCode::kInternal, "spirv-opt rejected the pass list:\n" + messages);
  std::vector<std::uint32_t> optimized;
  if (!optimizer.Run(spirv.data(), spirv.size(), &optimized))
    return make_error(ErrorCode::kInternal, "spirv-opt failed for group '" + std::string(label) + "':\n" + messages);

  spvtools::SpirvTools tools(kEnv);
  tools.SetMessageConsumer(consumer);
  if (!tools.Validate(optimized))
    return make_error(ErrorCode::kInternal,
                      "spirv-val rejected the SPIR-V of group '" + std::string(label) + "':\n" + messages);
  return optimized;
}

std::string disassemble_spirv(const std::vector<std::uint32_t>& spirv) {
  spvtools::SpirvTools tools(kEnv);
  std::string text;
  if (!tools.Disassemble(spirv, &text, SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES | SPV_BINARY_TO_TEXT_OPTION_INDENT))
    return "; disassembly failed\n";
  return text;
}

}  // namespace vkfuse
