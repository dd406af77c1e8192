#include "codegen/kernel_cache.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "backend/log.h"
#include "codegen/glsl_compiler.h"
#include "codegen/kernel_dump.h"
#include "codegen/spirv_optimizer.h"

namespace vkfuse {
namespace {

// On-disk entry: header, key text, SPIR-V words. Little-endian host layout; the key text and the
// checksum reject entries from other machines or versions rather than trying to read them.
constexpr char kMagic[8] = {'V', 'K', 'F', 'U', 'S', 'E', 'K', '1'};
constexpr std::uint32_t kFormatVersion = 1;
constexpr std::uint32_t kSpirvMagic = 0x07230203;

struct EntryHeader {
  char magic[8];
  std::uint32_t format_version;
  std::uint32_t spirv_words;
  std::uint64_t key_hash;
  std::uint64_t key_size;
  std::uint64_t checksum;  // FNV-1a 64 over key text then SPIR-V bytes
};

std::uint64_t entry_checksum(std::string_view key_text, const std::uint32_t* words, std::size_t count) {
  const std::uint64_t key_part = fnv1a64(std::as_bytes(std::span(key_text.data(), key_text.size())));
  return fnv1a64(std::as_bytes(std::span(words, count)), key_part);
}

}  // namespace

Result<std::unique_ptr<KernelCache>> KernelCache::create(std::string directory) {
  if (!directory.empty()) {
    std::error_code error;
    std::filesystem::create_directories(directory, error);
    if (error || !std::filesystem::is_directory(directory))
      return make_error(ErrorCode::kIo, "kernel cache directory '" + directory + "' cannot be created: " +
                                            error.message() + " (set VKFUSE_CACHE_DIR to a writable folder)");
  }
  return std::unique_ptr<KernelCache>(new KernelCache(std::move(directory)));
}

std::string KernelCache::default_directory() {
  if (const char* env = std::getenv("VKFUSE_CACHE_DIR")) return env;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/vkfuse";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/vkfuse";
  return "";
}

std::string KernelCache::entry_path(const KernelKey& key) const {
  return (std::filesystem::path(directory_) / (key.hex() + ".vkfk")).string();
}

SpirvBlob KernelCache::load_entry(const KernelKey& key, bool& rejected) const {
  const std::string path = entry_path(key);
  std::ifstream file(path, std::ios::binary);
  if (!file) return nullptr;  // a plain miss
  auto reject = [&](const char* why) -> SpirvBlob {
    rejected = true;
    log_message(LogLevel::kInfo, "kernel cache: rebuilding " + path + " (" + why + ")");
    return nullptr;
  };
  EntryHeader header{};
  if (!file.read(reinterpret_cast<char*>(&header), sizeof header)) return reject("truncated header");
  if (std::memcmp(header.magic, kMagic, sizeof kMagic) != 0) return reject("not a vkfuse kernel entry");
  if (header.format_version != kFormatVersion) return reject("other format version");
  if (header.key_hash != key.hash || header.key_size != key.text.size()) return reject("made for another key");
  if (header.spirv_words == 0 || header.spirv_words > (64u << 20)) return reject("implausible size");
  std::string key_text(header.key_size, '\0');
  if (!file.read(key_text.data(), static_cast<std::streamsize>(key_text.size()))) return reject("truncated key");
  if (key_text != key.text) return reject("made for another key (hash collision)");
  std::vector<std::uint32_t> words(header.spirv_words);
  if (!file.read(reinterpret_cast<char*>(words.data()), static_cast<std::streamsize>(words.size() * 4)))
    return reject("truncated SPIR-V");
  if (file.peek() != std::char_traits<char>::eof()) return reject("trailing bytes");
  if (entry_checksum(key_text, words.data(), words.size()) != header.checksum) return reject("checksum mismatch");
  if (words[0] != kSpirvMagic) return reject("not SPIR-V");
  return std::make_shared<const std::vector<std::uint32_t>>(std::move(words));
}

void KernelCache::store_entry(const KernelKey& key, const std::vector<std::uint32_t>& spirv) const {
  EntryHeader header{};
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  header.format_version = kFormatVersion;
  header.spirv_words = static_cast<std::uint32_t>(spirv.size());
  header.key_hash = key.hash;
  header.key_size = key.text.size();
  header.checksum = entry_checksum(key.text, spirv.data(), spirv.size());
  // Write a temporary file and rename it, so a reader never sees a half-written entry.
  const std::string path = entry_path(key);
  const std::string temp = path + ".tmp" + std::to_string(reinterpret_cast<std::uintptr_t>(this));
  {
    std::ofstream file(temp, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(&header), sizeof header);
    file.write(key.text.data(), static_cast<std::streamsize>(key.text.size()));
    file.write(reinterpret_cast<const char*>(spirv.data()), static_cast<std::streamsize>(spirv.size() * 4));
    if (!file) {
      log_message(LogLevel::kWarn, "kernel cache: cannot write " + temp);
      return;
    }
  }
  std::error_code error;
  std::filesystem::rename(temp, path, error);
  if (error) log_message(LogLevel::kWarn, "kernel cache: cannot rename " + temp + ": " + error.message());
}

Result<SpirvBlob> KernelCache::load_or_compile(const KernelKey& key, const std::string& source,
                                               std::string_view label, KernelCacheStats& counted) const {
  bool rejected = false;
  SpirvBlob spirv = directory_.empty() ? nullptr : load_entry(key, rejected);
  counted.disk_rejected += rejected ? 1 : 0;
  if (spirv) {
    ++counted.disk_hits;
    dump_kernel(label, key.hex(), source, *spirv, "disk cache hit\n");
    return spirv;
  }
  ++counted.compiles;
  auto compiled = compile_glsl_compute(source, label);
  if (!compiled.ok()) {
    dump_kernel(label, key.hex(), source, {}, compiled.status().message());
    return compiled.status();
  }
  VKFUSE_ASSIGN_OR_RETURN(auto optimized, optimize_and_validate(compiled.value(), label));
  spirv = std::make_shared<const std::vector<std::uint32_t>>(std::move(optimized));
  if (!directory_.empty()) store_entry(key, *spirv);
  dump_kernel(label, key.hex(), source, *spirv, "compiled\n");
  return spirv;
}

Result<SpirvBlob> KernelCache::get_or_compile(const std::string& source, std::string_view label,
                                              std::string_view device_identity) {
  const KernelKey key = make_kernel_key(source, device_identity);
  {
    std::unique_lock lock(mutex_);
    while (true) {
      if (auto it = memory_.find(key.hash); it != memory_.end() && it->second.first == key.text) {
        ++stats_.memory_hits;
        return it->second.second;
      }
      if (!in_flight_.count(key.hash)) break;
      built_.wait(lock);  // the same kernel (or one whose hash collides) is being built: wait, then look again
    }
    in_flight_.insert(key.hash);
  }
  KernelCacheStats counted;
  Result<SpirvBlob> result = make_error(ErrorCode::kInternal, "kernel cache: no result");
  {
    // Publishes the result and wakes the waiters however this scope is left (before `result` is returned).
    struct Publish {
      KernelCache& cache;
      const KernelKey& key;
      const KernelCacheStats& counted;
      const Result<SpirvBlob>& result;
      ~Publish() {
        {
          std::lock_guard lock(cache.mutex_);
          cache.in_flight_.erase(key.hash);
          if (result.ok()) cache.memory_[key.hash] = {key.text, *result};
          cache.stats_.compiles += counted.compiles;
          cache.stats_.disk_hits += counted.disk_hits;
          cache.stats_.disk_rejected += counted.disk_rejected;
        }
        cache.built_.notify_all();
      }
    } publish{*this, key, counted, result};
    result = load_or_compile(key, source, label, counted);
  }
  return result;
}

KernelCacheStats KernelCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace vkfuse
