// vkfuse plan: the fused groups of an ONNX model, without a GPU, as text and optionally Graphviz.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <set>

#include <vkfuse/onnx.hpp>
#include <vkfuse/vkfuse.hpp>

#include "commands.h"
#include "progress.h"
#include "host/plan_report.h"

namespace vkfuse::cli {
namespace {

constexpr const char* kAbout =
    "Prints the fused groups in execution order: label, op count, the tensors each reads and writes, its "
    "wave (a barrier separates each wave from the next), and the bytes of intermediates it keeps out of "
    "memory; then graph ops vs dispatches and waves. Needs no GPU: it plans with vkfuse's default device "
    "limits (DevicePlan's defaults: the Vulkan minimums, 32 storage buffers per dispatch) and subgroup "
    "arithmetic (which lavapipe and desktop GPUs offer: attention groups need it), not with a device's "
    "own; a device's limits can size and split groups differently under `vkfuse run`.";

struct PlanFlags {
  ModelFlags model;
  std::string dot;
  bool no_fusion = false;
  bool json = false;
  std::vector<std::string> image_inputs, image_outputs;
  ProgressFlags progress;
};

// "x f32[1,3,224,224]"; constants say so.
std::string describe_value(const PlanValue& v) {
  return v.name + " " + dtype_name(v.dtype) + shape_to_string(v.shape) + (v.is_constant ? " (constant)" : "");
}

// The tensors of `ids` one per line under a heading; scalar constants (shader literals) are counted.
void print_values(const char* heading, const PlanReport& report, const std::vector<int>& ids) {
  std::size_t literals = 0;
  std::string line;
  for (int id : ids) {
    const PlanValue& v = report.values[static_cast<std::size_t>(id)];
    if (v.is_scalar_constant) {
      ++literals;
      continue;
    }
    line += (line.empty() ? "" : ", ") + describe_value(v);
  }
  if (literals > 0) line += (line.empty() ? "" : ", ") + std::to_string(literals) + " scalar literal" + (literals > 1 ? "s" : "");
  std::printf("      %-5s %s\n", heading, line.empty() ? "-" : line.c_str());
}

std::string dot_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// One cluster per group with a box per op; tensors in memory as ellipses (inputs blue, outputs green,
// constants grey notes); views as dashed boxes outside every cluster. An op that several groups
// recompute is drawn once in each.
std::string plan_to_dot(const PlanReport& report) {
  std::string dot =
      "digraph vkfuse_plan {\n  rankdir=TB;\n  graph [fontname=\"Helvetica\", fontsize=11];\n"
      "  node [fontname=\"Helvetica\", fontsize=10];\n";
  std::set<int> shown_values;
  std::set<int> drawn_from;  // values with the edge from their producer drawn
  std::string edges;
  auto value_node = [&](int v) {
    shown_values.insert(v);
    return "v" + std::to_string(v);
  };
  for (std::size_t k = 0; k < report.groups.size(); ++k) {
    const PlanGroup& g = report.groups[k];
    const std::set<int> members(g.nodes.begin(), g.nodes.end());
    const std::string prefix = "g" + std::to_string(k) + "_n";
    dot += "  subgraph cluster_" + std::to_string(k) + " {\n    label=\"[" + std::to_string(k) + "] " + dot_escape(g.label) +
           "\\n" + std::to_string(g.nodes.size()) + (g.nodes.size() == 1 ? " op, " : " ops, ") + g.root +
           " root, kept out of memory: " + format_bytes(g.kept_bytes) + "\";\n    style=rounded; color=\"#3b6fb6\";\n";
    for (int n : g.nodes) {
      const PlanNode& node = report.nodes[static_cast<std::size_t>(n)];
      dot += "    " + prefix + std::to_string(n) + " [shape=box, label=\"" + dot_escape(node.op_type) + "\\n" +
             dot_escape(node.name) + "\"];\n";
      for (int v : node.inputs) {
        const PlanValue& value = report.values[static_cast<std::size_t>(v)];
        if (value.producer >= 0 && members.count(value.producer))
          edges += "  " + prefix + std::to_string(value.producer) + " -> " + prefix + std::to_string(n) + ";\n";
        else if (!value.is_scalar_constant)
          edges += "  " + value_node(v) + " -> " + prefix + std::to_string(n) + ";\n";
      }
    }
    dot += "  }\n";
    for (int v : g.outputs) {
      edges += "  " + prefix + std::to_string(report.values[static_cast<std::size_t>(v)].producer) + " -> " + value_node(v) + ";\n";
      drawn_from.insert(v);
    }
    // Written in place into a larger tensor (a Concat's slice, a copy's places), or read as the leading
    // elements of one: the two tensors share memory.
    for (const auto& [part, whole] : g.stored_into) {
      edges += "  " + value_node(part) + " -> " + value_node(whole) + " [style=dashed, label=\"stored into\"];\n";
      drawn_from.insert(whole);
    }
    for (const auto& [part, whole] : g.read_from) {
      edges += "  " + value_node(whole) + " -> " + value_node(part) + " [style=dashed, label=\"leading elements\"];\n";
      drawn_from.insert(part);
    }
  }
  for (std::size_t n = 0; n < report.nodes.size(); ++n) {
    const PlanNode& node = report.nodes[n];
    if (!node.is_view) continue;
    dot += "  n" + std::to_string(n) + " [shape=box, style=dashed, label=\"" + dot_escape(node.op_type) + " (view)\\n" +
           dot_escape(node.name) + "\"];\n";
    for (int v : node.inputs)
      if (!report.values[static_cast<std::size_t>(v)].is_scalar_constant)
        edges += "  " + value_node(v) + " -> n" + std::to_string(n) + ";\n";
    edges += "  n" + std::to_string(n) + " -> " + value_node(node.output) + ";\n";
    drawn_from.insert(node.output);
  }
  // A tensor read from memory that its group does not list as an output (a Concat's slice written in
  // place, a value another group reads while its own group keeps it): from its producer in the first
  // group that computes it.
  for (int v : std::set<int>(shown_values)) {
    const int producer = report.values[static_cast<std::size_t>(v)].producer;
    if (producer < 0 || drawn_from.count(v)) continue;
    for (std::size_t k = 0; k < report.groups.size(); ++k) {
      const std::vector<int>& nodes = report.groups[k].nodes;
      if (std::find(nodes.begin(), nodes.end(), producer) == nodes.end()) continue;
      edges += "  g" + std::to_string(k) + "_n" + std::to_string(producer) + " -> " + value_node(v) + ";\n";
      break;
    }
  }
  for (int v : report.inputs) shown_values.insert(v);
  for (int v : report.outputs) shown_values.insert(v);
  for (int v : shown_values) {
    const PlanValue& value = report.values[static_cast<std::size_t>(v)];
    std::string style = "shape=ellipse";
    if (value.is_input) style += ", style=filled, fillcolor=\"#cfe2ff\"";
    else if (value.is_output) style += ", style=filled, fillcolor=\"#d1f2d1\"";
    else if (value.is_constant) style = "shape=note, color=grey50, fontcolor=grey30";
    if (value.is_output && value.is_input) style = "shape=ellipse, style=filled, fillcolor=\"#cfe2ff\"";
    dot += "  v" + std::to_string(v) + " [" + style + ", label=\"" + dot_escape(value.name) + "\\n" + dtype_name(value.dtype) +
           shape_to_string(value.shape) + "\"];\n";
  }
  return dot + edges + "}\n";
}

// The plan as one JSON object: the totals, then each group with what it reads and writes.
std::string plan_to_json(const PlanReport& report, const std::string& model, std::size_t onnx_ops) {
  auto names = [&](const std::vector<int>& values) {
    std::string list;
    for (int v : values) list += (list.empty() ? "\"" : ", \"") + json_escape(report.values[static_cast<std::size_t>(v)].name) + "\"";
    return "[" + list + "]";
  };
  const std::size_t waves = report.groups.empty() ? 0 : report.groups.back().wave + 1;
  std::string json = "{\"model\": \"" + json_escape(model) + "\", \"fused\": " + (report.fused ? "true" : "false") +
                     ", \"onnx_ops\": " + std::to_string(onnx_ops) + ", \"graph_ops\": " + std::to_string(report.op_count) +
                     ", \"views\": " + std::to_string(report.view_count) + ", \"folded_layer_norms\": " +
                     std::to_string(report.folded_layer_norms) + ", \"dispatches\": " + std::to_string(report.groups.size()) +
                     ", \"waves\": " + std::to_string(waves) + ", \"kept_bytes\": " + std::to_string(report.kept_bytes) +
                     ",\n \"groups\": [";
  for (std::size_t k = 0; k < report.groups.size(); ++k) {
    const PlanGroup& g = report.groups[k];
    json += std::string(k ? "," : "") + "\n  {\"index\": " + std::to_string(k) + ", \"label\": \"" + json_escape(g.label) +
            "\", \"root\": \"" + g.root + "\", \"ops\": " + std::to_string(g.nodes.size()) + ", \"wave\": " +
            std::to_string(g.wave) + ", \"inputs\": " + names(g.inputs) + ", \"outputs\": " + names(g.outputs) +
            ", \"kept_bytes\": " + std::to_string(g.kept_bytes) + "}";
  }
  return json + "]}\n";
}

void print_totals(const PlanReport& report, std::size_t onnx_ops) {
  std::printf("total: ");
  if (onnx_ops > 0) std::printf("%zu ONNX ops, ", onnx_ops);
  std::printf("%zu graph ops after import", report.op_count);
  if (report.folded_layer_norms > 0)
    std::printf(" and %d LayerNorm%s folded into the products that read %s", report.folded_layer_norms,
                report.folded_layer_norms == 1 ? "" : "s", report.folded_layer_norms == 1 ? "it" : "them");
  if (report.view_count > 0)
    std::printf(" (+%zu view%s, no dispatch)", report.view_count, report.view_count == 1 ? "" : "s");
  const std::size_t waves = report.groups.empty() ? 0 : report.groups.back().wave + 1;
  std::printf(" -> %zu dispatch%s in %zu wave%s; %s of intermediates kept out of memory\n", report.groups.size(),
              report.groups.size() == 1 ? "" : "es", waves, waves == 1 ? "" : "s", format_bytes(report.kept_bytes).c_str());
}

int fail(const Status& status) {
  std::fprintf(stderr, "vkfuse plan: %s\n", status.to_string().c_str());
  return 1;
}

int run_plan(const PlanFlags& flags) {
  const std::string& model = flags.model.path;
  Progress progress(flags.progress.level());
  progress.begin("importing " + model);
  auto loaded = load_model(flags.model);
  if (!loaded.ok()) return fail(loaded.status());
  progress.end("imported " + model);
  Graph* graph = &loaded->graph;
  const bool fused = !flags.no_fusion;
  DevicePlan limits{};
  limits.subgroup_arithmetic = true;
  std::map<std::string, ImageOutput> image_outputs;
  for (const std::string& spec : flags.image_outputs) {
    const auto eq = spec.find('=');
    const std::string name = spec.substr(0, eq), mode = eq == std::string::npos ? "" : spec.substr(eq + 1);
    if (mode != "color" && mode != "palette")
      return fail(make_error(ErrorCode::kInvalidArgument, "--image-output " + spec + ": expected NAME=color or NAME=palette"));
    ImageOutput out;
    if (mode == "palette") {
      out.mode = ImageOutput::Mode::kPalette;
      out.palette = {{0.0f, 0.0f, 0.0f, 1.0f}, {1.0f, 1.0f, 1.0f, 1.0f}};  // the plan does not depend on the colours
    }
    image_outputs[name] = out;
  }
  const std::vector<std::string>& image_inputs = flags.image_inputs;
  for (const std::string& name : image_inputs) {
    bool found = false;
    for (const TensorDesc& in : graph->inputs()) found = found || in.name == name;
    if (!found) return fail(make_error(ErrorCode::kInvalidArgument, "--image-input " + name + ": the model has no input of that name"));
  }
  progress.begin("planning");
  auto report = make_plan_report(*graph, limits, fused ? FusionMode::kFused : FusionMode::kUnfused, image_outputs);
  if (!report.ok()) return fail(report.status());
  progress.end("planned " + std::to_string(report->groups.size()) + " groups");

  const bool json = flags.json;
  if (json) std::fputs(plan_to_json(*report, model, graph->source_op_count()).c_str(), stdout);
  if (!json)
    std::printf("model: %s (%s plan, default device limits: %u storage buffers per dispatch, subgroup arithmetic)\n",
                model.c_str(), fused ? "fused" : "unfused", limits.max_bindings);
  for (std::size_t k = 0; k < report->groups.size() && !json; ++k) {
    const PlanGroup& g = report->groups[k];
    std::printf("  [%zu] %s\n", k, g.label.c_str());
    std::printf("      %zu op%s, %s root, wave %zu, intermediates kept out of memory: %s (%zu value%s)\n", g.nodes.size(),
                g.nodes.size() == 1 ? "" : "s", g.root.c_str(), g.wave, format_bytes(g.kept_bytes).c_str(),
                g.kept_values.size(), g.kept_values.size() == 1 ? "" : "s");
    print_values("in:", *report, g.inputs);
    print_values("out:", *report, g.outputs);
    for (int v : g.inputs)
      for (const std::string& name : image_inputs)
        if (report->values[static_cast<std::size_t>(v)].name == name)
          std::printf("      image: samples '%s' in its loads (resize and normalization there, no dispatch)\n", name.c_str());
    for (int v : g.outputs)
      if (image_outputs.count(report->values[static_cast<std::size_t>(v)].name))
        std::printf("      image: stores '%s' as texels into the application's image\n",
                    report->values[static_cast<std::size_t>(v)].name.c_str());
    for (const auto& [value, into] : g.stored_into) {
      const int writer = report->values[static_cast<std::size_t>(into)].producer;  // the op that does not run
      std::printf("      into: %s stores into its slice of %s (the %s does not run)\n",
                  report->values[static_cast<std::size_t>(value)].name.c_str(),
                  report->values[static_cast<std::size_t>(into)].name.c_str(),
                  writer < 0 ? "copy" : report->nodes[static_cast<std::size_t>(writer)].op_type.c_str());
    }
    for (const auto& [value, whole] : g.read_from)
      std::printf("      from: %s is read as the first elements of %s (no copy)\n",
                  report->values[static_cast<std::size_t>(value)].name.c_str(),
                  report->values[static_cast<std::size_t>(whole)].name.c_str());
  }
  // ONNX ops are the nodes in the file; graph ops are what remains after import (constant folding,
  // BatchNormalization folding, views) and, in a fused plan, after the LayerNorm fold.
  if (!json) print_totals(*report, graph->source_op_count());

  if (const std::string& dot_path = flags.dot; !dot_path.empty()) {
    std::ofstream out(dot_path, std::ios::trunc);
    out << plan_to_dot(*report);
    out.close();
    if (!out) return fail(make_error(ErrorCode::kIo, "--dot " + dot_path + ": cannot write the file"));
    std::fprintf(json ? stderr : stdout, "wrote %s (Graphviz: dot -Tsvg %s -o plan.svg)\n", dot_path.c_str(), dot_path.c_str());
  }
  return 0;
}

}  // namespace

Command add_plan(CLI::App& root) {
  auto flags = std::make_shared<PlanFlags>();
  CLI::App* app = root.add_subcommand("plan", "prints the fused groups of an ONNX model (no GPU needed)");
  app->footer(kAbout);
  add_model_flags(*app, flags->model, WithPrecision::kYes);
  app->add_option("--dot", flags->dot, "writes the plan as Graphviz (one cluster per group)")->type_name("FILE");
  app->add_flag("--no-fusion", flags->no_fusion, "the unfused plan: one dispatch per op");
  app->add_flag("--json", flags->json, "the plan as JSON: totals, then each group's label, root, ops, wave, inputs, outputs");
  repeatable(app->add_option("--image-input", flags->image_inputs,
                             "the input comes from an image (SessionOptions::image_inputs): marks the groups that "
                             "sample it in their loads (repeatable)"))
      ->type_name("NAME");
  repeatable(app->add_option("--image-output", flags->image_outputs,
                             "the output goes into an image (SessionOptions::image_outputs): plans its store "
                             "(repeatable)"))
      ->type_name("NAME=color|palette");
  add_progress_flags(*app, flags->progress);
  return {app, [flags] { return run_plan(*flags); }};
}

}  // namespace vkfuse::cli
