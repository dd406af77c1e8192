// External data is read through one descriptor: every check is made on what open() returned, so a
// name swapped after a check (or a second name of the same inode) cannot redirect the read.
#include "host/onnx/external_data.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>

#include "host/checked_math.h"
#include "onnx.pb.h"

namespace vkfuse {
namespace {

namespace fs = std::filesystem;

Status invalid(const std::string& what, const std::string& message) {
  return make_error(ErrorCode::kInvalidArgument, what + ": " + message);
}

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// A non-negative decimal integer (external data offset and length are stored as strings).
bool parse_size(const std::string& text, std::uint64_t& out) {
  if (text.empty() || text.size() > 19) return false;
  out = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return true;
}

// The file's name in base_dir; refused by name when absolute or when it leaves base_dir. The name
// check gives the clearest message; the opened descriptor is checked again below.
Result<fs::path> external_path(const std::string& location, const fs::path& base, const std::string& what) {
  const fs::path relative(location);
  if (relative.is_absolute() || relative.has_root_name() || relative.has_root_directory())
    return invalid(what, "external data location '" + location + "' is an absolute path; it must be relative to the model's folder");
  std::error_code ec;
  const fs::path full = fs::weakly_canonical(base / relative, ec);
  if (ec) return make_error(ErrorCode::kIo, what + ": cannot resolve external data file '" + location + "': " + ec.message());
  const fs::path inside = full.lexically_relative(base);
  if (inside.empty() || *inside.begin() == "..")
    return invalid(what, "external data location '" + location + "' leaves the model's folder '" + base.string() + "'");
  return (base / relative).lexically_normal();
}

const char* file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  return "not a regular file";
}

// Where the descriptor's file really is: /proc/self/fd names the opened file itself; without /proc,
// the canonical path, accepted only when it still names the same inode.
Result<fs::path> opened_path(int fd, const fs::path& path, const struct stat& st, const std::string& what) {
  std::error_code ec;
  fs::path resolved = fs::read_symlink("/proc/self/fd/" + std::to_string(fd), ec);
  if (ec) resolved = fs::canonical(path, ec);
  if (ec) return make_error(ErrorCode::kIo, what + ": cannot resolve external data file '" + path.string() + "': " + ec.message());
  struct stat named {};
  if (::stat(resolved.c_str(), &named) != 0 || named.st_dev != st.st_dev || named.st_ino != st.st_ino)
    return invalid(what, "external data file '" + path.string() + "' changed while it was opened");
  return resolved;
}

// Reads [offset, offset + bytes.size()) with pread, retrying interrupted and partial reads.
Status read_at(int fd, std::uint64_t offset, std::vector<std::byte>& bytes, const std::string& location,
               const std::string& what) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const std::size_t chunk = std::min<std::size_t>(bytes.size() - done, std::size_t{1} << 30);
    const ssize_t got = ::pread(fd, bytes.data() + done, chunk, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      return make_error(ErrorCode::kIo, what + ": reading external data file '" + location + "' failed: " + std::strerror(errno));
    if (got == 0)
      return make_error(ErrorCode::kIo, what + ": external data file '" + location + "' ended after " + std::to_string(done) +
                                            " of " + std::to_string(bytes.size()) + " bytes at offset " + std::to_string(offset));
    done += static_cast<std::size_t>(got);
  }
  return {};
}

}  // namespace

Result<std::vector<std::byte>> read_external_data(const onnx::TensorProto& proto, const std::string& base_dir,
                                                  const std::string& what, std::uint64_t expected) {
  if (base_dir.empty()) return invalid(what, "has external data, which needs the model's folder (none given)");
  std::string location;
  std::uint64_t offset = 0, length = expected;
  bool has_length = false;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset") {
      if (!parse_size(entry.value(), offset)) return invalid(what, "external data offset '" + entry.value() + "' is not a byte count");
    } else if (entry.key() == "length") {
      if (!parse_size(entry.value(), length)) return invalid(what, "external data length '" + entry.value() + "' is not a byte count");
      has_length = true;
    }
  }
  if (location.empty()) return invalid(what, "external data has no 'location'");
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(fs::absolute(base_dir, ec), ec);
  if (ec) return make_error(ErrorCode::kIo, what + ": cannot resolve the folder '" + base_dir + "': " + ec.message());
  VKFUSE_ASSIGN_OR_RETURN(const fs::path path, external_path(location, base, what));

  // O_NONBLOCK: a FIFO opens at once (and is refused below) instead of waiting for a writer.
  const FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    const int error = errno;
    if (error == ENOENT)
      return make_error(ErrorCode::kNotFound, what + ": external data file '" + location + "' (" + path.string() + ") does not exist");
    if (error == ELOOP)
      return invalid(what, "external data file '" + location + "' is a symbolic link; vkfuse reads only regular files inside the model's folder");
    return make_error(ErrorCode::kIo, what + ": external data file '" + location + "' cannot be opened: " + std::strerror(error));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    return make_error(ErrorCode::kIo, what + ": cannot stat external data file '" + location + "': " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return invalid(what, "external data file '" + location + "' is " + file_kind(st.st_mode) + ", not a regular file");
  if (st.st_nlink > 1)
    return invalid(what, "external data file '" + location + "' has " + std::to_string(st.st_nlink) +
                             " hard links; another name may lie outside the model's folder, so only files with one link are read");
  VKFUSE_ASSIGN_OR_RETURN(const fs::path resolved, opened_path(fd.get(), path, st, what));
  const fs::path inside = resolved.lexically_relative(base);
  if (inside.empty() || *inside.begin() == "..")
    return invalid(what, "external data file '" + location + "' is '" + resolved.string() + "', outside the model's folder '" +
                             base.string() + "'");

  if (has_length && length != expected)
    return invalid(what, "external data length " + std::to_string(length) + " in '" + location + "' does not match the " +
                             std::to_string(expected) + " bytes of its shape and type");
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  const std::optional<std::uint64_t> end = checked_add(offset, expected);
  if (!end || *end > file_size || *end > static_cast<std::uint64_t>(std::numeric_limits<off_t>::max()))
    return invalid(what, "external data [offset " + std::to_string(offset) + ", length " + std::to_string(expected) +
                             "] is past the end of '" + location + "' (" + std::to_string(file_size) + " bytes)");
  std::vector<std::byte> bytes(static_cast<std::size_t>(expected));
  VKFUSE_TRY(read_at(fd.get(), offset, bytes, location, what));
  return bytes;
}

}  // namespace vkfuse
