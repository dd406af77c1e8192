// Cache files: reads take only regular files and never block on a FIFO; writes check every step, and a
// failed one (a full disk) leaves the old file as it was and no temporary file behind.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include "backend/cache_file.h"
#include "support/full_disk.h"
#include "support/test_env.h"

namespace vkfuse {
namespace {

namespace fs = std::filesystem;

std::vector<std::byte> bytes_of(const std::string& text) {
  std::vector<std::byte> bytes(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) bytes[i] = static_cast<std::byte>(text[i]);
  return bytes;
}

std::string read_text(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

// A disk that fills up part-way: the first call after `g_half_calls = 0` writes half, every later one
// fails with ENOSPC.
int g_half_calls = 0;
ssize_t write_half_then_full(int fd, const void* data, std::size_t size) {
  if (g_half_calls++ == 0) return ::write(fd, data, size / 2);
  errno = ENOSPC;
  return -1;
}

// A file system that takes one byte per call: short writes, all of which must be continued.
ssize_t write_one_byte(int fd, const void* data, std::size_t size) { return ::write(fd, data, size > 0 ? 1 : 0); }

struct ScopedWrite {
  explicit ScopedWrite(CacheWriteFunction write) : old(set_cache_write_function(write)) {}
  ~ScopedWrite() { set_cache_write_function(old); }
  CacheWriteFunction old;
};

}  // namespace

TEST_CASE("a cache file is read back; nothing there is a plain miss") {
  testing::ScratchDir dir("vkfuse_cache_file_test");
  const std::string path = dir.file("entry.vkfk");
  CHECK(read_cache_file(path, 1024).status().code() == ErrorCode::kNotFound);
  REQUIRE(write_cache_file(path, bytes_of("hello")).ok());
  auto read = read_cache_file(path, 1024);
  REQUIRE(read.ok());
  CHECK(*read == bytes_of("hello"));
  CHECK(read_cache_file(path, 4).status().message() == "implausibly large");
  CHECK(testing::temp_file_count(dir.path()) == 0);
}

TEST_CASE("a FIFO, a directory or a symbolic link at a cache file's path is refused at once") {
  testing::ScratchDir dir("vkfuse_cache_file_test");
  const std::string path = dir.file("entry.vkfk");
  std::string why;
  SUBCASE("a FIFO with no writer (an open without O_NONBLOCK waits for one forever)") {
    REQUIRE(::mkfifo(path.c_str(), 0644) == 0);
    why = "not a regular file";
  }
  SUBCASE("a directory") {
    fs::create_directory(path);
    why = "not a regular file";
  }
  SUBCASE("a symbolic link to a good file") {
    REQUIRE(write_cache_file(dir.file("elsewhere"), bytes_of("x")).ok());
    fs::create_symlink(dir.file("elsewhere"), path);
    why = "a symbolic link, not a file";
  }
  auto reading = std::async(std::launch::async, [&] { return read_cache_file(path, 1024); });
  const bool finished = reading.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  CHECK_MESSAGE(finished, "read_cache_file is blocked opening the FIFO");
  if (!finished) ::close(::open(path.c_str(), O_WRONLY | O_NONBLOCK));  // a writer releases the blocked open
  auto read = reading.get();
  REQUIRE_FALSE(read.ok());
  CHECK(read.status().code() == ErrorCode::kInvalidArgument);
  CHECK(read.status().message() == why);
}

TEST_CASE("a write that fails leaves the old file and no temporary file") {
  testing::ScratchDir dir("vkfuse_cache_file_test");
  const std::string path = dir.file("entry.vkpc");
  REQUIRE(write_cache_file(path, bytes_of("old contents")).ok());
  const std::vector<std::byte> update = bytes_of(std::string(10000, 'n'));
  SUBCASE("the disk is full") {
    testing::ScopedFullDisk full;
    const Status status = write_cache_file(path, update);
    REQUIRE_FALSE(status.ok());
    CHECK(status.code() == ErrorCode::kIo);
    CHECK(status.message() == "write: " + std::string(std::strerror(ENOSPC)));
  }
  SUBCASE("the disk fills up part-way") {
    g_half_calls = 0;
    ScopedWrite full(&write_half_then_full);
    const Status status = write_cache_file(path, update);
    REQUIRE_FALSE(status.ok());
    CHECK(status.message() == "write: " + std::string(std::strerror(ENOSPC)));
  }
  SUBCASE("the folder is gone") {
    fs::remove_all(dir.path());
    const Status status = write_cache_file(path, update);
    REQUIRE_FALSE(status.ok());
    CHECK(status.message().rfind("create " + path + ".tmp.", 0) == 0);
    fs::create_directories(dir.path());
    REQUIRE(write_cache_file(path, bytes_of("old contents")).ok());
  }
  CHECK(read_text(path) == "old contents");
  CHECK(testing::temp_file_count(dir.path()) == 0);
}

TEST_CASE("short writes are continued until the whole file is written") {
  testing::ScratchDir dir("vkfuse_cache_file_test");
  const std::string path = dir.file("entry.vkfk");
  ScopedWrite slow(&write_one_byte);
  REQUIRE(write_cache_file(path, bytes_of("twelve bytes")).ok());
  CHECK(read_text(path) == "twelve bytes");
}

TEST_CASE("stale temporary files are removed; recent ones and other files stay") {
  testing::ScratchDir dir("vkfuse_cache_file_test");
  auto touch = [&](const std::string& name, std::chrono::hours age) {
    std::ofstream(dir.path() / name) << "x";
    fs::last_write_time(dir.path() / name, fs::file_time_type::clock::now() - age);
  };
  touch("a.vkfk.tmp.123.0", std::chrono::hours(2));   // a crashed run's
  touch("b.vkfk.tmp140234", std::chrono::hours(2));   // an older version's name
  touch("c.vkfk.tmp.456.1", std::chrono::hours(0));   // a save in progress
  touch("d.vkpc.tmp.123.0", std::chrono::hours(2));   // the other cache's
  touch("e.vkfk", std::chrono::hours(2));             // an entry
  remove_stale_temp_files(dir.path().string(), ".vkfk");
  CHECK_FALSE(fs::exists(dir.path() / "a.vkfk.tmp.123.0"));
  CHECK_FALSE(fs::exists(dir.path() / "b.vkfk.tmp140234"));
  CHECK(fs::exists(dir.path() / "c.vkfk.tmp.456.1"));
  CHECK(fs::exists(dir.path() / "d.vkpc.tmp.123.0"));
  CHECK(fs::exists(dir.path() / "e.vkfk"));
}

}  // namespace vkfuse
