// The kernel cache's file format: one file per kernel holding a header (magic, format version, SPIR-V
// word count, key hash and size, checksum), the key's full text and the SPIR-V words, in the host's byte
// order. Decoding trusts nothing: sizes, checksum and the SPIR-V module's structure are checked, so what
// it returns is a well-formed module (the driver may still refuse it; the cache then rebuilds it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "backend/status.h"
#include "codegen/kernel_key.h"

namespace vkfuse {

// The largest entry decode_kernel_entry takes; a larger file is damage.
inline constexpr std::uint64_t kMaxKernelEntryBytes = std::uint64_t{256} << 20;

struct KernelEntry {
  KernelKey key;                     // as recorded: the caller compares it with the key it wants
  std::vector<std::uint32_t> spirv;  // a structurally valid SPIR-V module
};

std::vector<std::byte> encode_kernel_entry(const KernelKey& key, std::span<const std::uint32_t> spirv);
// kInvalidArgument saying why: truncated, not a vkfuse kernel entry, other format version, trailing
// bytes, checksum mismatch, or the SPIR-V check's reason.
Result<KernelEntry> decode_kernel_entry(std::span<const std::byte> file);

// The cheap checks a module must pass before it reaches a driver: the magic number 0x07230203, a SPIR-V
// 1.x version, an id bound and a zero schema word, and an instruction stream whose word counts end
// exactly at the end of the module. kInvalidArgument saying which failed.
Status check_spirv_structure(std::span<const std::uint32_t> words);

}  // namespace vkfuse
