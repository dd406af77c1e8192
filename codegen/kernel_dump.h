// VKFUSE_DUMP_DIR: each group's GLSL, SPIR-V disassembly and compile log, for reading what codegen made.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vkfuse {

// The dump directory from VKFUSE_DUMP_DIR, or "" when dumping is off.
std::string dump_directory();

// Writes <dir>/<label>-<key>.comp, .spvasm (when spirv is non-empty) and .log. Best effort: a
// failure to write is logged, never fatal.
void dump_kernel(std::string_view label, std::string_view key_hex, std::string_view source,
                 const std::vector<std::uint32_t>& spirv, std::string_view log);

}  // namespace vkfuse
