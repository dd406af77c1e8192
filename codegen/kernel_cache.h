// KernelCache: source -> optimized, validated SPIR-V, in memory and on disk. A disk entry carries its
// full key text and a checksum (codegen/kernel_entry.h); one that is truncated, corrupt, not a
// well-formed SPIR-V module, made for another key, or not a regular file is rebuilt and overwritten,
// never trusted, and one the driver refuses is rebuilt through rebuild_refused. The disk is a
// speed-up, never a cause of failure: a folder that cannot be used, or a save that fails (a full
// disk), leaves the kernel cached in memory, with a warning. Thread-safe: get_or_compile may run on
// many threads at once; different kernels load and compile in parallel, and a kernel another thread
// is already building is waited for, not built twice.
#pragma once

#include <atomic>
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
  std::uint32_t disk_rejected = 0;  // entries found but not trusted (damaged, other key, not a regular
                                    // file) or refused by the driver
};

class KernelCache {
 public:
  // `directory` empty: memory only. Otherwise it is created if missing, and temporary files that
  // crashed runs left there are removed. A folder that cannot be created or written makes the cache
  // memory only (directory() is then "") with one warning naming it; it is not an error.
  static Result<std::unique_ptr<KernelCache>> create(std::string directory);
  // VKFUSE_CACHE_DIR, else $XDG_CACHE_HOME/vkfuse, else $HOME/.cache/vkfuse, else "" (memory only).
  static std::string default_directory();

  // The SPIR-V of `source`, from memory, disk or a fresh compile. `label` names the group in errors
  // and dumps; `device_identity` separates devices and drivers. A failed compile is not remembered: a
  // caller that waited for it compiles again itself, so its error names its own label.
  Result<SpirvBlob> get_or_compile(const std::string& source, std::string_view label,
                                   std::string_view device_identity);

  // After the driver refused `refused` (what get_or_compile gave for this source and device identity):
  // when it was read from the disk, the entry is dropped, the kernel compiled from `source` once more,
  // the entry written anew and the fresh SPIR-V returned; threads that got the same module share one
  // rebuild. nullptr when `refused` was compiled by this process: the driver's refusal then stands.
  Result<SpirvBlob> rebuild_refused(const std::string& source, std::string_view label,
                                    std::string_view device_identity, const SpirvBlob& refused);

  KernelCacheStats stats() const;
  const std::string& directory() const { return directory_; }

 private:
  struct Entry {
    std::string key_text;
    SpirvBlob spirv;
    bool from_disk = false;  // read from a disk entry (not compiled by this process)
  };
  // What one load or compile adds up to, published under the lock when it ends.
  struct Built {
    KernelCacheStats counted;
    bool from_disk = false;
  };

  explicit KernelCache(std::string directory) : directory_(std::move(directory)) {}
  std::string entry_path(const KernelKey& key) const;
  // Both run without the lock; they touch only the entry's own file.
  SpirvBlob load_entry(const KernelKey& key, bool& rejected) const;
  void store_entry(const KernelKey& key, const std::vector<std::uint32_t>& spirv) const;
  Result<SpirvBlob> load_or_compile(const KernelKey& key, const std::string& source, std::string_view label,
                                    bool read_disk, Built& built) const;
  // Loads or compiles a key this thread has put in in_flight_, then publishes it and wakes the waiters.
  Result<SpirvBlob> build(const KernelKey& key, const std::string& source, std::string_view label, bool read_disk);
  const Entry* find_locked(const KernelKey& key) const;

  std::string directory_;
  mutable std::atomic<bool> store_failed_{false};  // a save failed before: later failures log at info level
  mutable std::mutex mutex_;  // guards the members below; never held while loading or compiling
  std::condition_variable built_;  // signalled whenever a key leaves in_flight_
  std::unordered_map<std::uint64_t, Entry> memory_;  // by key hash
  std::unordered_set<std::uint64_t> in_flight_;  // hashes some thread is loading or compiling
  KernelCacheStats stats_;
};

}  // namespace vkfuse
