// KernelKey: the canonical identity of a compiled kernel. The generated source already spells out the
// group (ops, dtypes, shapes, broadcast, plan); the key adds the compiler target, the code generator's
// version and the device/driver identity, and hashes it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace vkfuse {

// Bump when the code generator or compiler settings change in a way the source does not show.
inline constexpr std::uint32_t kCodegenVersion = 2;

struct KernelKey {
  std::string text;    // full canonical text; compared on cache hits, so hash collisions are harmless
  std::uint64_t hash;  // FNV-1a 64 of `text`
  std::string hex() const;  // 16 hex digits
};

std::uint64_t fnv1a64(std::span<const std::byte> bytes, std::uint64_t seed = 14695981039346656037ull);
std::uint64_t fnv1a64(std::string_view text);

KernelKey make_kernel_key(std::string_view source, std::string_view device_identity);

}  // namespace vkfuse
