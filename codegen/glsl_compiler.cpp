#include "codegen/glsl_compiler.h"

#include <cstdio>
#include <mutex>
#include <sstream>

#include <glslang/Public/ResourceLimits.h>
#include <glslang/Public/ShaderLang.h>
#include <glslang/SPIRV/GlslangToSpv.h>

namespace vkfuse {
namespace {

void ensure_glslang_process() {
  // InitializeProcess is reference-counted by glslang; we take one reference for the process lifetime
  // and never finalize, because kernels may be compiled until exit. It must run once per process, not
  // per thread: call_once also makes every other compiling thread wait until it is done. After that,
  // glslang keeps per-compile state in the TShader/TProgram and a thread-local pool allocator that
  // TShader::parse and TProgram::link install, and builds its shared built-in symbol tables under its
  // own lock (the first compile's ~90 ms), so each call below is independent of the others.
  static std::once_flag once;
  std::call_once(once, [] { glslang::InitializeProcess(); });
}

}  // namespace

std::string number_source_lines(std::string_view source) {
  std::ostringstream out;
  std::size_t line = 1, start = 0;
  while (start <= source.size()) {
    std::size_t end = source.find('\n', start);
    if (end == std::string_view::npos) end = source.size();
    char prefix[16];
    std::snprintf(prefix, sizeof prefix, "%4zu | ", line++);
    out << prefix << source.substr(start, end - start) << "\n";
    start = end + 1;
  }
  return out.str();
}

Result<std::vector<std::uint32_t>> compile_glsl_compute(std::string_view source, std::string_view label) {
  ensure_glslang_process();
  glslang::TShader shader(EShLangCompute);
  const char* text = source.data();
  const int length = static_cast<int>(source.size());
  const std::string name(label);
  const char* names = name.c_str();
  shader.setStringsWithLengthsAndNames(&text, &length, &names, 1);
  shader.setEnvInput(glslang::EShSourceGlsl, EShLangCompute, glslang::EShClientVulkan, 100);
  shader.setEnvClient(glslang::EShClientVulkan, glslang::EShTargetVulkan_1_1);
  shader.setEnvTarget(glslang::EShTargetSpv, glslang::EShTargetSpv_1_3);
  shader.setEntryPoint("main");

  const auto messages = static_cast<EShMessages>(EShMsgSpvRules | EShMsgVulkanRules);
  auto failure = [&](const char* stage, const char* log) {
    return make_error(ErrorCode::kCompile, std::string("GLSL ") + stage + " failed for group '" + name +
                                               "':\n" + log + "\nsource:\n" + number_source_lines(source));
  };
  if (!shader.parse(GetDefaultResources(), 450, false, messages)) return failure("compile", shader.getInfoLog());
  glslang::TProgram program;
  program.addShader(&shader);
  if (!program.link(messages)) return failure("link", program.getInfoLog());

  std::vector<std::uint32_t> spirv;
  spv::SpvBuildLogger logger;
  glslang::SpvOptions options;
  options.generateDebugInfo = false;
  options.disableOptimizer = true;  // spirv-opt runs separately (spirv_optimizer.*)
  glslang::GlslangToSpv(*program.getIntermediate(EShLangCompute), spirv, &logger, &options);
  const std::string messages_text = logger.getAllMessages();
  if (spirv.empty()) return failure("SPIR-V generation", messages_text.c_str());
  return spirv;
}

}  // namespace vkfuse
