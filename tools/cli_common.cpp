// What the CLI's commands share: validators, the model flags and loading a model by them, typo
// suggestions, the CLI's terms in library messages, and small formatting helpers.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "commands.h"

namespace vkfuse::cli {

namespace {

// A validator from a check that returns "" for a good value or what is wrong with it; CLI11 prefixes
// the flag's name. An empty description keeps CLI11 from appending one to the help's type name.
CLI::Validator checked(std::function<std::string(const std::string&)> check) {
  return CLI::Validator([check = std::move(check)](std::string& value) { return check(value); }, "");
}

}  // namespace

CLI::Option* repeatable(CLI::Option* option) {
  return option->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

const CLI::Validator& positive_integer() {
  static const CLI::Validator validator = checked([](const std::string& text) -> std::string {
    char* stop = nullptr;
    errno = 0;
    const long number = std::strtol(text.c_str(), &stop, 10);
    if (text.empty() || *stop != '\0' || errno == ERANGE || number < 1 || number > 1000000)
      return "'" + text + "' is not a positive integer";
    return "";
  });
  return validator;
}

const CLI::Validator& non_negative_number() {
  static const CLI::Validator validator = checked([](const std::string& text) -> std::string {
    char* stop = nullptr;
    const double number = std::strtod(text.c_str(), &stop);
    if (text.empty() || *stop != '\0' || !(number >= 0.0)) return "'" + text + "' is not a non-negative number";
    return "";
  });
  return validator;
}

const CLI::Validator& precision_choice() {
  static const CLI::Validator validator = checked([](const std::string& text) -> std::string {
    return text == "fp32" || text == "fp16" ? "" : "'" + text + "': expected fp32 or fp16";
  });
  return validator;
}

const CLI::Validator& shape_spec() {
  static const CLI::Validator validator = checked([](const std::string& text) -> std::string {
    auto parsed = parse_shape_flags({text});
    if (parsed.ok()) return "";
    std::string message = parsed.status().message();
    if (message.rfind("--shape ", 0) == 0) message.erase(0, 8);  // CLI11 names the flag itself
    return message;
  });
  return validator;
}

void add_model_flags(CLI::App& app, ModelFlags& flags, WithPrecision precision) {
  app.add_option("MODEL.onnx", flags.path, "the ONNX model file")->required()->type_name("");
  repeatable(app.add_option("--shape", flags.shapes, "fixes an input's shape, e.g. input=1x3x224x224 (repeat per input)"))
      ->type_name("NAME=DIMS")
      ->check(shape_spec());
  app.add_option("--batch", flags.batch, "sets dimension 0 of every input (default: the model's own)")
      ->type_name("N")
      ->check(positive_integer());
  if (precision == WithPrecision::kYes)
    app.add_option("--precision", flags.precision,
                   "fp32 (default) or fp16: float tensors stored as f16 inside the graph, fp32 arithmetic in the "
                   "kernels; inputs and outputs stay f32")
        ->type_name("P")
        ->check(precision_choice());
}

DType float_dtype_of(const std::string& precision) { return precision == "fp16" ? DType::kF16 : DType::kF32; }

const char* precision_name(DType float_dtype) { return float_dtype == DType::kF16 ? "fp16" : "fp32"; }


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

Result<LoadedModel> load_model(const ModelFlags& flags) {
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  VKFUSE_ASSIGN_OR_RETURN(auto shapes, parse_shape_flags(flags.shapes));
  OnnxOptions options{std::move(shapes), float_dtype_of(flags.precision)};
  if (flags.batch) {
    options.batch = *flags.batch;  // every input's dimension 0, symbolic or not; --shape's inputs too:
    for (auto& [name, shape] : options.input_shapes)
      if (!shape.empty()) shape[0] = *flags.batch;
  }
  const std::string& path = flags.path;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    const std::filesystem::path inside = std::filesystem::path(path) / "model.onnx";
    return make_error(ErrorCode::kInvalidArgument, path + " is a folder, not an .onnx file" +
                                                       (std::filesystem::is_regular_file(inside, ec) ? " (did you mean " + inside.string() + "?)" : ""));
  }
  auto graph = load_onnx(path, options);
  if (!graph.ok()) {
    Status status(graph.status().code(), cli_terms(graph.status().message()));
    return flags.batch ? status.with_context("with --batch " + std::to_string(*flags.batch)) : status;
  }
  return LoadedModel{std::move(graph).value(), options.float_dtype,
                     std::chrono::duration<double, std::milli>(Clock::now() - start).count()};
}

}  // namespace vkfuse::cli
