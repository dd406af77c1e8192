// The `vkfuse` CLI's subcommands and the option parsing they share. Each command returns the process
// exit code: 0 success, 1 failure (an error, or `run --compare` out of tolerance), 2 bad usage.
#pragma once

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <vkfuse/onnx.hpp>
#include <vkfuse/status.hpp>
#include <vkfuse/vkfuse.hpp>

namespace vkfuse::cli {

using Args = std::vector<std::string>;

int run_devices(const Args& args);  // vkfuse devices [--json]
int run_demo(const Args& args);     // vkfuse demo [--batch N] [--boxes N]
int run_run(const Args& args);      // vkfuse run MODEL --input NAME=FILE ... (see main.cpp's usage)
int run_plan(const Args& args);     // vkfuse plan MODEL [--shape NAME=DIMS ...] [--dot FILE] [--no-fusion]
int run_bench(const Args& args);    // vkfuse bench MODEL [--batch N] [--json] ... (fused vs unfused timing)
int run_startup(const Args& args);  // vkfuse startup MODEL [--batch N] [--json] ... (cold and warm session creation)

// A command line checked against the flags a command knows: "--flag VALUE" and "--flag=VALUE" for
// `valued` flags (repeatable: every value is kept in order), bare `switches`, everything else that does
// not start with "--" is positional. An unknown flag or a missing value is an error.
struct ParsedArgs {
  bool help = false;  // --help or -h was given: the command prints its usage and exits 0
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>, std::less<>> values;
  std::map<std::string, bool, std::less<>> switches;

  bool has(std::string_view flag) const;
  const std::vector<std::string>& all(std::string_view flag) const;  // empty when not given
  // The last value given, or `fallback`.
  std::string value(std::string_view flag, const std::string& fallback = "") const;
  // The last value given as an integer in [1, 1000000], or `fallback`; kInvalidArgument names the flag.
  Result<int> positive_int(std::string_view flag, int fallback) const;
  // The same, or nullopt when the flag is not given.
  Result<std::optional<int>> optional_positive_int(std::string_view flag) const;
};
Result<ParsedArgs> parse_args(const Args& args, std::initializer_list<std::string_view> valued,
                              std::initializer_list<std::string_view> switches);

// The candidate nearest to `typed` by edit distance, or "" when none is close enough to be a typo.
std::string nearest(std::string_view typed, const std::vector<std::string>& candidates);

// A vkfuse message in the CLI's terms: API names (OnnxOptions::input_shapes, ...) become the flags
// that set them (--shape, ...).
std::string cli_terms(std::string message);

// "NAME=1x3x224x224" (repeatable) -> {"NAME", {1, 3, 224, 224}}. Dimensions must be positive.
Result<std::map<std::string, Shape>> parse_shape_flags(const std::vector<std::string>& values);

// --precision fp32|fp16 (default fp32) -> the dtype a model's float tensors run as (OnnxOptions::float_dtype).
Result<DType> parse_precision(const ParsedArgs& parsed);
// "fp32" or "fp16" for reports.
const char* precision_name(DType float_dtype);

// "1.5 KiB", "3.06 MiB", "12 B".
std::string format_bytes(std::uint64_t bytes);

// `text` for inside a JSON string: quotes and backslashes escaped, control characters dropped.
std::string json_escape(const std::string& text);

// A model as the commands with --batch read it: with `options` (--shape, --precision) and, when `batch`
// is given, dimension 0 of every input (symbolic or not, --shape's included) set to it, in one read.
// load_ms is the time of that read.
struct LoadedModel {
  Graph graph;
  double load_ms = 0.0;
};
// A folder, or a path that does not exist, fails before any parsing, saying which (and naming a
// model.onnx inside the folder if there is one); load errors are in the CLI's terms.
Result<LoadedModel> load_model(const std::string& path, const OnnxOptions& options, std::optional<int> batch);

}  // namespace vkfuse::cli
