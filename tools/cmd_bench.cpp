// vkfuse bench: the FusionBench report for one ONNX model. The same model and inputs run fused and
// unfused in one process: dispatch counts, median GPU time of each (the recorded dispatches replayed
// back to back, no transfers), their ratio, intermediate memory, the slowest fused groups, and the
// time to load the model and to create each session (plan, compile or cache hit, pipelines).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>

#include <vkfuse/onnx.hpp>
#include <vkfuse/vkfuse.hpp>

#include "commands.h"
#include "progress.h"
#include "host/device_fit.h"
#include "host/graph.h"

namespace vkfuse::cli {
namespace {

struct BenchFlags {
  ModelFlags model;
  int repeats = 7, iterations = 10, top = 10;
  bool json = false;
  ProgressFlags progress;
};

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Seeded uniform [-1, 1) floats for every f32 input.
Result<std::map<std::string, HostTensor>> random_inputs(const GraphIR& ir) {
  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::map<std::string, HostTensor> inputs;
  for (ValueId v : ir.inputs) {
    const Value& value = ir.value(v);
    if (value.dtype != DType::kF32)
      return make_error(ErrorCode::kUnsupported, "input '" + value.name + "' is " + dtype_name(value.dtype) +
                                                     "; vkfuse bench generates f32 inputs only");
    std::vector<float> data(static_cast<std::size_t>(shape_numel(value.shape)));
    for (float& x : data) x = uniform(rng);
    inputs.emplace(value.name, HostTensor::from_floats(value.shape, data));
  }
  return inputs;
}

struct ModeResult {
  std::size_t dispatches = 0;
  std::size_t barriers = 0;    // between the dispatches
  double create_ms = 0.0;      // Session::create: plan, kernels (compiled or cached), pipelines, memory
  double median_ms = 0.0;      // GPU time per graph replay
  double min_ms = 0.0, max_ms = 0.0;
  std::uint64_t intermediate_bytes = 0;
  std::vector<GroupInfo> groups;  // per-group GPU time of one profiled run after warm-up
  std::vector<double> samples;
};

struct Mode {
  Session session;
  ModeResult result;
  int iterations = 1;  // replays per measurement
};

Result<Mode> open_mode(const Context& context, const Graph& graph, bool fusion,
                       const std::map<std::string, HostTensor>& inputs, Progress& progress) {
  const auto start = Clock::now();
  progress.begin(std::string("compiling ") + (fusion ? "fused" : "unfused") + " kernels");
  SessionOptions options{.fusion = fusion, .profile = true};
  options.progress = progress.session_callback();
  VKFUSE_ASSIGN_OR_RETURN(Session session, Session::create(context, graph, options));
  progress.end(std::string("compiled ") + std::to_string(session.groups().size()) + (fusion ? " fused" : " unfused") +
               " kernels");
  Mode mode{std::move(session), {}, 1};
  mode.result.create_ms = ms_since(start);
  VKFUSE_TRY(mode.session.run(inputs).status());
  mode.result.dispatches = mode.session.dispatch_count();
  mode.result.barriers = mode.session.barrier_count();
  mode.result.intermediate_bytes = mode.session.arena_bytes();
  return mode;
}

// Fused and unfused are measured interleaved after a common warm-up, so clock ramps and thermal drift
// hit both alike. Each measurement replays the graph at least `min_iterations` times and for at least
// about 20 ms of GPU time.
Status measure(std::vector<Mode*> modes, const std::map<std::string, HostTensor>& inputs, int repeats,
               int min_iterations) {
  const auto warm_start = Clock::now();
  for (int round = 0; round < 3 || (ms_since(warm_start) < 500.0 && round < 100); ++round)
    for (Mode* mode : modes) {
      VKFUSE_ASSIGN_OR_RETURN(double ms, mode->session.measure_gpu_ms(mode->iterations));
      mode->iterations = std::max(min_iterations, static_cast<int>(20.0 / std::max(ms, 1e-3)) + 1);
    }
  for (int r = 0; r < repeats; ++r)
    for (Mode* mode : modes) {
      VKFUSE_ASSIGN_OR_RETURN(double ms, mode->session.measure_gpu_ms(mode->iterations));
      mode->result.samples.push_back(ms);
    }
  for (Mode* mode : modes) {
    std::vector<double>& s = mode->result.samples;
    std::sort(s.begin(), s.end());
    mode->result.median_ms = s[s.size() / 2];
    mode->result.min_ms = s.front();
    mode->result.max_ms = s.back();
    VKFUSE_TRY(mode->session.run(inputs).status());  // the profiled run, at working clocks
    mode->result.groups = mode->session.groups();
  }
  return {};
}

// The `count` slowest groups, with their indices in execution order (VKFUSE_LOG=debug names each
// index's kernel root and blocking).
std::vector<std::pair<std::size_t, GroupInfo>> slowest(const std::vector<GroupInfo>& groups, std::size_t count) {
  std::vector<std::pair<std::size_t, GroupInfo>> indexed;
  for (std::size_t i = 0; i < groups.size(); ++i) indexed.push_back({i, groups[i]});
  std::stable_sort(indexed.begin(), indexed.end(), [](const auto& a, const auto& b) { return a.second.gpu_ms > b.second.gpu_ms; });
  if (indexed.size() > count) indexed.resize(count);
  return indexed;
}

int run_bench(const BenchFlags& flags) {
  auto fail = [](const Status& status) {
    std::fprintf(stderr, "vkfuse bench: %s\n", status.to_string().c_str());
    return 1;
  };
  const std::string& model = flags.model.path;
  const std::string precision = flags.model.precision;
  const int batch = flags.model.batch.value_or(1);
  Progress progress(flags.progress.level());
  progress.begin("importing " + model);
  auto loaded = load_model(flags.model);
  if (!loaded.ok()) return fail(loaded.status());
  progress.end("imported " + model);
  const Graph* graph = &loaded->graph;
  const double load_ms = loaded->load_ms;
  auto context = Context::create({});
  if (!context.ok()) return fail(context.status());
  // Before the inputs are made: a tensor the device cannot hold would otherwise cost their whole size.
  if (Status fits = check_graph_fits(graph_ir(*graph), context->device()); !fits.ok())
    return fail(flags.model.batch ? fits.with_context("with --batch " + std::to_string(batch)) : fits);
  progress.begin("generating random inputs");
  auto inputs = random_inputs(graph_ir(*graph));
  progress.end();
  if (!inputs.ok()) return fail(inputs.status());
  auto fused_mode = open_mode(*context, *graph, true, *inputs, progress);
  if (!fused_mode.ok()) return fail(fused_mode.status().with_context("fused"));
  auto unfused_mode = open_mode(*context, *graph, false, *inputs, progress);
  if (!unfused_mode.ok()) return fail(unfused_mode.status().with_context("unfused"));
  progress.begin("measuring fused and unfused");
  if (Status s = measure({&*fused_mode, &*unfused_mode}, *inputs, flags.repeats, flags.iterations); !s.ok()) return fail(s);
  progress.end("measured fused and unfused");
  const ModeResult* fused = &fused_mode->result;
  const ModeResult* unfused = &unfused_mode->result;
  const DeviceSummary device = context->device();
  const double speedup = fused->median_ms > 0.0 ? unfused->median_ms / fused->median_ms : 0.0;
  const auto top = slowest(fused->groups, static_cast<std::size_t>(flags.top));

  if (flags.json) {
    std::printf("{\"model\": \"%s\", \"device\": \"%s\", \"driver\": \"%s\", \"precision\": \"%s\", \"batch\": %d,",
                json_escape(model).c_str(), json_escape(device.name).c_str(), json_escape(device.driver).c_str(),
                precision.c_str(), batch);
    std::printf(" \"onnx_ops\": %zu, \"load_ms\": %.3f,", graph->source_op_count(), load_ms);
    for (const auto& [name, r] : {std::pair<const char*, const ModeResult*>{"fused", fused}, {"unfused", unfused}})
      std::printf(" \"%s\": {\"dispatches\": %zu, \"barriers\": %zu, \"session_create_ms\": %.3f, \"gpu_ms_median\": %.6f, \"gpu_ms_min\": %.6f, "
                  "\"gpu_ms_max\": %.6f, \"intermediate_bytes\": %llu},",
                  name, r->dispatches, r->barriers, r->create_ms, r->median_ms, r->min_ms, r->max_ms,
                  static_cast<unsigned long long>(r->intermediate_bytes));
    std::printf(" \"speedup\": %.4f, \"slowest_fused_groups\": [", speedup);
    for (std::size_t i = 0; i < top.size(); ++i)
      std::printf("%s{\"index\": %zu, \"label\": \"%s\", \"gpu_ms\": %.6f}", i ? ", " : "", top[i].first,
                  json_escape(top[i].second.label).c_str(), top[i].second.gpu_ms);
    std::printf("]}\n");
    return context->validation_errors() > 0 ? 1 : 0;
  }

  std::printf("device:  %s (%s, Vulkan %s)\n", device.name.c_str(), device.driver.c_str(), device.api_version.c_str());
  std::printf("model:   %s, batch %d, %s, %zu ONNX ops (loaded in %.1f ms)\n", model.c_str(), batch, precision.c_str(),
              graph->source_op_count(), load_ms);
  std::printf("timing:  after a 0.5 s warm-up, fused and unfused interleaved: median of %d measurements, each\n"
              "         >= %d back-to-back replays of the recorded dispatches (>= ~20 ms of GPU time)\n\n",
              flags.repeats, flags.iterations);
  std::printf("  %-8s %10s %9s %14s %22s %16s %14s\n", "mode", "dispatches", "barriers", "GPU ms (med)", "min .. max",
              "intermediates", "session ms");
  for (const auto& [name, r] : {std::pair<const char*, const ModeResult*>{"fused", fused}, {"unfused", unfused}})
    std::printf("  %-8s %10zu %9zu %14.4f %10.4f .. %-9.4f %16s %14.1f\n", name, r->dispatches, r->barriers, r->median_ms, r->min_ms,
                r->max_ms, format_bytes(r->intermediate_bytes).c_str(), r->create_ms);
  std::printf("\n  fused is %.2fx %s than unfused\n", speedup >= 1.0 ? speedup : 1.0 / speedup,
              speedup >= 1.0 ? "faster" : "SLOWER");
  std::printf("\nslowest fused groups (one profiled run, %zu of %zu):\n", top.size(), fused->groups.size());
  for (const auto& [index, g] : top) std::printf("  %10.4f ms  [%zu] %s\n", g.gpu_ms, index, g.label.c_str());
  if (const std::uint32_t errors = context->validation_errors(); errors > 0) {
    std::fprintf(stderr, "vkfuse bench: %u Vulkan validation errors (see above)\n", errors);
    return 1;
  }
  return 0;
}

}  // namespace

Command add_bench(CLI::App& root) {
  auto flags = std::make_shared<BenchFlags>();
  CLI::App* app = root.add_subcommand("bench", "times a model fused against unfused on the GPU (FusionBench)");
  app->footer("The same model and seeded random inputs run fused and unfused in one process: dispatches, median GPU "
              "time of each (the recorded dispatches replayed back to back, no transfers) and their ratio, "
              "intermediate memory, the time to load the model and to create each session, and the slowest fused "
              "groups.");
  add_model_flags(*app, flags->model, WithPrecision::kYes);
  app->add_option("--repeats", flags->repeats, "timed measurements per mode, the median is reported (default 7)")
      ->type_name("R")
      ->check(positive_integer());
  app->add_option("--iterations", flags->iterations,
                  "graph replays per measurement, at least (default 10; more until a measurement covers about 20 ms "
                  "of GPU time)")
      ->type_name("I")
      ->check(positive_integer());
  app->add_option("--top", flags->top, "how many of the slowest fused groups to list (default 10)")
      ->type_name("T")
      ->check(positive_integer());
  app->add_flag("--json", flags->json, "one JSON object instead of the table");
  add_progress_flags(*app, flags->progress);
  return {app, [flags] { return run_bench(*flags); }};
}

}  // namespace vkfuse::cli
