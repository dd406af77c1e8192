// KernelCache: compiles once, then hits in memory and on disk; never trusts a damaged disk entry;
// keys on the device identity; reports compile errors with the numbered source; is safe to use from
// several threads at once.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "backend/cache_file.h"
#include "codegen/kernel_cache.h"
#include "codegen/kernel_entry.h"
#include "support/full_disk.h"
#include "support/log_capture.h"
#include "support/test_env.h"

namespace vkfuse {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSource = R"(#version 450
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer Data { float d[]; } data;
void main() { data.d[gl_GlobalInvocationID.x] *= 2.0; }
)";
constexpr const char* kDevice = "device-a driver-1";

std::unique_ptr<KernelCache> open_cache(const fs::path& directory) {
  auto cache = KernelCache::create(directory.string());
  REQUIRE_MESSAGE(cache.ok(), cache.status().to_string());
  return std::move(cache).value();
}

std::vector<std::uint32_t> get(KernelCache& cache, const std::string& source = kSource,
                               std::string_view device = kDevice) {
  auto spirv = cache.get_or_compile(source, "test group", device);
  REQUIRE_MESSAGE(spirv.ok(), spirv.status().to_string());
  REQUIRE(*spirv);
  return **spirv;
}

// The cache entries (*.vkfk) in `directory`.
std::vector<fs::path> entries(const fs::path& directory) {
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(directory))
    if (entry.path().extension() == ".vkfk") found.push_back(entry.path());
  return found;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

}  // namespace

TEST_CASE("the kernel cache compiles once, then hits in memory and on disk") {
  testing::ScratchDir dir("vkfuse_cache_test");
  auto first = open_cache(dir.path());
  const std::vector<std::uint32_t> spirv = get(*first);
  CHECK(spirv.at(0) == 0x07230203u);  // SPIR-V magic
  CHECK(first->stats().compiles == 1);
  CHECK(first->stats().memory_hits == 0);
  CHECK(entries(dir.path()).size() == 1);

  CHECK(get(*first) == spirv);
  CHECK(first->stats().compiles == 1);
  CHECK(first->stats().memory_hits == 1);

  auto second = open_cache(dir.path());
  CHECK(get(*second) == spirv);
  const KernelCacheStats stats = second->stats();
  CHECK(stats.compiles == 0);
  CHECK(stats.disk_hits == 1);
  CHECK(stats.disk_rejected == 0);
  CHECK(second->directory() == dir.path().string());
}

TEST_CASE("a damaged disk entry is rejected, rebuilt and overwritten") {
  testing::ScratchDir dir("vkfuse_cache_test");
  const std::vector<std::uint32_t> original = get(*open_cache(dir.path()));
  REQUIRE(entries(dir.path()).size() == 1);
  const fs::path entry = entries(dir.path())[0];
  std::string bytes = read_bytes(entry);
  REQUIRE(bytes.size() > 40 + original.size() * 4);  // header, key text, SPIR-V

  SUBCASE("a flipped byte in the middle (the key text)") {
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x20);
  }
  SUBCASE("a flipped byte in the SPIR-V") {
    bytes[bytes.size() - 6] = static_cast<char>(bytes[bytes.size() - 6] ^ 0x01);
  }
  SUBCASE("truncated") {
    bytes.resize(bytes.size() - 4);
  }
  SUBCASE("truncated inside the header") {
    bytes.resize(20);
  }
  SUBCASE("trailing bytes") {
    bytes += "xyz";
  }
  SUBCASE("garbage") {
    bytes = std::string(bytes.size(), 'g');
  }
  write_bytes(entry, bytes);

  auto cache = open_cache(dir.path());
  CHECK(get(*cache) == original);
  CHECK(cache->stats().disk_rejected == 1);
  CHECK(cache->stats().compiles == 1);
  CHECK(cache->stats().disk_hits == 0);

  // The rebuilt entry replaced the damaged one.
  CHECK(entries(dir.path()).size() == 1);
  auto next = open_cache(dir.path());
  CHECK(get(*next) == original);
  CHECK(next->stats().disk_hits == 1);
  CHECK(next->stats().disk_rejected == 0);
}

