// The `vkfuse` CLI's subcommands and what they share. Options are declared with CLI11: each command
// adds its subcommand to the root app with its flags bound to state it owns, and returns how to run it
// once the command line has parsed. A command returns the process exit code: 0 success, 1 failure (an
// error, or `run --compare` out of tolerance), 2 bad usage.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <vkfuse/onnx.hpp>
#include <vkfuse/status.hpp>
#include <vkfuse/vkfuse.hpp>

namespace CLI {
class App;
class Option;
class Validator;
}  // namespace CLI

namespace vkfuse::cli {

// A subcommand as added to the root app; `run` is called when it was the one given.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Command add_devices(CLI::App& root);  // vkfuse devices [--json]
Command add_demo(CLI::App& root);     // vkfuse demo [--batch N] [--boxes N]
Command add_run(CLI::App& root);      // vkfuse run MODEL --input NAME=FILE ...
Command add_plan(CLI::App& root);     // vkfuse plan MODEL [--dot FILE] [--json] ...
Command add_bench(CLI::App& root);    // vkfuse bench MODEL (fused vs unfused timing)
Command add_startup(CLI::App& root);  // vkfuse startup MODEL (cold and warm session creation)

// `option` taking one value per occurrence and keeping every occurrence's, in order:
// "--input a=x.npy --input b=y.npy".
CLI::Option* repeatable(CLI::Option* option);

// Validators whose messages name the value: "--batch: 'abc' is not a positive integer".
const CLI::Validator& positive_integer();  // 1 .. 1000000
const CLI::Validator& non_negative_number();
const CLI::Validator& precision_choice();  // fp32 | fp16
const CLI::Validator& shape_spec();        // NAME=DIMS

// The model and how to read it, shared by the commands that load one: the MODEL.onnx positional,
// --shape NAME=DIMS (repeatable), --batch N and, where the command offers it, --precision fp32|fp16.
struct ModelFlags {
  std::string path;
  std::vector<std::string> shapes;
  std::optional<int> batch;
  std::string precision = "fp32";
};
enum class WithPrecision { kNo, kYes };
void add_model_flags(CLI::App& app, ModelFlags& flags, WithPrecision precision);

// The candidate nearest to `typed` by edit distance, or "" when none is close enough to be a typo.
std::string nearest(std::string_view typed, const std::vector<std::string>& candidates);

// A vkfuse message in the CLI's terms: API names (OnnxOptions::input_shapes, ...) become the flags
// that set them (--shape, ...).
std::string cli_terms(std::string message);

// "NAME=1x3x224x224" (repeatable) -> {"NAME", {1, 3, 224, 224}}. Dimensions must be positive.
Result<std::map<std::string, Shape>> parse_shape_flags(const std::vector<std::string>& values);

// "fp32" | "fp16" -> the dtype a model's float tensors run as (OnnxOptions::float_dtype); and back.
DType float_dtype_of(const std::string& precision);
const char* precision_name(DType float_dtype);

// "1.5 KiB", "3.06 MiB", "12 B".
std::string format_bytes(std::uint64_t bytes);

// `text` for inside a JSON string: quotes and backslashes escaped, control characters dropped.
std::string json_escape(const std::string& text);

// A model as ModelFlags say to read it: with --shape and --precision and, when --batch is given,
// dimension 0 of every input (symbolic or not, --shape's included) set to it, in one read. A folder, or a
// path that does not exist, fails before any parsing, saying which (and naming a model.onnx inside the
// folder if there is one); load errors are in the CLI's terms. load_ms is the time of the read.
struct LoadedModel {
  Graph graph;
  DType float_dtype = DType::kF32;
  double load_ms = 0.0;
};
Result<LoadedModel> load_model(const ModelFlags& flags);

}  // namespace vkfuse::cli
