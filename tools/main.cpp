// vkfuse: the command-line tool.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>

#include "commands.h"
#include "host/graph.h"

namespace vkfuse::cli {

bool ParsedArgs::has(std::string_view flag) const {
  return switches.find(flag) != switches.end() || values.find(flag) != values.end();
}

const std::vector<std::string>& ParsedArgs::all(std::string_view flag) const {
  static const std::vector<std::string> kNone;
  auto it = values.find(flag);
  return it == values.end() ? kNone : it->second;
}

std::string ParsedArgs::value(std::string_view flag, const std::string& fallback) const {
  const std::vector<std::string>& given = all(flag);
  return given.empty() ? fallback : given.back();
}

Result<int> ParsedArgs::positive_int(std::string_view flag, int fallback) const {
  const std::string text = value(flag, std::to_string(fallback));
  char* stop = nullptr;
  const long number = std::strtol(text.c_str(), &stop, 10);
  if (text.empty() || *stop != '\0' || number < 1 || number > 1000000)
    return make_error(ErrorCode::kInvalidArgument, std::string(flag) + " '" + text + "' is not a positive integer");
  return static_cast<int>(number);
}

std::string nearest(std::string_view typed, const std::vector<std::string>& candidates) {
  auto distance = [](std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        const std::size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
        diagonal = up;
      }
    }
    return row[b.size()];
  };
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, typed.size() / 3) + 1;  // a typo, not another word
  for (const std::string& c : candidates)
    if (const std::size_t d = distance(typed, c); d < best_distance) {
      best = c;
      best_distance = d;
    }
  return best;
}

std::string cli_terms(std::string message) {
  static const std::pair<const char*, const char*> kTerms[] = {
      {"fix it with OnnxOptions::input_shapes or OnnxOptions::batch", "fix it with --shape NAME=DIMS or --batch N"},
      {"give one with OnnxOptions::input_shapes", "give one with --shape NAME=DIMS"},
      {"OnnxOptions::input_shapes names", "--shape names"},
      {"OnnxOptions::input_shapes", "--shape"},
      {"OnnxOptions::batch", "--batch"},
      {"OnnxOptions::float_dtype", "--precision"},
  };
  for (const auto& [api, flag] : kTerms)
    for (std::size_t at = message.find(api); at != std::string::npos; at = message.find(api, at + std::strlen(flag)))
      message.replace(at, std::strlen(api), flag);
  // The library's hint for API users ("(vkfuse run --shape input=...)") repeats the flag just named.
  if (const std::size_t at = message.find(" (vkfuse run --shape "); at != std::string::npos) {
    const std::size_t close = message.find(')', at);
    if (close != std::string::npos) message.erase(at, close - at + 1);
  }
  return message;
}

Result<std::optional<int>> ParsedArgs::optional_positive_int(std::string_view flag) const {
  if (!has(flag)) return std::optional<int>();
  VKFUSE_ASSIGN_OR_RETURN(const int value, positive_int(flag, 1));
  return std::optional<int>(value);
}

Result<ParsedArgs> parse_args(const Args& args, std::initializer_list<std::string_view> valued,
                              std::initializer_list<std::string_view> switches) {
  auto known = [](std::initializer_list<std::string_view> list, std::string_view flag) {
    for (std::string_view f : list)
      if (f == flag) return true;
    return false;
  };
  ParsedArgs parsed;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      parsed.help = true;
      continue;
    }
    if (arg.rfind("--", 0) != 0 || arg == "--") {
      parsed.positional.push_back(arg);
      continue;
    }
    const std::size_t eq = arg.find('=');
    const std::string flag = arg.substr(0, eq);
    if (known(valued, flag)) {
      if (eq != std::string::npos) {
        parsed.values[flag].push_back(arg.substr(eq + 1));
      } else if (i + 1 < args.size()) {
        parsed.values[flag].push_back(args[++i]);
      } else {
        return make_error(ErrorCode::kInvalidArgument, flag + " needs a value");
      }
    } else if (known(switches, flag) && eq == std::string::npos) {
      parsed.switches[flag] = true;
    } else if (known(switches, flag)) {
      return make_error(ErrorCode::kInvalidArgument, flag + " takes no value");
    } else {
      std::vector<std::string> known_flags(valued.begin(), valued.end());
      known_flags.insert(known_flags.end(), switches.begin(), switches.end());
      const std::string guess = nearest(flag, known_flags);
      return make_error(ErrorCode::kInvalidArgument,
                        "unknown option '" + flag + "'" + (guess.empty() ? "" : " (did you mean '" + guess + "'?)"));
    }
  }
  return parsed;
}

