// KernelCache: source -> optimized, validated SPIR-V, in memory and on disk. A disk entry carries its
// full key text and a checksum; one that is truncated, corrupt or made for another key is rebuilt and
// overwritten, never trusted. Thread-safe: get_or_compile may run on many threads at once; different
// kernels load and compile in parallel, and a kernel another thread is already building is waited for,
// not built twice.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <vkfuse/status.hpp>

#include "codegen/kernel_key.h"

namespace vkfuse {

using SpirvBlob = std::shared_ptr<const std::vector<std::uint32_t>>;

struct KernelCacheStats {
  std::uint32_t compiles = 0;       // glslang + spirv-opt + spirv-val runs
  std::uint32_t memory_hits = 0;
  std::uint32_t disk_hits = 0;
  std::uint32_t disk_rejected = 0;  // entries found but not trusted (corrupt, truncated, other key)
};

class KernelCache {
 public:
  // `directory` empty: memory only. Otherwise it is created if missing; a directory that cannot be
  // created is an error naming it.
  static Result<std::unique_ptr<KernelCache>> create(std::string directory);
  // VKFUSE_CACHE_DIR, else $XDG_CACHE_HOME/vkfuse, else $HOME/.cache/vkfuse, else "" (memory only).
  static std::string default_directory();

  // The SPIR-V of `source`, from memory, disk or a fresh compile. `label` names the group in errors
  // and dumps; `device_identity` separates devices and drivers. A failed compile is not remembered: a
  // caller that waited for it compiles again itself, so its error names its own label.
  Result<SpirvBlob> get_or_compile(const std::string& source, std::string_view label,
                                   std::string_view device_identity);

  KernelCacheStats stats() const;
  const std::string& directory() const { return directory_; }

 private:
  explicit KernelCache(std::string directory) : directory_(std::move(directory)) {}
  std::string entry_path(const KernelKey& key) const;
  // Both run without the lock; they touch only the entry's own file.
  SpirvBlob load_entry(const KernelKey& key, bool& rejected) const;
  void store_entry(const KernelKey& key, const std::vector<std::uint32_t>& spirv) const;
  Result<SpirvBlob> load_or_compile(const KernelKey& key, const std::string& source, std::string_view label,
                                    KernelCacheStats& counted) const;

  std::string directory_;
  mutable std::mutex mutex_;  // guards the members below; never held while loading or compiling
  std::condition_variable built_;  // signalled whenever a key leaves in_flight_
  std::unordered_map<std::uint64_t, std::pair<std::string, SpirvBlob>> memory_;  // hash -> (key text, spirv)
  std::unordered_set<std::uint64_t> in_flight_;  // hashes some thread is loading or compiling
  KernelCacheStats stats_;
};

}  // namespace vkfuse
