#include "codegen/kernel_key.h"

#include <cstdio>

#include "codegen/glsl_compiler.h"

namespace vkfuse {

std::uint64_t fnv1a64(std::span<const std::byte> bytes, std::uint64_t seed) {
  std::uint64_t hash = seed;
  for (std::byte b : bytes) {
    hash ^= static_cast<std::uint64_t>(b);
    hash *= 1099511628211ull;
  }
  return hash;
}

std::uint64_t fnv1a64(std::string_view text) { return fnv1a64(std::as_bytes(std::span(text.data(), text.size()))); }

std::string KernelKey::hex() const {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(hash));
  return buffer;
}

KernelKey make_kernel_key(std::string_view source, std::string_view device_identity) {
  std::string text = "vkfuse-codegen " + std::to_string(kCodegenVersion) + "\ntarget " + std::string(kSpirvTarget) +
                     "\ndevice " + std::string(device_identity) + "\n" + std::string(source);
  const std::uint64_t hash = fnv1a64(text);
  return {std::move(text), hash};
}

}  // namespace vkfuse
