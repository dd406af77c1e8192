// vkfuse run: an ONNX model on the GPU, inputs from tensor files, outputs to .npy, optional comparison
// against reference files.
//
// Everything that can be checked without a device (the model, the options, every input file's dtype
// and shape, the folders) is checked before a device is opened, so a mistake costs no GPU time; and
// the model's inputs and outputs against the limits of the device that would run it (listed, not
// opened) before the input files are read.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <set>

#include <vkfuse/onnx.hpp>
#include <vkfuse/tensor_io.hpp>
#include <vkfuse/vkfuse.hpp>

#include "commands.h"
#include "progress.h"
#include "host/device_fit.h"
#include "host/graph.h"

namespace vkfuse::cli {
namespace {

namespace fs = std::filesystem;

struct RunFlags {
  ModelFlags model;
  std::vector<std::string> inputs;
  std::string output_dir, compare_dir;
  std::optional<double> tolerance;
  int runs = 1;
  bool no_fusion = false;
  bool json = false;
  ProgressFlags progress;
};

std::string describe(DType dtype, const Shape& shape) { return std::string(dtype_name(dtype)) + shape_to_string(shape); }

// A file name for a tensor name: ONNX names may hold '/', ':' and worse.
std::string file_stem(const std::string& name, std::size_t index) {
  std::string stem;
  for (char c : name) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                      c == '-' || c == '.';
    stem += safe ? c : '_';
  }
  if (stem.empty() || stem.find_first_not_of('.') == std::string::npos) stem = "output_" + std::to_string(index);
  return stem;
}

struct GraphInput {
  std::string name;
  Shape shape;
  DType dtype;
};

Result<std::map<std::string, HostTensor>> read_inputs(const std::vector<GraphInput>& expected,
                                                      const std::vector<std::string>& flags) {
  auto list_inputs = [&] {
    std::string text;
    for (const GraphInput& in : expected) text += (text.empty() ? "" : ", ") + in.name + " " + describe(in.dtype, in.shape);
    return text.empty() ? std::string("none") : text;
  };
  std::map<std::string, HostTensor> inputs;
  for (const std::string& flag : flags) {
    std::string name, file;
    const std::size_t eq = flag.find('=');
    bool named = false;
    if (eq != std::string::npos) {
      name = flag.substr(0, eq);
      for (const GraphInput& in : expected) named |= in.name == name;
    }
    if (named) {
      file = flag.substr(eq + 1);
    } else if (expected.size() == 1 && (eq == std::string::npos || fs::exists(flag))) {
      name = expected[0].name;
      file = flag;
    } else if (eq != std::string::npos) {
      return make_error(ErrorCode::kInvalidArgument,
                        "--input " + flag + ": the model has no input named '" + name + "'; its inputs: " + list_inputs());
    } else {
      return make_error(ErrorCode::kInvalidArgument,
                        "--input " + flag + ": expected NAME=FILE (the model has " + std::to_string(expected.size()) +
                            " inputs: " + list_inputs() + ")");
    }
    if (inputs.count(name)) return make_error(ErrorCode::kInvalidArgument, "--input: '" + name + "' is given twice");
    VKFUSE_ASSIGN_OR_RETURN(HostTensor tensor, read_tensor_file(file));
    for (const GraphInput& in : expected) {
      if (in.name != name) continue;
      if (tensor.dtype != in.dtype || tensor.shape != in.shape)
        return make_error(ErrorCode::kInvalidArgument, "input '" + name + "': " + file + " holds " +
                                                           describe(tensor.dtype, tensor.shape) + ", the model expects " +
                                                           describe(in.dtype, in.shape));
    }
    inputs.emplace(name, std::move(tensor));
  }
  std::string missing;
  for (const GraphInput& in : expected)
    if (!inputs.count(in.name)) missing += (missing.empty() ? "" : ", ") + in.name + " " + describe(in.dtype, in.shape);
  if (!missing.empty())
    return make_error(ErrorCode::kInvalidArgument, "no --input for " + missing + " (give each as --input NAME=FILE)");
  return inputs;
}

struct Comparison {
  double max_abs = 0.0;
  double ref_max = 0.0;   // largest finite |reference|
  double relative = 0.0;  // max_abs / ref_max
  std::int64_t worst = -1;
};

// NaN matches NaN and an infinity matches itself (IEEE results the reference shares are not errors);
// any other disagreement in finiteness is an infinite error.
Comparison compare_values(const std::vector<float>& got, const std::vector<float>& want) {
  Comparison c;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double w = want[i], g = got[i];
    if (std::isfinite(w)) c.ref_max = std::max(c.ref_max, std::fabs(w));
    double error = 0.0;
    if (std::isnan(w) || std::isnan(g)) error = std::isnan(w) && std::isnan(g) ? 0.0 : HUGE_VAL;
    else if (std::isinf(w) || std::isinf(g)) error = w == g ? 0.0 : HUGE_VAL;
    else error = std::fabs(g - w);
    if (c.worst < 0 || error > c.max_abs) {
      c.max_abs = error;
      c.worst = static_cast<std::int64_t>(i);
    }
  }
  if (c.ref_max > 0.0) c.relative = c.max_abs / c.ref_max;
  else c.relative = c.max_abs == 0.0 ? 0.0 : HUGE_VAL;
  return c;
}

