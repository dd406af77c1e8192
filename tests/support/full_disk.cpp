#include "support/full_disk.h"

#include <fcntl.h>
#include <unistd.h>

namespace vkfuse::testing {
namespace {

ssize_t write_to_full_disk(int, const void* data, std::size_t size) {
  static const int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  return ::write(full, data, size);
}

}  // namespace

ScopedFullDisk::ScopedFullDisk() : old_(set_cache_write_function(&write_to_full_disk)) {}
ScopedFullDisk::~ScopedFullDisk() { set_cache_write_function(old_); }

}  // namespace vkfuse::testing
