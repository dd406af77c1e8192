// vkfuse run: an ONNX model on the GPU, inputs from tensor files, outputs to .npy, optional comparison
// against reference files.
//
// Everything that can be checked without a device (the model, the options, every input file's dtype
// and shape, the folders) is checked before a device is opened, so a mistake costs no GPU time.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <set>

#include <vkfuse/onnx.hpp>
#include <vkfuse/tensor_io.hpp>
#include <vkfuse/vkfuse.hpp>

#include "commands.h"
#include "host/graph.h"

namespace vkfuse::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage =
    "usage: vkfuse run MODEL.onnx --input NAME=FILE ... [--shape NAME=DIMS ...] [--batch N] [--output-dir DIR]\n"
    "                  [--precision P] [--compare DIR] [--tolerance T] [--runs N] [--no-fusion] [--json]\n"
    "  --input NAME=FILE   a graph input from .npy or ONNX TensorProto .pb (repeat per input;\n"
    "                      --input FILE alone for a one-input model)\n"
    "  --shape NAME=DIMS   fixes a symbolic input dimension, e.g. input=1x3x224x224\n"
    "  --batch N           sets dimension 0 of every input\n"
    "  --output-dir DIR    writes DIR/NAME.npy per output (created if missing)\n"
    "  --precision P       fp32 (default) or fp16: float tensors stored as f16 inside the graph,\n"
    "                      fp32 arithmetic in the kernels; inputs and outputs stay f32\n"
    "  --compare DIR       compares each output with DIR/NAME.npy, DIR/NAME.pb or DIR/output_<i>.pb\n"
    "  --tolerance T       the largest max-abs error relative to the reference's largest magnitude\n"
    "                      that passes (default 1e-3, 3e-2 with fp16); a failing output makes the\n"
    "                      exit code 1\n"
    "  --runs N            runs N times (default 1): outputs and GPU time from the last run, which\n"
    "                      excludes first-run warm-up when N >= 2\n"
    "  --no-fusion         one dispatch per op\n"
    "  --json              the report as JSON on stdout (the text goes to stderr)\n";

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

}  // namespace

