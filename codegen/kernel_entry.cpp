#include "codegen/kernel_entry.h"

#include <cstring>
#include <string_view>

namespace vkfuse {
namespace {

constexpr char kMagic[8] = {'V', 'K', 'F', 'U', 'S', 'E', 'K', '1'};
constexpr std::uint32_t kFormatVersion = 1;
constexpr std::uint32_t kSpirvMagic = 0x07230203;
constexpr std::uint32_t kOpEntryPoint = 15;
constexpr std::uint32_t kExecutionModelGLCompute = 5;

struct EntryHeader {
  char magic[8];
  std::uint32_t format_version;
  std::uint32_t spirv_words;
  std::uint64_t key_hash;
  std::uint64_t key_size;
  std::uint64_t checksum;  // FNV-1a 64 over key text then SPIR-V bytes
};

std::uint64_t entry_checksum(std::string_view key_text, std::span<const std::uint32_t> words) {
  const std::uint64_t key_part = fnv1a64(std::as_bytes(std::span(key_text.data(), key_text.size())));
  return fnv1a64(std::as_bytes(words), key_part);
}

Status reject(const std::string& why) { return make_error(ErrorCode::kInvalidArgument, why); }

// The literal string at the start of `words` (nul-terminated, packed four bytes a word) when it ends
// inside them.
bool literal_equals(std::span<const std::uint32_t> words, std::string_view text) {
  const std::size_t bytes = words.size() * 4;
  if (text.size() + 1 > bytes) return false;
  std::string packed(bytes, '\0');
  std::memcpy(packed.data(), words.data(), bytes);
  return packed.compare(0, text.size() + 1, std::string(text) + '\0') == 0;
}

}  // namespace

Status check_spirv_structure(std::span<const std::uint32_t> words) {
  if (words.size() < 5) return reject("SPIR-V shorter than its header");
  if (words[0] != kSpirvMagic) return reject("not SPIR-V (no magic number)");
  const std::uint32_t version = words[1];
  if ((version & 0xff0000ffu) != 0 || ((version >> 16) & 0xff) != 1 || ((version >> 8) & 0xff) > 6)
    return reject("SPIR-V of an unknown version");
  if (words[3] == 0) return reject("SPIR-V with an id bound of 0");
  if (words[4] != 0) return reject("SPIR-V with a nonzero schema word");
  bool compute_main = false;
  for (std::size_t at = 5; at < words.size();) {
    const std::uint32_t count = words[at] >> 16, opcode = words[at] & 0xffffu;
    if (count == 0 || count > words.size() - at) return reject("SPIR-V instruction stream damaged");
    if (opcode == kOpEntryPoint && count >= 4 && words[at + 1] == kExecutionModelGLCompute)
      compute_main = compute_main || literal_equals(words.subspan(at + 3, count - 3), "main");
    at += count;
  }
  if (!compute_main) return reject("SPIR-V without a compute entry point 'main'");
  return {};
}

std::vector<std::byte> encode_kernel_entry(const KernelKey& key, std::span<const std::uint32_t> spirv) {
  EntryHeader header{};
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  header.format_version = kFormatVersion;
  header.spirv_words = static_cast<std::uint32_t>(spirv.size());
  header.key_hash = key.hash;
  header.key_size = key.text.size();
  header.checksum = entry_checksum(key.text, spirv);
  std::vector<std::byte> file(sizeof header + key.text.size() + spirv.size_bytes());
  std::memcpy(file.data(), &header, sizeof header);
  std::memcpy(file.data() + sizeof header, key.text.data(), key.text.size());
  if (!spirv.empty()) std::memcpy(file.data() + sizeof header + key.text.size(), spirv.data(), spirv.size_bytes());
  return file;
}

Result<KernelEntry> decode_kernel_entry(std::span<const std::byte> file) {
  EntryHeader header{};
  if (file.size() < sizeof header) return reject("truncated header");
  std::memcpy(&header, file.data(), sizeof header);
  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0) return reject("not a vkfuse kernel entry");
  if (header.format_version != kFormatVersion) return reject("other format version");
  const std::uint64_t body = file.size() - sizeof header;
  if (header.key_size > body) return reject("truncated key");
  if (static_cast<std::uint64_t>(header.spirv_words) * 4 > body - header.key_size) return reject("truncated SPIR-V");
  if (static_cast<std::uint64_t>(header.spirv_words) * 4 < body - header.key_size) return reject("trailing bytes");
  KernelEntry entry;
  entry.key.hash = header.key_hash;
  entry.key.text.assign(reinterpret_cast<const char*>(file.data() + sizeof header), header.key_size);
  entry.spirv.resize(header.spirv_words);
  if (header.spirv_words > 0)
    std::memcpy(entry.spirv.data(), file.data() + sizeof header + header.key_size, entry.spirv.size() * 4);
  if (entry_checksum(entry.key.text, entry.spirv) != header.checksum) return reject("checksum mismatch");
  VKFUSE_TRY(check_spirv_structure(entry.spirv));
  return entry;
}

}  // namespace vkfuse