TEST_CASE("each device identity has its own entry") {
  testing::ScratchDir dir("vkfuse_cache_test");
  auto cache = open_cache(dir.path());
  const auto a = get(*cache, kSource, "device-a");
  const auto b = get(*cache, kSource, "device-b");
  CHECK(a == b);  // same source, same compiler: same code, but not shared between devices
  CHECK(cache->stats().compiles == 2);
  CHECK(cache->stats().memory_hits == 0);
  CHECK(entries(dir.path()).size() == 2);

  const KernelKey ka = make_kernel_key(kSource, "device-a"), kb = make_kernel_key(kSource, "device-b");
  CHECK(ka.hash != kb.hash);
  CHECK(ka.hex().size() == 16);
  CHECK(ka.text.find("device device-a\n") != std::string::npos);
  CHECK(fs::exists(dir.path() / (ka.hex() + ".vkfk")));
  CHECK(fs::exists(dir.path() / (kb.hex() + ".vkfk")));
}

TEST_CASE("a memory-only cache writes no files") {
  auto cache = KernelCache::create("");
  REQUIRE(cache.ok());
  get(**cache);
  get(**cache);
  CHECK((*cache)->stats().compiles == 1);
  CHECK((*cache)->stats().memory_hits == 1);
  CHECK((*cache)->directory().empty());
}

TEST_CASE("a cache folder that cannot be created or written means memory-only caching and one warning") {
  testing::ScratchDir dir("vkfuse_cache_test");
  std::string wanted;
  SUBCASE("a folder under a regular file") {
    const fs::path file = dir.path() / "a_file";
    write_bytes(file, "x");
    wanted = (file / "cache").string();
  }
  SUBCASE("a read-only folder") {
    if (::geteuid() == 0) return;  // root writes anywhere
    wanted = (dir.path() / "read_only").string();
    fs::create_directory(wanted);
    fs::permissions(wanted, fs::perms::owner_read | fs::perms::owner_exec);
  }
  testing::LogCapture log;
  auto cache = KernelCache::create(wanted);
  REQUIRE_MESSAGE(cache.ok(), cache.status().to_string());
  CHECK((*cache)->directory().empty());
  CHECK_MESSAGE(log.count(LogLevel::kWarn) == 1, log.all());
  CHECK(log.count(LogLevel::kWarn, "'" + wanted + "' cannot be used") == 1);
  get(**cache);
  get(**cache);
  CHECK((*cache)->stats().compiles == 1);
  CHECK((*cache)->stats().memory_hits == 1);
  CHECK_MESSAGE(log.count(LogLevel::kWarn) == 1, log.all());
}

TEST_CASE("a compile error carries the label and the numbered source") {
  testing::ScratchDir dir("vkfuse_cache_test");
  auto cache = open_cache(dir.path());
  const std::string broken = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() { undefined_thing = 1; }\n";
  auto result = cache->get_or_compile(broken, "Broken -> Group", kDevice);
  REQUIRE_FALSE(result.ok());
  const std::string& message = result.status().message();
  CHECK(result.status().code() == ErrorCode::kCompile);
  CHECK(message.find("group 'Broken -> Group'") != std::string::npos);
  CHECK(message.find("undefined_thing") != std::string::npos);
  CHECK(message.find("   1 | #version 450\n") != std::string::npos);
  CHECK(message.find("   3 | void main() { undefined_thing = 1; }\n") != std::string::npos);
  CHECK(entries(dir.path()).empty());  // nothing is cached for a failure
}

}  // namespace vkfuse

