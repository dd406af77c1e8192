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

// True when `flag` is among the args.
bool has_flag(const Args& args, const std::string& flag);
// The value after `flag`, or `fallback`.
std::string flag_value(const Args& args, const std::string& flag, const std::string& fallback);

// A command line checked against the flags a command knows: "--flag VALUE" and "--flag=VALUE" for
// `valued` flags (repeatable: every value is kept in order), bare `switches`, everything else that does
// not start with "--" is positional. An unknown flag or a missing value is an error.
struct ParsedArgs {
  std::vector<std::string> positional;
  std::map<std::string, std::vector<std::string>, std::less<>> values;
  std::map<std::string, bool, std::less<>> switches;

  bool has(std::string_view flag) const;
  const std::vector<std::string>& all(std::string_view flag) const;  // empty when not given
  // The last value given, or `fallback`.
  std::string value(std::string_view flag, const std::string& fallback = "") const;
  // The last value given as an integer in [1, 1000000], or `fallback`; kInvalidArgument names the flag.
  Result<int> positive_int(std::string_view flag, int fallback) const;
};
Result<ParsedArgs> parse_args(const Args& args, std::initializer_list<std::string_view> valued,
                              std::initializer_list<std::string_view> switches);

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
Result<LoadedModel> load_model(const std::string& path, const OnnxOptions& options, std::optional<int> batch);

}  // namespace vkfuse::cli