// Reads DIR/<stem>.npy, DIR/<stem>.pb or DIR/output_<index>.pb (ONNX's test-data layout), the first
// that exists.
Result<std::pair<std::string, HostTensor>> read_reference(const std::string& dir, const std::string& stem,
                                                          std::size_t index) {
  const std::string candidates[] = {(fs::path(dir) / (stem + ".npy")).string(), (fs::path(dir) / (stem + ".pb")).string(),
                                    (fs::path(dir) / ("output_" + std::to_string(index) + ".pb")).string()};
  for (const std::string& path : candidates) {
    if (!fs::exists(path)) continue;
    VKFUSE_ASSIGN_OR_RETURN(HostTensor tensor, read_tensor_file(path));
    return std::make_pair(path, std::move(tensor));
  }
  return make_error(ErrorCode::kNotFound, "no reference file (looked for " + candidates[0] + ", " + candidates[1] +
                                              ", " + candidates[2] + ")");
}

// An output at a glance: min, max, mean (NaNs counted apart) and, for a classifier's scores ([N] or
// [1, N], N >= 10), the 5 best classes.
struct OutputSummary {
  double min = 0.0, max = 0.0, mean = 0.0;
  std::size_t nan = 0;
  std::vector<std::pair<std::size_t, float>> top;  // (class, score)
};

