#include "host/plan_report.h"

#include "host/passes/image_outputs.h"

#include <set>

#include "host/graph.h"
#include "host/passes/fold_layer_norm.h"

namespace vkfuse {
namespace {

const char* root_name(GroupRoot root) {
  switch (root) {
    case GroupRoot::kElementwise: return "elementwise";
    case GroupRoot::kReduce: return "reduce";
    case GroupRoot::kKernel: return "kernel";
    case GroupRoot::kVector: return "vector";
    case GroupRoot::kAttention: return "attention";
    case GroupRoot::kElementRows: return "element rows";
  }
  return "unknown";
}

}  // namespace

Result<PlanReport> make_plan_report(const Graph& graph, const DevicePlan& device, FusionMode mode,
                                    const std::map<std::string, ImageOutput>& image_outputs) {
  std::optional<GraphIR> with_stores;
  if (!image_outputs.empty()) {
    VKFUSE_ASSIGN_OR_RETURN(GraphIR appended, append_image_outputs(graph_ir(graph), image_outputs));
    with_stores.emplace(std::move(appended));
  }
  std::optional<FoldedLayerNorms> folded;
  const GraphIR& ir = graph_to_plan(with_stores ? *with_stores : graph_ir(graph), mode, folded);
  VKFUSE_ASSIGN_OR_RETURN(FusionPlan plan, plan_fusion(ir, device, mode));

  PlanReport report;
  report.fused = mode == FusionMode::kFused;
  report.op_count = plan.op_count;
  report.folded_layer_norms = folded ? folded->folded : 0;
  report.inputs.assign(ir.inputs.begin(), ir.inputs.end());
  report.outputs.assign(ir.outputs.begin(), ir.outputs.end());
  for (const Value& value : ir.values) {
    PlanValue v;
    v.name = value.name;
    v.shape = value.shape;
    v.dtype = value.dtype;
    v.producer = value.producer;
    v.is_input = value.is_input;
    v.is_output = value.is_output;
    v.is_constant = value.constant != nullptr;
    v.is_scalar_constant = value.constant && value.constant->numel() == 1;
    v.bytes = value.bytes();
    report.values.push_back(std::move(v));
  }
  for (const Node& node : ir.nodes) {
    PlanNode n;
    n.name = node.name;
    n.op_type = std::string(node.op->name);
    n.inputs.assign(node.inputs.begin(), node.inputs.end());
    n.output = node.output;
    n.is_view = node.op->kind == OpKind::kView;
    report.view_count += n.is_view ? 1 : 0;
    report.nodes.push_back(std::move(n));
  }
  for (const FusionGroup& group : plan.groups) {
    PlanGroup g;
    g.label = group.label;
    g.root = root_name(group.root);
    g.nodes.assign(group.nodes.begin(), group.nodes.end());
    g.inputs.assign(group.inputs.begin(), group.inputs.end());
    g.outputs.assign(group.outputs.begin(), group.outputs.end());
    g.wave = group.level;
    for (const auto& [value, slice] : group.stored_in) g.stored_into.push_back({value, slice.into});
    for (ValueId v : group.inputs)
      if (auto prefix = plan.prefix_of.find(v); prefix != plan.prefix_of.end()) g.read_from.push_back({v, prefix->second});
    const std::set<ValueId> stored(group.outputs.begin(), group.outputs.end());
    for (NodeId n : group.nodes) {
      const ValueId out = ir.node(n).output;
      if (stored.count(out)) continue;
      g.kept_values.push_back(out);
      g.kept_bytes += report.values[static_cast<std::size_t>(out)].bytes;
    }
    report.kept_bytes += g.kept_bytes;
    report.groups.push_back(std::move(g));
  }
  return report;
}

}  // namespace vkfuse
