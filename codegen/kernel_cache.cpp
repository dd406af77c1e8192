#include "codegen/kernel_cache.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "backend/cache_file.h"
#include "backend/log.h"
#include "codegen/glsl_compiler.h"
#include "codegen/kernel_entry.h"
#include "codegen/kernel_dump.h"
#include "codegen/spirv_optimizer.h"

namespace vkfuse {

Result<std::unique_ptr<KernelCache>> KernelCache::create(std::string directory) {
  if (!directory.empty()) {
    std::error_code error;
    std::filesystem::create_directories(directory, error);
    std::string problem = error ? error.message() : "";
    if (problem.empty() && !std::filesystem::is_directory(directory, error)) problem = "not a folder";
    if (problem.empty() && ::access(directory.c_str(), W_OK | X_OK) != 0) problem = std::strerror(errno);
    if (!problem.empty()) {
      // A cache is a speed-up: a read-only home or a mistyped VKFUSE_CACHE_DIR must not stop the program.
      log_message(LogLevel::kWarn, "cache folder '" + directory + "' cannot be used (" + problem +
                                       "): caching in memory only (set VKFUSE_CACHE_DIR to a writable folder)");
      directory.clear();
    } else {
      remove_stale_temp_files(directory, ".vkfk");
    }
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
  auto reject = [&](const std::string& why) -> SpirvBlob {
    rejected = true;
    log_message(LogLevel::kInfo, "kernel cache: rebuilding " + path + " (" + why + ")");
    return nullptr;
  };
  auto bytes = read_cache_file(path, kMaxKernelEntryBytes);
  if (!bytes.ok()) return bytes.status().code() == ErrorCode::kNotFound ? nullptr : reject(bytes.status().message());
  auto entry = decode_kernel_entry(*bytes);
  if (!entry.ok()) return reject(entry.status().message());
  if (entry->key.hash != key.hash || entry->key.text != key.text) return reject("made for another key");
  return std::make_shared<const std::vector<std::uint32_t>>(std::move(entry->spirv));
}

void KernelCache::store_entry(const KernelKey& key, const std::vector<std::uint32_t>& spirv) const {
  const std::string path = entry_path(key);
  const Status saved = write_cache_file(path, encode_kernel_entry(key, spirv));
  if (saved.ok()) return;
  // One warning per cache: a full disk would otherwise print one for every kernel.
  const bool first = !store_failed_.exchange(true);
  log_message(first ? LogLevel::kWarn : LogLevel::kInfo,
              "kernel cache: saving " + path + " FAILED (" + saved.message() + "); the kernel stays cached in memory" +
                  (first ? " (further failures are logged at info level)" : ""));
}

Result<SpirvBlob> KernelCache::load_or_compile(const KernelKey& key, const std::string& source,
                                               std::string_view label, bool read_disk, Built& built) const {
  if (read_disk && !directory_.empty()) {
    bool rejected = false;
    SpirvBlob spirv = load_entry(key, rejected);
    built.counted.disk_rejected += rejected ? 1 : 0;
    if (spirv) {
      ++built.counted.disk_hits;
      built.from_disk = true;
      dump_kernel(label, key.hex(), source, *spirv, "disk cache hit\n");
      return spirv;
    }
  }
  ++built.counted.compiles;
  auto compiled = compile_glsl_compute(source, label);
  if (!compiled.ok()) {
    dump_kernel(label, key.hex(), source, {}, compiled.status().message());
    return compiled.status();
  }
  VKFUSE_ASSIGN_OR_RETURN(auto optimized, optimize_and_validate(compiled.value(), label));
  SpirvBlob spirv = std::make_shared<const std::vector<std::uint32_t>>(std::move(optimized));
  if (!directory_.empty()) store_entry(key, *spirv);
  dump_kernel(label, key.hex(), source, *spirv, "compiled\n");
  return spirv;
}

const KernelCache::Entry* KernelCache::find_locked(const KernelKey& key) const {
  const auto it = memory_.find(key.hash);
  return it != memory_.end() && it->second.key_text == key.text ? &it->second : nullptr;
}

Result<SpirvBlob> KernelCache::build(const KernelKey& key, const std::string& source, std::string_view label,
                                     bool read_disk) {
  Built built;
  Result<SpirvBlob> result = make_error(ErrorCode::kInternal, "kernel cache: no result");
  {
    // Publishes the result and wakes the waiters however this scope is left (before `result` is returned).
    struct Publish {
      KernelCache& cache;
      const KernelKey& key;
      const Built& built;
      const Result<SpirvBlob>& result;
      ~Publish() {
        {
          std::lock_guard lock(cache.mutex_);
          cache.in_flight_.erase(key.hash);
          if (result.ok()) cache.memory_[key.hash] = {key.text, *result, built.from_disk};
          cache.stats_.compiles += built.counted.compiles;
          cache.stats_.disk_hits += built.counted.disk_hits;
          cache.stats_.disk_rejected += built.counted.disk_rejected;
        }
        cache.built_.notify_all();
      }
    } publish{*this, key, built, result};
    result = load_or_compile(key, source, label, read_disk, built);
  }
  return result;
}

Result<SpirvBlob> KernelCache::get_or_compile(const std::string& source, std::string_view label,
                                              std::string_view device_identity) {
  const KernelKey key = make_kernel_key(source, device_identity);
  {
    std::unique_lock lock(mutex_);
    while (true) {
      if (const Entry* entry = find_locked(key)) {
        ++stats_.memory_hits;
        return entry->spirv;
      }
      if (!in_flight_.count(key.hash)) break;
      built_.wait(lock);  // the same kernel (or one whose hash collides) is being built: wait, then look again
    }
    in_flight_.insert(key.hash);
  }
  return build(key, source, label, true);
}

Result<SpirvBlob> KernelCache::rebuild_refused(const std::string& source, std::string_view label,
                                               std::string_view device_identity, const SpirvBlob& refused) {
  const KernelKey key = make_kernel_key(source, device_identity);
  {
    std::unique_lock lock(mutex_);
    while (true) {
      const Entry* entry = find_locked(key);
      if (entry && entry->spirv != refused) return entry->spirv;  // another thread rebuilt it already
      if (!in_flight_.count(key.hash)) {
        if (entry && !entry->from_disk) return SpirvBlob{};
        break;
      }
      built_.wait(lock);
    }
    memory_.erase(key.hash);
    in_flight_.insert(key.hash);
    ++stats_.disk_rejected;
  }
  if (!directory_.empty()) {
    const std::string path = entry_path(key);
    log_message(LogLevel::kInfo, "kernel cache: the driver refused the SPIR-V of " + path + "; rebuilding it");
    // Dropped first, so a compile that fails now leaves no entry to be refused again next time.
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
  return build(key, source, label, false);
}

KernelCacheStats KernelCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace vkfuse
