// spirv-opt performance passes (-O less its costly first value numbering), then spirv-val. Both from
// SPIRV-Tools, in process.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <vkfuse/status.hpp>

namespace vkfuse {

// Optimizes for speed and validates the result (Vulkan 1.1 environment). An invalid module is an
// internal error naming the group: it means the code generator emitted something wrong.
Result<std::vector<std::uint32_t>> optimize_and_validate(const std::vector<std::uint32_t>& spirv,
                                                         std::string_view label);

// Human-readable disassembly (for VKFUSE_DUMP_DIR).
std::string disassemble_spirv(const std::vector<std::uint32_t>& spirv);

}  // namespace vkfuse