Result<DType> parse_precision(const ParsedArgs& parsed) {
  const std::string text = parsed.value("--precision", "fp32");
  if (text == "fp32") return DType::kF32;
  if (text == "fp16") return DType::kF16;
  return make_error(ErrorCode::kInvalidArgument, "--precision '" + text + "': expected fp32 or fp16");
}

const char* precision_name(DType float_dtype) { return float_dtype == DType::kF16 ? "fp16" : "fp32"; }

Result<std::map<std::string, Shape>> parse_shape_flags(const std::vector<std::string>& values) {
  std::map<std::string, Shape> shapes;
  for (const std::string& text : values) {
    const std::size_t eq = text.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
      return make_error(ErrorCode::kInvalidArgument, "--shape '" + text + "': expected NAME=DIMS, e.g. input=1x3x224x224");
    const std::string name = text.substr(0, eq), dims = text.substr(eq + 1);
    Shape shape;
    std::size_t pos = 0;
    while (pos <= dims.size()) {
      const std::size_t end = std::min(dims.find('x', pos), dims.size());
      const std::string dim = dims.substr(pos, end - pos);
      errno = 0;
      char* stop = nullptr;
      const long long v = std::strtoll(dim.c_str(), &stop, 10);
      if (dim.empty() || *stop != '\0' || errno == ERANGE || v <= 0 || dim[0] == '+' || dim[0] == ' ')
        return make_error(ErrorCode::kInvalidArgument, "--shape '" + text + "': dimension '" + dim +
                                                           "' is not a positive integer (dimensions are separated by 'x')");
      shape.push_back(v);
      pos = end + 1;
    }
    if (shapes.count(name)) return make_error(ErrorCode::kInvalidArgument, "--shape: '" + name + "' is given twice");
    shapes.emplace(name, std::move(shape));
  }
  return shapes;
}

std::string format_bytes(std::uint64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024.0 && unit < 4) {
    v /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.*f %s", v < 10.0 ? 2 : 1, v, kUnits[unit]);
  return text;
}

std::string json_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out;
}

Result<LoadedModel> load_model(const std::string& path, const OnnxOptions& options, std::optional<int> batch) {
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  OnnxOptions batched = options;
  if (batch) {
    batched.batch = *batch;  // every input's dimension 0, symbolic or not; --shape's inputs too:
    for (auto& [name, shape] : batched.input_shapes)
      if (!shape.empty()) shape[0] = *batch;
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    const std::filesystem::path inside = std::filesystem::path(path) / "model.onnx";
    return make_error(ErrorCode::kInvalidArgument, path + " is a folder, not an .onnx file" +
                                                       (std::filesystem::is_regular_file(inside, ec) ? " (did you mean " + inside.string() + "?)" : ""));
  }
  auto graph = load_onnx(path, batched);
  if (!graph.ok()) {
    Status status(graph.status().code(), cli_terms(graph.status().message()));
    return batch ? status.with_context("with --batch " + std::to_string(*batch)) : status;
  }
  return LoadedModel{std::move(graph).value(), std::chrono::duration<double, std::milli>(Clock::now() - start).count()};
}

}  // namespace vkfuse::cli

