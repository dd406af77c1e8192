// Cache files: how the kernel cache and the pipeline cache read and write their files. Reading never
// blocks and takes only regular files (a FIFO, device, directory or symbolic link at an entry's path is
// refused, not waited on or followed). Writing goes to a temporary file of its own beside the target,
// checks every write, fsync and close, and renames it over the target; on any failure the temporary file
// is removed, so a reader sees the old file or the whole new one and failed saves leave nothing behind.
// Thread-safe: distinct threads and processes may read and write the same paths at once.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "backend/status.h"

namespace vkfuse {

// The file's bytes. kNotFound: nothing at `path` (a plain cache miss). kInvalidArgument: something is
// there but is not a regular file, or is larger than `max_bytes`. kIo: it cannot be opened or read.
// The messages say why without the path (callers name the entry).
Result<std::vector<std::byte>> read_cache_file(const std::string& path, std::uint64_t max_bytes);

// Replaces `path` with `bytes` through `<path>.tmp.<pid>.<n>`. kIo naming the step that failed and the
// system's reason (e.g. "write: No space left on device"); the temporary file is gone either way.
Status write_cache_file(const std::string& path, std::span<const std::byte> bytes);

// Removes the temporary files that crashed or killed processes left in `directory` for targets whose
// names end in `extension` (".vkfk"): those not modified for an hour, so a save in progress in another
// process is never touched. Best effort: what cannot be removed stays.
void remove_stale_temp_files(const std::string& directory, const std::string& extension);

// Test seam: the write(2) that write_cache_file uses (a test makes it fail as a full disk would).
// Returns the one it replaces; nullptr restores the system's.
using CacheWriteFunction = ssize_t (*)(int fd, const void* data, std::size_t size);
CacheWriteFunction set_cache_write_function(CacheWriteFunction write);

}  // namespace vkfuse
