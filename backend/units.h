// Sizes and durations as messages show them: exact where a user compares them with a limit, with a
// readable unit beside.
#pragma once

#include <cstdint>
#include <string>

namespace vkfuse {

// "1 byte", "512 bytes", "1536 bytes (1.5 KiB)", "4294967296 bytes (4.0 GiB)".
std::string describe_bytes(std::uint64_t bytes);

// A Vulkan timeout in nanoseconds: "250 ns", "1.5 us", "20.0 ms", "2.50 s", "86400 s"; UINT64_MAX,
// which Vulkan takes as "wait forever", is "no timeout".
std::string describe_timeout_ns(std::uint64_t ns);

}  // namespace vkfuse
