#include "codegen/spirv_optimizer.h"

#include <spirv-tools/libspirv.hpp>
#include <spirv-tools/optimizer.hpp>

namespace vkfuse {
namespace {

constexpr spv_target_env kEnv = SPV_ENV_VULKAN_1_1;

}  // namespace

Result<std::vector<std::uint32_t>> optimize_and_validate(const std::vector<std::uint32_t>& spirv,
                                                         std::string_view label) {
  std::string messages;
  auto consumer = [&messages](spv_message_level_t, const char*, const spv_position_t& position, const char* text) {
    messages += "  [word " + std::to_string(position.index) + "] " + text + "\n";
  };
  spvtools::Optimizer optimizer(kEnv);
  optimizer.SetMessageConsumer(consumer);
  optimizer.RegisterPerformancePasses();
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