OutputSummary summarize(const std::vector<float>& v, const Shape& shape) {
  OutputSummary s;
  double sum = 0.0;
  bool first = true;
  for (float x : v) {
    if (std::isnan(x)) {
      ++s.nan;
      continue;
    }
    s.min = first ? x : std::min<double>(s.min, x);
    s.max = first ? x : std::max<double>(s.max, x);
    first = false;
    sum += x;
  }
  if (s.nan < v.size()) s.mean = sum / double(v.size() - s.nan);
  const bool classifier = shape.size() == 1 || (shape.size() == 2 && shape[0] == 1);
  if (classifier && v.size() >= 10) {
    std::vector<std::size_t> order(v.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::partial_sort(order.begin(), order.begin() + 5, order.end(), [&](std::size_t a, std::size_t b) { return v[a] > v[b]; });
    for (std::size_t k = 0; k < 5; ++k) s.top.push_back({order[k], v[order[k]]});
  }
  return s;
}

// "min -1.2 max 3.4 mean 0.05; top 5: 1 (0.23) ..."
std::string summary_text(const OutputSummary& s) {
  char text[160];
  std::snprintf(text, sizeof text, "min %.4g max %.4g mean %.4g", s.min, s.max, s.mean);
  std::string out = text;
  if (s.nan > 0) out += ", " + std::to_string(s.nan) + " NaN";
  if (!s.top.empty()) out += "; top 5:";
  for (const auto& [index, score] : s.top) {
    std::snprintf(text, sizeof text, " %zu (%.4g)", index, static_cast<double>(score));
    out += text;
  }
  return out;
}

// A JSON number (non-finite values as null).
std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char text[40];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

int fail(const Status& status) {
  std::fprintf(stderr, "vkfuse run: %s\n", status.to_string().c_str());
  return 1;
}

// The model loaded and every input read and checked against it, before any device is opened.
struct Prepared {
  LoadedModel model;
  std::map<std::string, HostTensor> inputs;
  std::vector<std::string> names, stems;  // each output's name and the file stem it is written as
};

Result<Prepared> prepare(const RunFlags& flags, Progress& progress) {
  if (!flags.compare_dir.empty() && !fs::is_directory(flags.compare_dir))
    return make_error(ErrorCode::kNotFound, "--compare " + flags.compare_dir + ": no such folder");
  progress.begin("importing " + flags.model.path);
  VKFUSE_ASSIGN_OR_RETURN(LoadedModel model, load_model(flags.model));
  progress.end("imported " + flags.model.path);
  const GraphIR& ir = graph_ir(model.graph);
  std::vector<GraphInput> expected;
  for (ValueId v : ir.inputs) expected.push_back({ir.value(v).name, ir.value(v).shape, ir.value(v).dtype});
  // The device's limits, read without opening it, before input files as large as the tensors are read.
  // No device to list is left for Context::create to report, after the inputs are checked.
  if (auto devices = list_devices(); devices.ok())
    for (const DeviceSummary& device : *devices) {
      if (!device.default_choice) continue;
      const Status fits = check_graph_fits(ir, device);
      if (!fits.ok()) return flags.model.batch ? fits.with_context("with --batch " + std::to_string(*flags.model.batch)) : fits;
    }
  progress.begin("reading inputs");
  VKFUSE_ASSIGN_OR_RETURN(auto inputs, read_inputs(expected, flags.inputs));
  progress.end("read inputs");
  Prepared prepared{std::move(model), std::move(inputs), {}, {}};
  for (std::size_t i = 0; i < ir.outputs.size(); ++i) {
    prepared.names.push_back(ir.value(ir.outputs[i]).name);
    prepared.stems.push_back(file_stem(prepared.names.back(), i));
  }
  std::vector<std::string>& stems = prepared.stems;
  if (std::set<std::string>(stems.begin(), stems.end()).size() != stems.size())
    for (std::size_t i = 0; i < stems.size(); ++i) stems[i] = "output_" + std::to_string(i);
  if (!flags.output_dir.empty()) {
    std::error_code ec;
    fs::create_directories(flags.output_dir, ec);
    if (ec || !fs::is_directory(flags.output_dir))
      return make_error(ErrorCode::kIo, "--output-dir " + flags.output_dir + ": cannot create (" + ec.message() + ")");
  }
  return prepared;
}

// Prints each output's shape and summary (and writes it under --output-dir); returns the JSON list.
Result<std::string> report_outputs(const RunFlags& flags, const Prepared& prepared,
                                   const std::map<std::string, HostTensor>& outputs, std::FILE* text) {
  std::string json;
  for (std::size_t i = 0; i < prepared.names.size(); ++i) {
    const std::string& name = prepared.names[i];
    const HostTensor& out = outputs.at(name);
    std::fprintf(text, "output '%s': %s", name.c_str(), describe(out.dtype, out.shape).c_str());
    if (!flags.output_dir.empty()) {
      const std::string path = (fs::path(flags.output_dir) / (prepared.stems[i] + ".npy")).string();
      VKFUSE_TRY(write_npy(path, out));
      std::fprintf(text, " -> %s", path.c_str());
    }
    const OutputSummary summary = summarize(out.to_floats(), out.shape);
    std::fprintf(text, "\n  %s\n", summary_text(summary).c_str());
    std::string top;
    for (const auto& [index, score] : summary.top)
      top += (top.empty() ? "[" : ", [") + std::to_string(index) + ", " + json_number(score) + "]";
    json += std::string(json.empty() ? "" : ", ") + "{\"name\": \"" + json_escape(name) + "\", \"dtype\": \"" +
            dtype_name(out.dtype) + "\", \"shape\": \"" + shape_to_string(out.shape) + "\", \"min\": " +
            json_number(summary.min) + ", \"max\": " + json_number(summary.max) + ", \"mean\": " +
            json_number(summary.mean) + ", \"nan\": " + std::to_string(summary.nan) + ", \"top5\": [" + top + "]}";
  }
  return json;
}

struct CompareReport {
  std::size_t failed = 0;
  std::string json;  // the per-output list
};

// Each output against its reference file under --compare, printed as a table.
CompareReport compare_outputs(const RunFlags& flags, const Prepared& prepared, double tolerance,
                              const std::map<std::string, HostTensor>& outputs, std::FILE* text) {
  CompareReport report;
  const std::vector<std::string>& names = prepared.names;
  std::fprintf(text, "\ncompare with %s (pass: max abs error <= %g x the reference's largest magnitude)\n",
               flags.compare_dir.c_str(), tolerance);
  std::fprintf(text, "  %-24s %-20s %14s %12s %12s  %s\n", "output", "shape", "max abs error", "max |ref|", "relative", "result");
  for (std::size_t i = 0; i < names.size(); ++i) {
    const HostTensor& out = outputs.at(names[i]);
    auto reference = read_reference(flags.compare_dir, prepared.stems[i], i);
    const std::string shown = names[i].size() > 24 ? names[i].substr(0, 21) + "..." : names[i];
    const std::string shape = shape_to_string(out.shape);
    if (!reference.ok()) {
      ++report.failed;
      std::fprintf(text, "  %-24s %-20s FAIL: %s\n", shown.c_str(), shape.c_str(), reference.status().message().c_str());
      continue;
    }
    const HostTensor& ref = reference->second;
    if (ref.shape != out.shape) {
      ++report.failed;
      std::fprintf(text, "  %-24s %-20s FAIL: the reference %s is %s\n", shown.c_str(), shape.c_str(),
                   reference->first.c_str(), shape_to_string(ref.shape).c_str());
      continue;
    }
    const std::vector<float> got = out.to_floats(), want = ref.to_floats();
    const Comparison c = compare_values(got, want);
    const bool pass = c.relative <= tolerance;
    report.failed += pass ? 0 : 1;
    report.json += std::string(report.json.empty() ? "" : ", ") + "{\"name\": \"" + json_escape(names[i]) +
                   "\", \"max_abs_error\": " + json_number(c.max_abs) + ", \"reference_max\": " + json_number(c.ref_max) +
                   ", \"relative\": " + json_number(c.relative) + ", \"pass\": " + (pass ? "true" : "false") + "}";
    std::fprintf(text, "  %-24s %-20s %14.3g %12.4g %12.3g  %s", shown.c_str(), shape.c_str(), c.max_abs, c.ref_max,
                 c.relative, pass ? "pass" : "FAIL");
    if (!pass && c.worst >= 0)
      std::fprintf(text, " (worst at flat index %lld: got %.9g, want %.9g)", static_cast<long long>(c.worst),
                   static_cast<double>(got[static_cast<std::size_t>(c.worst)]),
                   static_cast<double>(want[static_cast<std::size_t>(c.worst)]));
    if (ref.dtype != out.dtype) std::fprintf(text, " (reference is %s)", dtype_name(ref.dtype));
    std::fprintf(text, "\n");
  }
  if (report.failed == 0) std::fprintf(text, "all %zu outputs pass\n", names.size());
  else std::fprintf(text, "%zu of %zu outputs FAIL\n", report.failed, names.size());
  return report;
}

int run_run(const RunFlags& flags) {
  // --json: the report as one JSON object on stdout, the text on stderr.
  std::FILE* text = flags.json ? stderr : stdout;
  const std::string& model = flags.model.path;
  Progress progress(flags.progress.level());
  auto prepared = prepare(flags, progress);
  if (!prepared.ok()) return fail(prepared.status());
  const Graph& graph = prepared->model.graph;
  const GraphIR& ir = graph_ir(graph);
  const DType float_dtype = prepared->model.float_dtype;
  const double tolerance = flags.tolerance.value_or(float_dtype == DType::kF16 ? 3e-2 : 1e-3);

  progress.begin("opening the device");
  auto context = Context::create({});
  if (!context.ok()) return fail(context.status());
  progress.end("opened the device");
  const DeviceSummary device = context->device();
  std::fprintf(text, "device: %s (%s, %s, Vulkan %s)\n", device.name.c_str(), device.type.c_str(), device.driver.c_str(),
               device.api_version.c_str());
  progress.begin("compiling kernels");
  SessionOptions options{.fusion = !flags.no_fusion, .profile = true};
  options.progress = progress.session_callback();
  auto session = Session::create(*context, graph, options);
  if (!session.ok()) return fail(session.status());
  const CacheStats cache = context->cache_stats();
  progress.end(std::to_string(session->groups().size()) + " kernels ready (" + std::to_string(cache.compiles) +
               " compiled, " + std::to_string(cache.disk_hits + cache.memory_hits) + " from the kernel cache)");
  Result<std::map<std::string, HostTensor>> outputs = std::map<std::string, HostTensor>{};
  for (int r = 0; r < flags.runs; ++r) {
    progress.begin(r == 0 ? "first run (warm-up)" : "run " + std::to_string(r + 1) + " of " + std::to_string(flags.runs));
    outputs = session->run(prepared->inputs);
    if (!outputs.ok()) return fail(outputs.status());
    progress.end(r == 0 ? "first run (warm-up)" : "run " + std::to_string(r + 1));
  }
  // Views are index maps with no dispatch; `vkfuse plan` counts them the same way.
  std::size_t views = 0;
  for (const Node& node : ir.nodes) views += node.op->kind == OpKind::kView ? 1 : 0;
  std::fprintf(text, "model: %s: %zu ONNX ops, %zu graph ops after import", model.c_str(), graph.source_op_count(),
               ir.nodes.size() - views);
  if (views > 0) std::fprintf(text, " (+%zu view%s)", views, views == 1 ? "" : "s");
  std::fprintf(text, " in %zu dispatches (fusion %s)\n", session->dispatch_count(), session->fusion_enabled() ? "on" : "off");
  if (session->last_gpu_ms() <= 0.0) std::fprintf(text, "GPU time: not measured (the device has no timestamps)\n");
  else if (flags.runs == 1)
    std::fprintf(text, "GPU time: %.4f ms (one run, including first-run warm-up; --runs 2 or more excludes it)\n",
                 session->last_gpu_ms());
  else
    std::fprintf(text, "GPU time: %.4f ms (run %d of %d)\n", session->last_gpu_ms(), flags.runs, flags.runs);

  auto json_outputs = report_outputs(flags, *prepared, *outputs, text);
  if (!json_outputs.ok()) return fail(json_outputs.status());
  int exit_code = 0;
  CompareReport compared;
  if (!flags.compare_dir.empty()) {
    compared = compare_outputs(flags, *prepared, tolerance, *outputs, text);
    exit_code = compared.failed == 0 ? 0 : 1;
  }
  if (const std::uint32_t errors = context->validation_errors(); errors > 0) {
    std::fprintf(stderr, "vkfuse run: %u Vulkan validation errors (see above)\n", errors);
    exit_code = 1;
  }
  if (flags.json) {
    std::printf("{\"model\": \"%s\", \"device\": \"%s\", \"precision\": \"%s\", \"onnx_ops\": %zu, \"dispatches\": %zu, "
                "\"fusion\": %s, \"runs\": %d, \"gpu_ms\": %s, \"gpu_ms_includes_first_run\": %s,\n \"outputs\": [%s]",
                json_escape(model).c_str(), json_escape(device.name).c_str(), precision_name(float_dtype),
                graph.source_op_count(), session->dispatch_count(), session->fusion_enabled() ? "true" : "false", flags.runs,
                session->last_gpu_ms() > 0.0 ? json_number(session->last_gpu_ms()).c_str() : "null",
                flags.runs == 1 ? "true" : "false", json_outputs->c_str());
    if (!flags.compare_dir.empty())
      std::printf(",\n \"compare\": {\"dir\": \"%s\", \"tolerance\": %s, \"pass\": %s, \"outputs\": [%s]}",
                  json_escape(flags.compare_dir).c_str(), json_number(tolerance).c_str(),
                  compared.failed == 0 ? "true" : "false", compared.json.c_str());
    std::printf("}\n");
  }
  return exit_code;
}

}  // namespace

