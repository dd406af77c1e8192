// vkfuse startup: how long it takes to get from a model file to a ready Session, cold and warm, in one
// process. Cold: vkfuse's kernel and pipeline caches in a fresh, empty directory and the driver's own
// shader cache pointed at a fresh one too, then a new Context and Session. Warm: a second new Context and
// Session on the same, now filled, directories. Each is broken down by phase (Session::create_stats).
#include <stdlib.h>  // mkdtemp, setenv (POSIX)

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <memory>
#include <string>
#include <system_error>

#include <vkfuse/onnx.hpp>
#include <vkfuse/vkfuse.hpp>

#include "commands.h"

namespace vkfuse::cli {
namespace {

constexpr const char* kAbout =
    "Times loading the model, then a cold start (empty caches in a fresh temporary directory, the "
    "driver's shader cache moved to a fresh directory too) and a warm start (the same directories, now "
    "filled): context creation and Session::create by phase. VKFUSE_COMPILE_THREADS sets the compile "
    "threads (default: one per core).";

struct StartupFlags {
  ModelFlags model;
  bool json = false;
};

// The driver caches that would make a "cold" start warm: NVIDIA's shader disk cache and Mesa's. They are
// read when the driver loads, so they are set before the first Vulkan call.
constexpr const char* kDriverCacheVariables[] = {"__GL_SHADER_DISK_CACHE_PATH", "MESA_SHADER_CACHE_DIR"};

// A fresh directory under the system temp directory, removed with everything in it at scope exit.
class TempDirectory {
 public:
  static Result<TempDirectory> create() {
    std::error_code error;
    std::string pattern = (std::filesystem::temp_directory_path(error) / "vkfuse-startup-XXXXXX").string();
    if (error || mkdtemp(pattern.data()) == nullptr)
      return make_error(ErrorCode::kIo, "cannot create a temporary directory from " + pattern);
    return TempDirectory(pattern);
  }
  TempDirectory(TempDirectory&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TempDirectory(const TempDirectory&) = delete;
  TempDirectory& operator=(const TempDirectory&) = delete;
  TempDirectory& operator=(TempDirectory&&) = delete;
  ~TempDirectory() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  explicit TempDirectory(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

struct Start {
  double context_ms = 0.0;
  SessionCreateStats session;
  CacheStats caches;  // of the context, after the session
  std::size_t dispatches = 0;
};

// A new Context on `cache_dir` and a Session of `graph`, timed; both are gone when this returns (the
// context's destruction saves its pipeline cache, which the next start reads).
Result<Start> start(const Graph& graph, const std::string& cache_dir, DeviceSummary* device) {
  Start result;
  const auto begin = std::chrono::steady_clock::now();
  ContextOptions options;
  options.cache_dir = cache_dir;
  auto context = Context::create(options);
  if (!context.ok()) return context.status().with_context("Context::create");
  result.context_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
  auto session = Session::create(*context, graph, SessionOptions{});
  if (!session.ok()) return session.status().with_context("Session::create");
  result.session = session->create_stats();
  result.caches = context->cache_stats();
  result.dispatches = session->dispatch_count();
  *device = context->device();
  if (const std::uint32_t errors = context->validation_errors(); errors > 0)
    return make_error(ErrorCode::kVulkan, std::to_string(errors) + " Vulkan validation errors (see above)");
  return result;
}

double total_ms(const Start& s) { return s.context_ms + s.session.total_ms; }

void print_json(const char* name, const Start& s) {
  const SessionCreateStats& t = s.session;
  std::printf(" \"%s\": {\"context_ms\": %.3f, \"plan_ms\": %.3f, \"kernels_ms\": %.3f, \"build_ms\": %.3f, "
              "\"compile_ms\": %.3f, \"pipelines_ms\": %.3f, \"cache_save_ms\": %.3f, \"constants_ms\": %.3f, \"memory_ms\": %.3f, "
              "\"record_ms\": %.3f, \"session_ms\": %.3f, \"total_ms\": %.3f, \"kernel_compiles\": %u, "
              "\"kernel_disk_hits\": %u, \"kernel_memory_hits\": %u, \"pipeline_cache_loaded_bytes\": %llu, "
              "\"pipeline_cache_create_ms\": %.3f}",
              name, s.context_ms, t.plan_ms, t.kernels_ms, t.build_ms, t.compile_ms, t.pipelines_ms, t.cache_save_ms,
              t.constants_ms, t.memory_ms, t.record_ms, t.total_ms, total_ms(s), s.caches.compiles, s.caches.disk_hits,
              s.caches.memory_hits, static_cast<unsigned long long>(s.caches.pipeline_cache_loaded_bytes),
              s.caches.pipeline_cache_create_ms);
}

int run_startup(const StartupFlags& flags) {
  auto fail = [](const Status& status) {
    std::fprintf(stderr, "vkfuse startup: %s\n", status.to_string().c_str());
    return 1;
  };
  const std::string& model = flags.model.path;
  const int batch = flags.model.batch.value_or(1);
  auto temp = TempDirectory::create();
  if (!temp.ok()) return fail(temp.status());
  const std::string cache_dir = temp->path() + "/vkfuse";
  const std::string driver_cache_dir = temp->path() + "/driver";
  std::error_code error;
  std::filesystem::create_directories(driver_cache_dir, error);
  if (error) return fail(make_error(ErrorCode::kIo, "cannot create " + driver_cache_dir + ": " + error.message()));
  for (const char* variable : kDriverCacheVariables) setenv(variable, driver_cache_dir.c_str(), 1);

  auto loaded = load_model(flags.model);
  if (!loaded.ok()) return fail(loaded.status());
  const Graph& graph = loaded->graph;

  DeviceSummary device;
  auto cold = start(graph, cache_dir, &device);
  if (!cold.ok()) return fail(cold.status().with_context("cold start"));
  auto warm = start(graph, cache_dir, &device);
  if (!warm.ok()) return fail(warm.status().with_context("warm start"));

  if (flags.json) {
    std::printf("{\"model\": \"%s\", \"device\": \"%s\", \"driver\": \"%s\", \"batch\": %d, \"onnx_ops\": %zu, "
                "\"dispatches\": %zu, \"compile_threads\": %u, \"load_ms\": %.3f, \"driver_cache_env\": [",
                json_escape(model).c_str(), json_escape(device.name).c_str(), json_escape(device.driver).c_str(),
                batch, graph.source_op_count(), cold->dispatches, cold->session.compile_threads, loaded->load_ms);
    for (std::size_t i = 0; i < std::size(kDriverCacheVariables); ++i)
      std::printf("%s\"%s\"", i ? ", " : "", kDriverCacheVariables[i]);
    std::printf("],");
    print_json("cold", *cold);
    std::printf(",");
    print_json("warm", *warm);
    std::printf("}\n");
    return 0;
  }

  std::printf("device:  %s (%s, Vulkan %s)\n", device.name.c_str(), device.driver.c_str(), device.api_version.c_str());
  std::printf("model:   %s, batch %d, %zu ONNX ops -> %zu dispatches (loaded in %.1f ms)\n", model.c_str(), batch,
              graph.source_op_count(), cold->dispatches, loaded->load_ms);
  std::printf("caches:  cold = empty vkfuse kernel and pipeline caches in a fresh temporary directory, and the\n"
              "         driver's shader cache moved to a fresh directory (__GL_SHADER_DISK_CACHE_PATH,\n"
              "         MESA_SHADER_CACHE_DIR); warm = a new Context and Session on the same directories, in\n"
              "         this process (the driver library is already loaded)\n");
  std::printf("threads: %u compile threads (VKFUSE_COMPILE_THREADS to change)\n\n", cold->session.compile_threads);
  std::printf("  %-30s %10s %10s\n", "phase (ms)", "cold", "warm");
  auto row = [](const char* name, double a, double b) { std::printf("  %-30s %10.1f %10.1f\n", name, a, b); };
  const SessionCreateStats& c = cold->session;
  const SessionCreateStats& w = warm->session;
  row("context", cold->context_ms, warm->context_ms);
  row("  instance, device, the rest", cold->context_ms - cold->caches.pipeline_cache_create_ms,
      warm->context_ms - warm->caches.pipeline_cache_create_ms);
  row("  pipeline cache (read)", cold->caches.pipeline_cache_create_ms, warm->caches.pipeline_cache_create_ms);
  row("plan", c.plan_ms, w.plan_ms);
  row("kernels + pipelines (wall)", c.kernels_ms, w.kernels_ms);
  row("  constants (beside them)", c.constants_ms, w.constants_ms);
  row("  build (summed over threads)", c.build_ms, w.build_ms);
  row("  compile (summed)", c.compile_ms, w.compile_ms);
  row("  pipelines (summed)", c.pipelines_ms, w.pipelines_ms);
  row("pipeline cache save", c.cache_save_ms, w.cache_save_ms);
  row("memory (after them)", c.memory_ms, w.memory_ms);
  row("record", c.record_ms, w.record_ms);
  row("session total", c.total_ms, w.total_ms);
  row("context + session", total_ms(*cold), total_ms(*warm));
  std::printf("\n  kernels: cold %u compiled, %u from disk; warm %u compiled, %u from disk\n", cold->caches.compiles,
              cold->caches.disk_hits, warm->caches.compiles, warm->caches.disk_hits);
  std::printf("  pipeline cache: cold loaded %s, warm loaded %s\n",
              format_bytes(cold->caches.pipeline_cache_loaded_bytes).c_str(),
              format_bytes(warm->caches.pipeline_cache_loaded_bytes).c_str());
  return 0;
}

}  // namespace

Command add_startup(CLI::App& root) {
  auto flags = std::make_shared<StartupFlags>();
  CLI::App* app = root.add_subcommand("startup", "times creating a session, cold and warm, by phase");
  app->footer(kAbout);
  add_model_flags(*app, flags->model, WithPrecision::kNo);
  app->add_flag("--json", flags->json, "one JSON object instead of the table");
  return {app, [flags] { return run_startup(*flags); }};
}

}  // namespace vkfuse::cli