int run_run(const Args& args) {
  auto parsed = parse_args(args, {"--input", "--shape", "--batch", "--output-dir", "--compare", "--tolerance", "--runs", "--precision"},
                           {"--no-fusion", "--json"});
  if (parsed.ok() && parsed->help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (!parsed.ok() || parsed->positional.size() != 1) {
    std::fprintf(stderr, "vkfuse run: %s\n%s",
                 parsed.ok() ? (parsed->positional.empty() ? "no model given" : "more than one model given")
                             : parsed.status().message().c_str(),
                 kUsage);
    return 2;
  }
  const std::string model = parsed->positional[0];
  // --json: the report as one JSON object on stdout, the text on stderr.
  const bool json = parsed->has("--json");
  std::FILE* text = json ? stderr : stdout;
  std::string json_outputs, json_compare;
  bool compare_pass = true;
  const Result<DType> float_dtype = parse_precision(*parsed);
  if (!float_dtype.ok()) {
    std::fprintf(stderr, "vkfuse run: %s\n", float_dtype.status().message().c_str());
    return 2;
  }
  double tolerance = 1e-3;
  {
    const std::string tolerance_text = parsed->value("--tolerance", *float_dtype == DType::kF16 ? "3e-2" : "1e-3");
    char* stop = nullptr;
    tolerance = std::strtod(tolerance_text.c_str(), &stop);
    if (tolerance_text.empty() || *stop != '\0' || !(tolerance >= 0.0)) {
      std::fprintf(stderr, "vkfuse run: --tolerance '%s' is not a non-negative number\n", tolerance_text.c_str());
      return 2;
    }
  }
  const Result<int> runs_flag = parsed->positive_int("--runs", 1);
  if (!runs_flag.ok()) {
    std::fprintf(stderr, "vkfuse run: %s\n", runs_flag.status().message().c_str());
    return 2;
  }
  const int runs = *runs_flag;
  auto shapes = parse_shape_flags(parsed->all("--shape"));
  if (!shapes.ok()) return fail(shapes.status());
  const std::string output_dir = parsed->value("--output-dir");
  const std::string compare_dir = parsed->value("--compare");
  if (!compare_dir.empty() && !fs::is_directory(compare_dir))
    return fail(make_error(ErrorCode::kNotFound, "--compare " + compare_dir + ": no such folder"));

  auto batch = parsed->optional_positive_int("--batch");
  if (!batch.ok()) return fail(batch.status());
  auto loaded = load_model(model, OnnxOptions{*shapes, *float_dtype}, *batch);
  if (!loaded.ok()) return fail(loaded.status());
  Graph* graph = &loaded->graph;
  const GraphIR& ir = graph_ir(*graph);
  std::vector<GraphInput> expected;
  for (ValueId v : ir.inputs) expected.push_back({ir.value(v).name, ir.value(v).shape, ir.value(v).dtype});
  auto inputs = read_inputs(expected, parsed->all("--input"));
  if (!inputs.ok()) return fail(inputs.status());

  std::vector<std::string> names, stems;
  for (std::size_t i = 0; i < ir.outputs.size(); ++i) {
    names.push_back(ir.value(ir.outputs[i]).name);
    stems.push_back(file_stem(names.back(), i));
  }
  if (std::set<std::string>(stems.begin(), stems.end()).size() != stems.size())
    for (std::size_t i = 0; i < stems.size(); ++i) stems[i] = "output_" + std::to_string(i);
  if (!output_dir.empty()) {
    std::error_code ec;
    fs::create_directories(output_dir, ec);
    if (ec || !fs::is_directory(output_dir))
      return fail(make_error(ErrorCode::kIo, "--output-dir " + output_dir + ": cannot create (" + ec.message() + ")"));
  }

  auto context = Context::create({});
  if (!context.ok()) return fail(context.status());
  const DeviceSummary device = context->device();
  std::fprintf(text, "device: %s (%s, %s, Vulkan %s)\n", device.name.c_str(), device.type.c_str(), device.driver.c_str(),
              device.api_version.c_str());
  auto session = Session::create(*context, *graph, SessionOptions{.fusion = !parsed->has("--no-fusion"), .profile = true});
  if (!session.ok()) return fail(session.status());
  Result<std::map<std::string, HostTensor>> outputs = std::map<std::string, HostTensor>{};
  for (int r = 0; r < runs; ++r) {
    outputs = session->run(*inputs);
    if (!outputs.ok()) return fail(outputs.status());
  }
  // Views are index maps with no dispatch; `vkfuse plan` counts them the same way.
  std::size_t views = 0;
  for (const Node& node : ir.nodes) views += node.op->kind == OpKind::kView ? 1 : 0;
  std::fprintf(text, "model: %s: %zu ONNX ops, %zu graph ops after import", model.c_str(), graph->source_op_count(),
              ir.nodes.size() - views);
  if (views > 0) std::fprintf(text, " (+%zu view%s)", views, views == 1 ? "" : "s");
  std::fprintf(text, " in %zu dispatches (fusion %s)\n", session->dispatch_count(), session->fusion_enabled() ? "on" : "off");
  if (session->last_gpu_ms() <= 0.0) std::fprintf(text, "GPU time: not measured (the device has no timestamps)\n");
  else if (runs == 1)
    std::fprintf(text, "GPU time: %.4f ms (one run, including first-run warm-up; --runs 2 or more excludes it)\n",
                session->last_gpu_ms());
  else
    std::fprintf(text, "GPU time: %.4f ms (run %d of %d)\n", session->last_gpu_ms(), runs, runs);

  for (std::size_t i = 0; i < names.size(); ++i) {
    const HostTensor& out = outputs->at(names[i]);
    std::fprintf(text, "output '%s': %s", names[i].c_str(), describe(out.dtype, out.shape).c_str());
    if (!output_dir.empty()) {
      const std::string path = (fs::path(output_dir) / (stems[i] + ".npy")).string();
      if (Status s = write_npy(path, out); !s.ok()) return fail(s);
      std::fprintf(text, " -> %s", path.c_str());
    }
    const OutputSummary summary = summarize(out.to_floats(), out.shape);
    std::fprintf(text, "\n  %s\n", summary_text(summary).c_str());
    std::string top;
    for (const auto& [index, score] : summary.top)
      top += (top.empty() ? "[" : ", [") + std::to_string(index) + ", " + json_number(score) + "]";
    json_outputs += std::string(json_outputs.empty() ? "" : ", ") + "{\"name\": \"" + json_escape(names[i]) + "\", \"dtype\": \"" +
                    dtype_name(out.dtype) + "\", \"shape\": \"" + shape_to_string(out.shape) + "\", \"min\": " +
                    json_number(summary.min) + ", \"max\": " + json_number(summary.max) + ", \"mean\": " +
                    json_number(summary.mean) + ", \"nan\": " + std::to_string(summary.nan) + ", \"top5\": [" + top + "]}";
  }

  int exit_code = 0;
  if (!compare_dir.empty()) {
    std::fprintf(text, "\ncompare with %s (pass: max abs error <= %g x the reference's largest magnitude)\n",
                compare_dir.c_str(), tolerance);
    std::fprintf(text, "  %-24s %-20s %14s %12s %12s  %s\n", "output", "shape", "max abs error", "max |ref|", "relative", "result");
    std::size_t failed = 0;
    for (std::size_t i = 0; i < names.size(); ++i) {
      const HostTensor& out = outputs->at(names[i]);
      auto reference = read_reference(compare_dir, stems[i], i);
      std::string shown = names[i].size() > 24 ? names[i].substr(0, 21) + "..." : names[i];
      if (!reference.ok()) {
        ++failed;
        std::fprintf(text, "  %-24s %-20s FAIL: %s\n", shown.c_str(), shape_to_string(out.shape).c_str(),
                    reference.status().message().c_str());
        continue;
      }
      const HostTensor& ref = reference->second;
      if (ref.shape != out.shape) {
        ++failed;
        std::fprintf(text, "  %-24s %-20s FAIL: the reference %s is %s\n", shown.c_str(), shape_to_string(out.shape).c_str(),
                    reference->first.c_str(), shape_to_string(ref.shape).c_str());
        continue;
      }
      const std::vector<float> got = out.to_floats(), want = ref.to_floats();
      const Comparison c = compare_values(got, want);
      const bool pass = c.relative <= tolerance;
      failed += pass ? 0 : 1;
      json_compare += std::string(json_compare.empty() ? "" : ", ") + "{\"name\": \"" + json_escape(names[i]) +
                      "\", \"max_abs_error\": " + json_number(c.max_abs) + ", \"reference_max\": " + json_number(c.ref_max) +
                      ", \"relative\": " + json_number(c.relative) + ", \"pass\": " + (pass ? "true" : "false") + "}";
      std::fprintf(text, "  %-24s %-20s %14.3g %12.4g %12.3g  %s", shown.c_str(), shape_to_string(out.shape).c_str(), c.max_abs,
                  c.ref_max, c.relative, pass ? "pass" : "FAIL");
      if (!pass && c.worst >= 0)
        std::fprintf(text, " (worst at flat index %lld: got %.9g, want %.9g)", static_cast<long long>(c.worst),
                    static_cast<double>(got[static_cast<std::size_t>(c.worst)]),
                    static_cast<double>(want[static_cast<std::size_t>(c.worst)]));
      if (ref.dtype != out.dtype) std::fprintf(text, " (reference is %s)", dtype_name(ref.dtype));
      std::fprintf(text, "\n");
    }
    if (failed == 0) std::fprintf(text, "all %zu outputs pass\n", names.size());
    else std::fprintf(text, "%zu of %zu outputs FAIL\n", failed, names.size());
    exit_code = failed == 0 ? 0 : 1;
    compare_pass = failed == 0;
  }
  if (const std::uint32_t errors = context->validation_errors(); errors > 0) {
    std::fprintf(stderr, "vkfuse run: %u Vulkan validation errors (see above)\n", errors);
    exit_code = 1;
  }
  if (json) {
    std::printf("{\"model\": \"%s\", \"device\": \"%s\", \"precision\": \"%s\", \"onnx_ops\": %zu, \"dispatches\": %zu, "
                "\"fusion\": %s, \"runs\": %d, \"gpu_ms\": %s, \"gpu_ms_includes_first_run\": %s,\n \"outputs\": [%s]",
                json_escape(model).c_str(), json_escape(device.name).c_str(), precision_name(*float_dtype), graph->source_op_count(),
                session->dispatch_count(), session->fusion_enabled() ? "true" : "false", runs,
                session->last_gpu_ms() > 0.0 ? json_number(session->last_gpu_ms()).c_str() : "null", runs == 1 ? "true" : "false",
                json_outputs.c_str());
    if (!compare_dir.empty())
      std::printf(",\n \"compare\": {\"dir\": \"%s\", \"tolerance\": %s, \"pass\": %s, \"outputs\": [%s]}",
                  json_escape(compare_dir).c_str(), json_number(tolerance).c_str(), compare_pass ? "true" : "false",
                  json_compare.c_str());
    std::printf("}\n");
  }
  return exit_code;
}

}  // namespace vkfuse::cli
