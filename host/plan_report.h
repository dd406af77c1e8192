// PlanReport: what the fusion planner would do with a graph, as plain data for tools to print (the
// `vkfuse plan` text and Graphviz output live in tools/cmd_plan.cpp). Pure: no GPU.
//
// Ids in the report are the graph's own (values and nodes index `values` and `nodes`), so a value or a
// node that several groups recompute appears once here and in each of those groups.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <vkfuse/vkfuse.hpp>

#include "backend/device_plan.h"
#include "host/fusion_planner.h"

namespace vkfuse {

struct PlanValue {
  std::string name;
  Shape shape;
  DType dtype = DType::kF32;
  int producer = -1;  // node id, -1 for graph inputs and constants
  bool is_input = false;
  bool is_output = false;
  bool is_constant = false;
  bool is_scalar_constant = false;  // baked into the shader as a literal: never bound
  std::uint64_t bytes = 0;
};

struct PlanNode {
  std::string name;
  std::string op_type;  // "Conv", "Slice"
  std::vector<int> inputs;
  int output = -1;
  bool is_view = false;  // an index map over a stored tensor: in no group, never dispatched
};

struct PlanGroup {
  std::string label;       // "Conv -> Add -> Relu"
  std::string root;        // "elementwise", "reduce", "kernel"
  std::vector<int> nodes;  // execution order inside the group
  std::vector<int> inputs;   // values read from memory
  std::vector<int> outputs;  // values written to memory
  std::size_t wave = 0;      // FusionGroup::level: a barrier separates each wave from the next
  std::vector<std::pair<int, int>> stored_into;  // (output, the value it is stored into: a Concat, a copy)
  std::vector<std::pair<int, int>> read_from;    // (input, the value whose leading elements it is: no copy)
  // Values computed inside the group and never written to memory, and their bytes.
  std::vector<int> kept_values;
  std::uint64_t kept_bytes = 0;
};

struct PlanReport {
  bool fused = true;
  std::vector<PlanValue> values;
  std::vector<PlanNode> nodes;
  std::vector<PlanGroup> groups;  // execution order; one dispatch each
  std::vector<int> inputs, outputs;
  std::size_t op_count = 0;    // nodes that compute (views excluded)
  std::size_t view_count = 0;  // nodes that are views
  int folded_layer_norms = 0;  // fused plans: LayerNorms folded into the products that read them
  std::uint64_t kept_bytes = 0;  // over all groups
};

// `image_outputs`: graph outputs written into images (SessionOptions::image_outputs), their stores
// appended as a session appends them.
Result<PlanReport> make_plan_report(const Graph& graph, const DevicePlan& device, FusionMode mode,
                                    const std::map<std::string, ImageOutput>& image_outputs = {});

}  // namespace vkfuse
