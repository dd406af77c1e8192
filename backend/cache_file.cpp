#include "backend/cache_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

namespace vkfuse {
namespace {

std::atomic<CacheWriteFunction> g_write{nullptr};

std::string system_error(const char* step) { return std::string(step) + ": " + std::strerror(errno); }

// Closes the descriptor however the scope is left (errors of close after a failure do not matter).
struct Descriptor {
  int fd = -1;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Result<std::vector<std::byte>> read_cache_file(const std::string& path, std::uint64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever; O_NOFOLLOW: a link at an
  // entry's path is not ours to follow.
  Descriptor file{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)};
  if (file.fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return make_error(ErrorCode::kNotFound, "no file");
    if (errno == ELOOP) return make_error(ErrorCode::kInvalidArgument, "a symbolic link, not a file");
    return make_error(ErrorCode::kIo, system_error("open"));
  }
  struct stat status {};
  if (::fstat(file.fd, &status) != 0) return make_error(ErrorCode::kIo, system_error("fstat"));
  if (!S_ISREG(status.st_mode)) return make_error(ErrorCode::kInvalidArgument, "not a regular file");
  const auto size = static_cast<std::uint64_t>(status.st_size);
  if (size > max_bytes) return make_error(ErrorCode::kInvalidArgument, "implausibly large");
  std::vector<std::byte> bytes(size);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t got = ::read(file.fd, bytes.data() + done, bytes.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return make_error(ErrorCode::kIo, system_error("read"));
    if (got == 0) return make_error(ErrorCode::kInvalidArgument, "truncated while being read");
    done += static_cast<std::size_t>(got);
  }
  return bytes;
}

Status write_cache_file(const std::string& path, std::span<const std::byte> bytes) {
  // Unique per process and call, created exclusively: two writers never share a temporary file.
  static std::atomic<std::uint64_t> counter{0};
  const std::string temp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  Descriptor file{::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)};
  if (file.fd < 0) return make_error(ErrorCode::kIo, system_error(("create " + temp).c_str()));
  auto fail = [&](const std::string& why) {
    if (file.fd >= 0) ::close(file.fd);
    file.fd = -1;
    ::unlink(temp.c_str());
    return make_error(ErrorCode::kIo, why);
  };
  const CacheWriteFunction write = g_write.load() ? g_write.load() : &::write;
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t wrote = write(file.fd, bytes.data() + done, bytes.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote < 0) return fail(system_error("write"));
    if (wrote == 0) return fail("write: no progress after " + std::to_string(done) + " of " +
                                std::to_string(bytes.size()) + " bytes");
    done += static_cast<std::size_t>(wrote);  // a short write: the rest goes in the next call
  }
  // Some file systems report a full disk or a lost server only here.
  if (::fsync(file.fd) != 0) return fail(system_error("fsync"));
  const int closed = ::close(file.fd);
  file.fd = -1;
  if (closed != 0) return fail(system_error("close"));
  if (::rename(temp.c_str(), path.c_str()) != 0) return fail(system_error("rename"));
  return {};
}

void remove_stale_temp_files(const std::string& directory, const std::string& extension) {
  namespace fs = std::filesystem;
  const auto cutoff = fs::file_time_type::clock::now() - std::chrono::hours(1);
  // Matches this version's "<name><extension>.tmp.<pid>.<n>" and older versions' "<extension>.tmp<n>".
  const std::string marker = extension + ".tmp";
  std::error_code error;
  for (fs::directory_iterator it(directory, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.find(marker) == std::string::npos) continue;
    std::error_code ignored;
    if (!it->is_regular_file(ignored) || it->last_write_time(ignored) > cutoff || ignored) continue;
    fs::remove(it->path(), ignored);
  }
}

CacheWriteFunction set_cache_write_function(CacheWriteFunction write) { return g_write.exchange(write); }

}  // namespace vkfuse
