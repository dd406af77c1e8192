// KernelCache: compiles once, then hits in memory and on disk; never trusts a damaged disk entry;
// keys on the device identity; reports compile errors with the numbered source; is safe to use from
// several threads at once.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "codegen/kernel_cache.h"
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

TEST_CASE("a cache directory that cannot be created is an error naming it") {
  testing::ScratchDir dir("vkfuse_cache_test");
  const fs::path file = dir.path() / "a_file";
  write_bytes(file, "x");
  const std::string wanted = (file / "cache").string();
  auto cache = KernelCache::create(wanted);
  REQUIRE_FALSE(cache.ok());
  CHECK(cache.status().code() == ErrorCode::kIo);
  CHECK(cache.status().message().find("'" + wanted + "'") != std::string::npos);
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