namespace {

void print_usage(std::FILE* to) {
  std::fputs(
      "usage: vkfuse <command> [options]    (vkfuse --version: the version)\n"
      "\n"
      "commands:\n"
      "  devices [--json]                 list Vulkan devices, drivers and the limits vkfuse plans with\n"
      "  demo [--batch N] [--boxes N]     run the embedded GIoU-loss graph and an elementwise chain,\n"
      "                                   fused and unfused, against the CPU reference\n"
      "  run MODEL.onnx --input NAME=FILE ... [--shape NAME=DIMS ...] [--output-dir DIR]\n"
      "      [--compare DIR] [--tolerance T] [--runs N] [--no-fusion]\n"
      "                                   run an ONNX model on the GPU. Input files are .npy or ONNX\n"
      "                                   TensorProto .pb; --input FILE alone is enough for a one-input\n"
      "                                   model. Writes DIR/NAME.npy per output. --compare reads\n"
      "                                   DIR/NAME.npy, DIR/NAME.pb or DIR/output_<i>.pb and prints, per\n"
      "                                   output, the max abs error and that error relative to the\n"
      "                                   reference's largest magnitude; fails (exit 1) above T\n"
      "                                   (default 1e-3). Prints the device, dispatches and GPU time\n"
      "  plan MODEL.onnx [--shape NAME=DIMS ...] [--dot FILE] [--no-fusion]\n"
      "                                   the fused groups in execution order, what each reads and\n"
      "                                   writes and the intermediates it keeps out of memory; --dot\n"
      "                                   writes Graphviz, one cluster per group. Needs no GPU: it plans\n"
      "                                   with vkfuse's default device limits and subgroup arithmetic,\n"
      "                                   not with the limits of any one device\n"
      "  bench MODEL.onnx [--batch N] [--shape NAME=DIMS ...] [--precision P] [--repeats R] [--iterations I]\n"
      "      [--top T] [--json]\n"
      "                                   FusionBench: the same model and random inputs, fused and\n"
      "                                   unfused on the GPU: dispatches, median GPU time and the\n"
      "                                   ratio, intermediate memory, session creation time, and the\n"
      "                                   T (default 10) slowest fused groups\n"
      "  startup MODEL.onnx [--batch N] [--shape NAME=DIMS ...] [--json]\n"
      "                                   time to a ready session, cold (empty caches in a fresh\n"
      "                                   temporary directory) and warm (the same caches, filled), by\n"
      "                                   phase: context, plan, kernels and pipelines, memory, record\n"
      "\n"
      "  --shape NAME=DIMS fixes a symbolic input dimension, e.g. --shape input=1x3x224x224\n"
      "  vkfuse <command> --help: that command's options\n"
      "\n"
      "environment: VKFUSE_DEVICE, VKFUSE_VALIDATION, VKFUSE_DISABLE_FUSION, VKFUSE_CACHE_DIR,\n"
      "             VKFUSE_COMPILE_THREADS, VKFUSE_DUMP_DIR, VKFUSE_LOG (see README.md)\n",
      to);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    print_usage(stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  if (command == "--version" || command == "version") {
    std::printf("vkfuse %s\n", vkfuse::version());
    return 0;
  }
  const vkfuse::cli::Args args(argv + 2, argv + argc);
  if (command == "devices") return vkfuse::cli::run_devices(args);
  if (command == "demo") return vkfuse::cli::run_demo(args);
  if (command == "run") return vkfuse::cli::run_run(args);
  if (command == "plan") return vkfuse::cli::run_plan(args);
  if (command == "bench") return vkfuse::cli::run_bench(args);
  if (command == "startup") return vkfuse::cli::run_startup(args);
  const std::string guess = vkfuse::cli::nearest(command, {"devices", "demo", "run", "plan", "bench", "startup", "--version"});
  std::fprintf(stderr, "vkfuse: unknown command '%s'%s\n\n", command.c_str(),
               guess.empty() ? "" : (" (did you mean '" + guess + "'?)").c_str());
  print_usage(stderr);
  return 2;
}
