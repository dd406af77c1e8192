// A full disk for one scope: the caches' file writes (backend/cache_file.h) fail with ENOSPC, as on a
// disk with no room left, by writing to /dev/full. Not for tests running on several threads at once.
#pragma once

#include "backend/cache_file.h"

namespace vkfuse::testing {

class ScopedFullDisk {
 public:
  ScopedFullDisk();
  ~ScopedFullDisk();
  ScopedFullDisk(const ScopedFullDisk&) = delete;
  ScopedFullDisk& operator=(const ScopedFullDisk&) = delete;

 private:
  CacheWriteFunction old_;
};

}  // namespace vkfuse::testing
