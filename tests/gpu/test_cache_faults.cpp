// The caches when something is wrong: a kernel entry the driver refuses is compiled again and replaced;
// a cache folder that cannot be made leaves the context working from memory with one warning; a
// pipeline cache save that fails on a full disk says so and leaves no file.
#include <doctest/doctest.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "backend/cache_file.h"
#include "codegen/kernel_entry.h"
#include "host/context_impl.h"
#include "host/demo_models.h"
#include "support/full_disk.h"
#include "support/log_capture.h"
#include "support/test_env.h"

namespace vkfuse::testing {
namespace {

namespace fs = std::filesystem;

Context open_context(const std::string& cache_dir, bool validation = true) {
  ContextOptions options;
  options.validation = validation;
  options.cache_dir = cache_dir;
  auto context = Context::create(options);
  REQUIRE_MESSAGE(context.ok(), context.status().to_string());
  return std::move(context).value();
}

// The giou graph's outputs from a session on `context`.
std::map<std::string, HostTensor> run_giou(const Context& context) {
  auto graph = build_giou_loss_graph(2, 33);
  REQUIRE(graph.ok());
  auto session = Session::create(context, *graph, {});
  REQUIRE_MESSAGE(session.ok(), session.status().to_string());
  auto outputs = session->run(make_giou_inputs(2, 33, 7));
  REQUIRE_MESSAGE(outputs.ok(), outputs.status().to_string());
  return *outputs;
}

// The module with its first capability replaced by a value no SPIR-V version defines: every check of
// the entry passes (sizes, checksum, structure), and the driver refuses the module when it reads it.
std::vector<std::uint32_t> with_unknown_capability(std::vector<std::uint32_t> spirv) {
  constexpr std::uint32_t kOpCapability = 17;
  for (std::size_t at = 5; at < spirv.size(); at += spirv[at] >> 16)
    if ((spirv[at] & 0xffffu) == kOpCapability && (spirv[at] >> 16) == 2) {
      spirv[at + 1] = 0xfff0u;
      return spirv;
    }
  FAIL("no OpCapability in the module");
  return spirv;
}

}  // namespace

TEST_CASE("a kernel entry whose SPIR-V the driver refuses is compiled again and replaced") {
  ScratchDir dir("vkfuse_cache_faults_test");
  std::map<std::string, HostTensor> expected;
  std::uint32_t kernels = 0;
  {
    Context context = open_context(dir.path().string());
    expected = run_giou(context);
    kernels = context.cache_stats().compiles;
    CHECK(context.validation_errors() == 0);
  }
  const std::vector<fs::path> entries = files_with_extension(dir.path(), ".vkfk");
  REQUIRE(entries.size() == kernels);
  for (const fs::path& entry : entries) {
    auto bytes = read_cache_file(entry.string(), kMaxKernelEntryBytes);
    REQUIRE(bytes.ok());
    auto decoded = decode_kernel_entry(*bytes);
    REQUIRE(decoded.ok());
    const std::vector<std::uint32_t> forged = with_unknown_capability(decoded->spirv);
    REQUIRE(check_spirv_structure(forged).ok());
    REQUIRE(write_cache_file(entry.string(), encode_kernel_entry(decoded->key, forged)).ok());
  }
  {
    // The validation layer would report the forged modules (rightly); what is tested is the driver's
    // refusal, so this context runs without it.
    ScopedEnv no_validation("VKFUSE_VALIDATION", "0");
    Context context = open_context(dir.path().string(), false);
    const auto outputs = run_giou(context);
    for (const auto& [name, tensor] : expected) CHECK(outputs.at(name).bytes == tensor.bytes);
    const CacheStats stats = context.cache_stats();
    CHECK(stats.disk_hits == kernels);      // each forged entry passed the checks
    CHECK(stats.disk_rejected == kernels);  // and was refused by the driver
    CHECK(stats.compiles == kernels);       // and compiled again, once
  }
  // The entries were replaced by good ones.
  Context context = open_context(dir.path().string());
  run_giou(context);
  CHECK(context.cache_stats().disk_hits == kernels);
  CHECK(context.cache_stats().disk_rejected == 0);
  CHECK(context.cache_stats().compiles == 0);
  CHECK(context.validation_errors() == 0);
}

TEST_CASE("a cache folder that cannot be created: the context caches in memory, with one warning") {
  ScratchDir dir("vkfuse_cache_faults_test");
  const fs::path file = dir.path() / "a_file";
  std::ofstream(file) << "x";
  const std::string wanted = (file / "cache").string();
  LogCapture log;
  {
    Context context = open_context(wanted);
    CHECK(context.impl()->cache->directory().empty());
    CHECK(context.impl()->pipeline_cache->path().empty());
    run_giou(context);
    CHECK(context.cache_stats().compiles > 0);
    CHECK(context.validation_errors() == 0);
  }
  CHECK_MESSAGE(log.count(LogLevel::kWarn) == 1, log.all());
  CHECK(log.count(LogLevel::kWarn, "'" + wanted + "' cannot be used (" + std::strerror(ENOTDIR) + ")") == 1);
}

TEST_CASE("a pipeline cache save that fails says FAILED, never 'saved', and leaves no file") {
  ScratchDir dir("vkfuse_cache_faults_test");
  Context context = open_context(dir.path().string());
  PipelineCache& cache = *context.impl()->pipeline_cache;
  LogCapture log;
  {
    // Session::create saves the pipeline cache once its pipelines exist; the disk is full.
    ScopedFullDisk full;
    run_giou(context);
  }
  const std::string failed = "pipeline cache: saving " + cache.path() + " FAILED (write: " + std::strerror(ENOSPC) + ")";
  CHECK_MESSAGE(log.count(LogLevel::kWarn, failed) == 1, log.all());
  CHECK_MESSAGE(log.count(LogLevel::kInfo, "saved") == 0, log.all());
  CHECK(files_with_extension(dir.path(), ".vkpc").empty());
  CHECK(temp_file_count(dir.path()) == 0);

  // The next save, with room on the disk, writes what the failed one could not.
  REQUIRE(cache.save().ok());
  CHECK(log.count(LogLevel::kInfo, "pipeline cache: saved ") == 1);
  CHECK(files_with_extension(dir.path(), ".vkpc").size() == 1);
  CHECK(temp_file_count(dir.path()) == 0);
  CHECK(context.validation_errors() == 0);
}

}  // namespace vkfuse::testing