namespace vkfuse {

TEST_CASE("concurrent get_or_compile: each kernel compiles once, waiters share it, failures name their own group") {
  testing::ScratchDir dir("vkfuse_cache_test");
  auto cache = open_cache(dir.path());
  std::vector<std::string> sources;
  for (const char* factor : {"2.0", "3.0", "5.0"}) {
    std::string source = kSource;
    source.replace(source.find("2.0"), 3, factor);
    sources.push_back(source);
  }
  const std::string broken = "#version 450\nlayout(local_size_x = 1) in;\nvoid main() { undefined_thing = 1; }\n";
  constexpr int kThreads = 4, kRounds = 2;
  std::vector<std::vector<std::vector<std::uint32_t>>> got(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round)
        for (std::size_t i = 0; i < sources.size(); ++i) {  // each thread starts at another source
          auto spirv = cache->get_or_compile(sources[(i + t) % sources.size()], "group", kDevice);
          got[t].push_back(spirv.ok() && *spirv ? **spirv : std::vector<std::uint32_t>{});
        }
      if (t < 2) {
        auto failed = cache->get_or_compile(broken, "Broken " + std::to_string(t), kDevice);
        errors[t] = failed.ok() ? "" : failed.status().message();
      }
    });
  for (std::thread& thread : threads) thread.join();

  const KernelCacheStats stats = cache->stats();
  CHECK(stats.compiles == 3 + 2);  // a failure is not remembered: both threads compiled `broken`
  CHECK(stats.memory_hits == kThreads * kRounds * 3 - 3);
  CHECK(stats.disk_hits == 0);
  CHECK(entries(dir.path()).size() == 3);
  for (int t = 0; t < kThreads; ++t) {
    REQUIRE(got[t].size() == kRounds * sources.size());
    for (std::size_t i = 0; i < got[t].size(); ++i)
      CHECK(got[t][i] == get(*cache, sources[(i % sources.size() + t) % sources.size()]));
  }
  CHECK(errors[0].find("group 'Broken 0'") != std::string::npos);
  CHECK(errors[1].find("group 'Broken 1'") != std::string::npos);
}

}  // namespace vkfuse

