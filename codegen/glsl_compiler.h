// GLSL -> SPIR-V in process with glslang. Thread-safe: compile_glsl_compute may run on many threads at
// once (glslang's rule: InitializeProcess once per process, then a TShader and TProgram per compile).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <vkfuse/status.hpp>

namespace vkfuse {

// Vulkan 1.1 / SPIR-V 1.3: the minimum vkfuse asks of devices, and enough for subgroup operations.
inline constexpr std::string_view kSpirvTarget = "vulkan1.1/spv1.3";

// On failure: ErrorCode::kCompile, with the label, the glslang log and the numbered source.
Result<std::vector<std::uint32_t>> compile_glsl_compute(std::string_view source, std::string_view label);

// "   1 | #version 450" ...: sources in errors are numbered so a log's line numbers can be read.
std::string number_source_lines(std::string_view source);

}  // namespace vkfuse