Command add_run(CLI::App& root) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* app = root.add_subcommand("run", "runs an ONNX model on the GPU and summarizes or compares its outputs");
  add_model_flags(*app, flags->model, WithPrecision::kYes);
  repeatable(app->add_option("--input", flags->inputs,
                             "a graph input from .npy or ONNX TensorProto .pb (repeat per input; --input FILE alone "
                             "for a one-input model)"))
      ->type_name("NAME=FILE");
  app->add_option("--output-dir", flags->output_dir, "writes DIR/NAME.npy per output (created if missing)")->type_name("DIR");
  app->add_option("--compare", flags->compare_dir, "compares each output with DIR/NAME.npy, DIR/NAME.pb or DIR/output_<i>.pb")
      ->type_name("DIR");
  app->add_option("--tolerance", flags->tolerance,
                  "the largest max-abs error relative to the reference's largest magnitude that passes (default "
                  "1e-3, 3e-2 with fp16); a failing output makes the exit code 1")
      ->type_name("T")
      ->check(non_negative_number());
  app->add_option("--runs", flags->runs,
                  "runs N times (default 1): outputs and GPU time from the last run, which excludes first-run "
                  "warm-up when N >= 2")
      ->type_name("N")
      ->check(positive_integer());
  app->add_flag("--no-fusion", flags->no_fusion, "one dispatch per op");
  app->add_flag("--json", flags->json, "the report as JSON on stdout (the text goes to stderr)");
  add_progress_flags(*app, flags->progress);
  return {app, [flags] { return run_run(*flags); }};
}

}  // namespace vkfuse::cli