namespace vkfuse {

TEST_CASE("a FIFO, a directory or a symbolic link at an entry's path is a rejected entry, never waited on") {
  testing::ScratchDir dir("vkfuse_cache_test");
  const fs::path entry = dir.path() / (make_kernel_key(kSource, kDevice).hex() + ".vkfk");
  bool replaced = true;  // the rebuilt entry takes the path's place
  SUBCASE("a FIFO with no writer") { REQUIRE(::mkfifo(entry.c_str(), 0644) == 0); }
  SUBCASE("a symbolic link to a good entry") {
    const testing::ScratchDir other("vkfuse_cache_test");
    get(*open_cache(other.path()));
    const fs::path good = dir.path() / "good";
    fs::copy_file(entries(other.path()).at(0), good);
    fs::create_symlink(good, entry);
  }
  SUBCASE("a directory") {
    fs::create_directory(entry);
    replaced = false;  // a file cannot be renamed over a directory: the kernel stays in memory
  }
  auto cache = open_cache(dir.path());
  testing::LogCapture log;
  auto loading = std::async(std::launch::async, [&] { return cache->get_or_compile(kSource, "test group", kDevice); });
  const bool finished = loading.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  CHECK_MESSAGE(finished, "get_or_compile is blocked opening the FIFO");
  if (!finished) ::close(::open(entry.c_str(), O_WRONLY | O_NONBLOCK));  // a writer releases the blocked open
  auto spirv = loading.get();
  REQUIRE_MESSAGE(spirv.ok(), spirv.status().to_string());
  CHECK(cache->stats().disk_rejected == 1);
  CHECK(cache->stats().compiles == 1);
  CHECK(cache->stats().disk_hits == 0);
  CHECK(fs::is_regular_file(fs::symlink_status(entry)) == replaced);
  CHECK_MESSAGE(log.count(LogLevel::kWarn) == (replaced ? 0u : 1u), log.all());
  CHECK(testing::temp_file_count(dir.path()) == 0);  // a failed rename removed its file
}

TEST_CASE("an entry with a good checksum but malformed SPIR-V is rejected and rebuilt") {
  testing::ScratchDir dir("vkfuse_cache_test");
  const std::vector<std::uint32_t> original = get(*open_cache(dir.path()));
  const KernelKey key = make_kernel_key(kSource, kDevice);
  std::vector<std::uint32_t> spirv = original;
  std::string why;
  SUBCASE("no magic number") { spirv[0] = 0x03022307, why = "not SPIR-V (no magic number)"; }
  SUBCASE("an unknown version") { spirv[1] = 0x00020000, why = "SPIR-V of an unknown version"; }
  SUBCASE("an id bound of 0") { spirv[3] = 0, why = "SPIR-V with an id bound of 0"; }
  SUBCASE("an instruction running past the end") {
    spirv[5] = (0xffffu << 16) | (spirv[5] & 0xffffu);
    why = "SPIR-V instruction stream damaged";
  }
  SUBCASE("cut after an instruction") {
    spirv.resize(5 + (spirv[5] >> 16));
    why = "SPIR-V without a compute entry point 'main'";
  }
  SUBCASE("only a header") { spirv.resize(4), why = "SPIR-V shorter than its header"; }
  REQUIRE_FALSE(check_spirv_structure(spirv).ok());
  CHECK(check_spirv_structure(spirv).message() == why);
  CHECK(check_spirv_structure(original).ok());
  const std::vector<std::byte> forged = encode_kernel_entry(key, spirv);
  REQUIRE(write_cache_file((dir.path() / (key.hex() + ".vkfk")).string(), forged).ok());

  auto cache = open_cache(dir.path());
  CHECK(get(*cache) == original);
  CHECK(cache->stats().disk_rejected == 1);
  CHECK(cache->stats().compiles == 1);
  auto next = open_cache(dir.path());
  CHECK(get(*next) == original);
  CHECK(next->stats().disk_hits == 1);
}

TEST_CASE("a kernel entry decodes to the key and SPIR-V it was made of") {
  const KernelKey key = make_kernel_key(kSource, kDevice);
  auto cache = KernelCache::create("");
  REQUIRE(cache.ok());
  const std::vector<std::uint32_t> spirv = get(**cache);
  auto decoded = decode_kernel_entry(encode_kernel_entry(key, spirv));
  REQUIRE_MESSAGE(decoded.ok(), decoded.status().to_string());
  CHECK(decoded->key.hash == key.hash);
  CHECK(decoded->key.text == key.text);
  CHECK(decoded->spirv == spirv);
}

TEST_CASE("rebuild_refused compiles a disk entry again once; a module compiled here is not rebuilt") {
  testing::ScratchDir dir("vkfuse_cache_test");
  const std::vector<std::uint32_t> original = get(*open_cache(dir.path()));
  auto cache = open_cache(dir.path());
  auto from_disk = cache->get_or_compile(kSource, "test group", kDevice);
  REQUIRE(from_disk.ok());
  REQUIRE(cache->stats().disk_hits == 1);

  auto rebuilt = cache->rebuild_refused(kSource, "test group", kDevice, *from_disk);
  REQUIRE_MESSAGE(rebuilt.ok(), rebuilt.status().to_string());
  REQUIRE(*rebuilt);
  CHECK(**rebuilt == original);
  CHECK(cache->stats().compiles == 1);
  CHECK(cache->stats().disk_rejected == 1);
  // A second thread that got the same refused module shares the rebuild.
  auto again = cache->rebuild_refused(kSource, "test group", kDevice, *from_disk);
  REQUIRE(again.ok());
  CHECK(*again == *rebuilt);
  CHECK(cache->stats().compiles == 1);
  // What this process compiled is what the compiler makes: a refusal of it stands.
  auto fresh = cache->rebuild_refused(kSource, "test group", kDevice, *rebuilt);
  REQUIRE(fresh.ok());
  CHECK(*fresh == nullptr);
  CHECK(cache->stats().compiles == 1);
  // The entry on disk is the rebuilt one.
  auto next = open_cache(dir.path());
  CHECK(get(*next) == original);
  CHECK(next->stats().disk_hits == 1);
}

TEST_CASE("on a full disk kernels stay in memory, one warning says the save FAILED, no file is left") {
  testing::ScratchDir dir("vkfuse_cache_test");
  auto cache = open_cache(dir.path());
  testing::LogCapture log;
  std::string other = kSource;
  other.replace(other.find("2.0"), 3, "3.0");
  std::vector<std::uint32_t> a, b;
  {
    testing::ScopedFullDisk full;
    a = get(*cache);
    b = get(*cache, other);
  }
  CHECK(a != b);
  CHECK(cache->stats().compiles == 2);
  CHECK(get(*cache) == a);
  CHECK(cache->stats().memory_hits == 1);
  CHECK_MESSAGE(log.count(LogLevel::kWarn) == 1, log.all());
  CHECK(log.count(LogLevel::kWarn, "FAILED (write: " + std::string(std::strerror(ENOSPC)) + ")") == 1);
  CHECK(log.count(LogLevel::kInfo, "FAILED") == 1);  // the second kernel's
  CHECK(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()) == 0);
}

}  // namespace vkfuse
