// Session start-up: the pipeline cache file round-trips through a Context and a damaged or foreign one
// is ignored; compiling on many threads gives the same groups, kernels and outputs as on one, and
// reports its progress.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <vkfuse/onnx.hpp>
#include <vkfuse/tensor_io.hpp>

#include "backend/pipeline_cache.h"
#include "host/context_impl.h"
#include "host/demo_models.h"
#include "support/gpu_context.h"
#include "support/test_env.h"

namespace vkfuse::testing {
namespace {

namespace fs = std::filesystem;

Context open_context(const fs::path& cache_dir) {
  ContextOptions options;
  options.validation = true;
  options.cache_dir = cache_dir.string();
  auto context = Context::create(options);
  REQUIRE_MESSAGE(context.ok(), context.status().to_string());
  return std::move(context).value();
}

std::vector<std::byte> read_bytes(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::vector<char> chars{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  std::vector<std::byte> bytes(chars.size());
  std::transform(chars.begin(), chars.end(), bytes.begin(), [](char c) { return static_cast<std::byte>(c); });
  return bytes;
}

void write_bytes(const fs::path& path, const std::vector<std::byte>& bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// Creates a session of a small graph on a new context over `cache_dir` and returns that context's cache
// stats; the context is gone afterwards (which saves its pipeline cache).
CacheStats start_session(const fs::path& cache_dir) {
  Context context = open_context(cache_dir);
  auto graph = build_giou_loss_graph(2, 33);
  REQUIRE(graph.ok());
  auto session = Session::create(context, *graph, {});
  REQUIRE_MESSAGE(session.ok(), session.status().to_string());
  CHECK(session->create_stats().total_ms > 0.0);
  CHECK(context.validation_errors() == 0);
  return context.cache_stats();
}

}  // namespace

TEST_CASE("the pipeline cache file round-trips; a damaged or foreign one is ignored and replaced") {
  ScratchDir dir("vkfuse_pipeline_cache_test");
  const CacheStats first = start_session(dir.path());
  CHECK(first.pipeline_cache_loaded_bytes == 0);
  CHECK_FALSE(first.pipeline_cache_rejected);
  const std::vector<fs::path> files = files_with_extension(dir.path(), ".vkpc");
  REQUIRE(files.size() == 1);  // one per device and driver, beside the kernels
  CHECK(files[0].filename().string().rfind("pipelines-", 0) == 0);
  const std::vector<std::byte> good = read_bytes(files[0]);
  REQUIRE(good.size() >= 24 + 32);  // vkfuse's header and at least the driver's

  const CacheStats second = start_session(dir.path());
  CHECK(second.pipeline_cache_loaded_bytes == good.size() - 24);
  CHECK_FALSE(second.pipeline_cache_rejected);
  CHECK(second.pipeline_cache_create_ms > 0.0);  // timed (vkfuse startup reports it within the context)

  std::vector<std::byte> bad = good;
  SUBCASE("a flipped byte") { bad[bad.size() - 1] ^= std::byte{0x01}; }
  SUBCASE("truncated") { bad.resize(bad.size() - 3); }
  SUBCASE("made for another driver") {
    // An intact file whose driver header names another pipelineCacheUUID.
    std::vector<std::byte> data(good.begin() + 24, good.end());
    data[16] ^= std::byte{0xff};
    bad = encode_pipeline_cache_file(data);
  }
  write_bytes(files[0], bad);
  const CacheStats rejected = start_session(dir.path());
  CHECK(rejected.pipeline_cache_rejected);
  CHECK(rejected.pipeline_cache_loaded_bytes == 0);
  // The session worked without it and wrote a good file in its place.
  const CacheStats after = start_session(dir.path());
  CHECK_FALSE(after.pipeline_cache_rejected);
  CHECK(after.pipeline_cache_loaded_bytes == good.size() - 24);
}

TEST_CASE("a memory-only context has a pipeline cache but writes no file") {
  ContextOptions options;
  options.validation = true;
  options.cache_dir = "";
  auto context = Context::create(options);
  REQUIRE(context.ok());
  CHECK(context->impl()->pipeline_cache->handle() != VK_NULL_HANDLE);
  CHECK(context->impl()->pipeline_cache->path().empty());
  CHECK(context->impl()->pipeline_cache->save().ok());
  CHECK(context->cache_stats().pipeline_cache_loaded_bytes == 0);
}

TEST_CASE("compiling on many threads gives the same groups, kernels and outputs as on one") {
  const std::string model_dir = std::string(VKFUSE_TEST_DATA_DIR) + "/models/tiny_cnn";
  auto graph = load_onnx(model_dir + "/model.onnx", {});
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  auto input = read_tensor_file(model_dir + "/input.npy");
  REQUIRE(input.ok());

  struct Compiled {
    std::vector<std::string> labels;
    std::map<std::string, std::vector<std::byte>> kernels;  // the kernel cache's entries, by file name
    std::vector<std::byte> output;
    unsigned threads = 0;
    std::vector<std::size_t> progress;  // `done` of each progress call, in call order
    std::set<std::size_t> totals;
    std::set<std::string> stages;
  };
  auto compile = [&](const char* threads) {
    ScopedEnv env("VKFUSE_COMPILE_THREADS", threads);
    ScratchDir dir("vkfuse_compile_threads_test");
    Compiled result;
    Context context = open_context(dir.path());
    SessionOptions options;
    options.progress = [&](std::string_view stage, std::size_t done, std::size_t total) {
      result.progress.push_back(done);
      result.totals.insert(total);
      result.stages.insert(std::string(stage));
    };
    auto session = Session::create(context, *graph, options);
    REQUIRE_MESSAGE(session.ok(), session.status().to_string());
    for (const GroupInfo& group : session->groups()) result.labels.push_back(group.label);
    result.threads = session->create_stats().compile_threads;
    CHECK(session->create_stats().constants_ms > 0.0);  // the weights went up beside the compiles
    auto outputs = session->run({{"input", *input}});
    REQUIRE_MESSAGE(outputs.ok(), outputs.status().to_string());
    result.output = outputs->at("output").bytes;
    for (const fs::path& entry : files_with_extension(dir.path(), ".vkfk"))
      result.kernels[entry.filename().string()] = read_bytes(entry);
    CHECK(context.cache_stats().compiles == result.kernels.size());
    CHECK(context.validation_errors() == 0);
    return result;
  };
  const Compiled one = compile("1");
  const Compiled many = compile("4");
  CHECK(one.threads == 1);
  CHECK(many.threads == 4);
  REQUIRE(one.labels.size() > 4);  // enough groups for the threads to interleave
  CHECK(many.labels == one.labels);
  CHECK(many.kernels.size() == one.kernels.size());
  CHECK(many.kernels == one.kernels);  // same keys, same SPIR-V, byte for byte
  CHECK(many.output == one.output);
  // SessionOptions::progress: one call per group, counting up, one call at a time even on 4 threads.
  for (const Compiled* c : {&one, &many}) {
    std::vector<std::size_t> counting(c->labels.size());
    for (std::size_t i = 0; i < counting.size(); ++i) counting[i] = i + 1;
    CHECK(c->progress == counting);
    CHECK(c->totals == std::set<std::size_t>{c->labels.size()});
    CHECK(c->stages == std::set<std::string>{"kernels"});
  }
}

}  // namespace vkfuse::testing
