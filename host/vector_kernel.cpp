// FusionGroup (GroupRoot::kVector) -> KernelSpec with vector stages (roots/vector_chain.glsl): the
// group's reduction (if any) and products, in node order, each with the elementwise ops that follow it
// as its chain; the value each stage hands on is the one the next product reads (through views), the
// last stage's the group's output.
#include <map>
#include <set>

#include "host/group_kernel.h"
#include "host/shape_inference.h"

namespace vkfuse {
namespace {

// Long rows are folded by a subgroup each, short ones by one invocation each: whichever takes fewer
// serial steps per invocation (loads, plus about five steps of subgroup adds), where the device has
// subgroup arithmetic.
bool fold_by_subgroups(std::int64_t rows, std::int64_t length, const DevicePlan& device) {
  if (!device.subgroup_arithmetic || device.subgroup_size < 2) return false;
  const std::int64_t threads = device.reduce_workgroup, width = device.subgroup_size;
  const std::int64_t alone = (rows + threads - 1) / threads * length;
  const std::int64_t together = (rows * width + threads - 1) / threads * ((length + width - 1) / width + 5);
  return together < alone;
}

}  // namespace

Result<GroupKernel> make_vector_kernel(const GraphIR& graph, const FusionGroup& group, const DevicePlan& device) {
  GroupKernel kernel;
  KernelSpec& spec = kernel.spec;
  spec.label = group.label;
  spec.workgroup_size = device.reduce_workgroup;
  spec.preserve_inf_nan = device.preserve_inf_nan;
  auto fail = [&](const std::string& what) {
    return make_error(ErrorCode::kInternal, "vector group '" + group.label + "': " + what);
  };
  std::map<ValueId, std::pair<std::size_t, KernelOperand>> operand;  // value -> (stage, operand there)
  std::vector<std::vector<ValueId>> stage_values;                      // each stage's non-literal chain inputs
  std::vector<ValueId> input_values;
  // A stored tensor a stage reads whole (its source, a matrix, a bias): the next index of spec.inputs.
  auto add_whole_input = [&](ValueId v) -> Result<int> {
    VKFUSE_ASSIGN_OR_RETURN(KernelInput input, whole_input(graph, v, group.label));
    spec.inputs.push_back(std::move(input));
    input_values.push_back(v);
    return static_cast<int>(spec.inputs.size() - 1);
  };
  // The value the next stage reads: the previous stage's, through views of it.
  auto hand_on = [&](ValueId read) -> Status {
    VKFUSE_ASSIGN_OR_RETURN(ResolvedView view, resolve_view(graph, read));
    auto it = operand.find(view.base);
    if (it == operand.end() || it->second.first + 1 != spec.vector_stages.size())
      return fail("'" + graph.value(read).name + "' is not the previous stage's result");
    spec.vector_stages.back().value = it->second.second;
    return {};
  };
  auto start_stage = [&](VectorStage stage, ValueId out) {
    stage.shape = graph.value(out).shape;
    spec.vector_stages.push_back(std::move(stage));
    stage_values.emplace_back();
    operand[out] = {spec.vector_stages.size() - 1, {KernelOperand::Source::kReduced, 0}};
  };
  for (NodeId n : group.nodes) {
    const Node& node = graph.node(n);
    const Value& out = graph.value(node.output);
    if (node.op->kind == OpKind::kReduce) {
      if (!spec.vector_stages.empty()) return fail("a reduction after the first stage");
      const Shape& x = graph.value(node.inputs[0]).shape;
      VectorStage stage;
      stage.kind = VectorStage::Kind::kReduce;
      stage.combine = to_kernel_combine(node.op->combine);
      stage.mean = node.op->combine == ReduceCombine::kMean;
      spec.images = x.at(0);
      stage.length = 1;
      for (std::size_t a = static_cast<std::size_t>(reduce_first_axis(node, x.size())); a < x.size(); ++a) stage.length *= x[a];
      stage.rows = shape_numel(x) / spec.images / stage.length;
      VKFUSE_TRY(add_whole_input(node.inputs[0]).status());
      start_stage(std::move(stage), node.output);
      continue;
    }
    if (node.op->kind == OpKind::kKernel) {
      if (!node.op->vector_product) return fail("'" + node.name + "' is not a product per image");
      auto product = node.op->vector_product(graph.input_infos(n), {out.shape, out.dtype}, node.op_attrs());
      if (!product.ok()) return product.status().with_context("node '" + node.name + "' (" + std::string(node.op->name) + ")");
      if (spec.vector_stages.empty()) {
        spec.images = out.shape.at(0);
        VKFUSE_TRY(add_whole_input(node.inputs[0]).status());
      } else {
        VKFUSE_TRY(hand_on(node.inputs[0]));
      }
      VectorStage stage;
      stage.rows = product->out;
      stage.length = product->in;
      stage.row_stride = product->row_stride;
      stage.k_stride = product->k_stride;
      VKFUSE_ASSIGN_OR_RETURN(stage.weight, add_whole_input(node.inputs[product->weight]));
      if (product->bias >= 0) {
        VKFUSE_ASSIGN_OR_RETURN(stage.bias, add_whole_input(node.inputs[static_cast<std::size_t>(product->bias)]));
      }
      start_stage(std::move(stage), node.output);
      continue;
    }
    // An elementwise op of the chain of the stage whose values it reads.
    std::optional<std::size_t> at;
    for (ValueId v : node.inputs)
      if (auto it = operand.find(v); it != operand.end()) {
        if (at && *at != it->second.first) return fail("'" + node.name + "' reads two stages");
        at = it->second.first;
      }
    if (!at) return fail("'" + node.name + "' reads no stage's value");
    VectorStage& stage = spec.vector_stages[*at];
    std::vector<KernelOperand> args;
    std::map<ValueId, int> chain_input;  // this node's external inputs, by stage input index
    for (ValueId v : node.inputs) {
      if (auto it = operand.find(v); it != operand.end()) {
        args.push_back(it->second.second);
        continue;
      }
      int index = -1;
      for (std::size_t k = 0; k < stage_values[*at].size(); ++k)
        if (stage_values[*at][k] == v) index = static_cast<int>(k);
      if (index < 0) {
        VKFUSE_ASSIGN_OR_RETURN(KernelInput input, stage_input(graph, v));
        stage.post_inputs.push_back(std::move(input));
        stage_values[*at].push_back(v);
        index = static_cast<int>(stage.post_inputs.size() - 1);
      }
      args.push_back({KernelOperand::Source::kInput, index});
    }
    stage.post_ops.push_back(node_op(graph, node, std::move(args)));
    operand[node.output] = {*at, {KernelOperand::Source::kOp, static_cast<int>(stage.post_ops.size() - 1)}};
  }
  if (spec.vector_stages.empty() || group.outputs.size() != 1) return fail("no stages, or not one output");
  VKFUSE_TRY(hand_on(group.outputs[0]));
  if (graph.is_view(group.outputs[0]) || !group.stored_in.empty()) return fail("the output is not stored whole");
  for (VectorStage& stage : spec.vector_stages) {
    stage.subgroup_rows = fold_by_subgroups(stage.rows, stage.length, device);
    spec.subgroup_reduce = spec.subgroup_reduce || stage.subgroup_rows;
  }
  KernelOutput output;
  output.value = spec.vector_stages.back().value;
  output.dtype = graph.value(group.outputs[0]).dtype;
  output.pre_stage = false;
  spec.outputs.push_back(output);
  spec.domain = spec.reduced = graph.value(group.outputs[0]).shape;

  // Bindings in the code generator's order: the whole inputs, then each stage's chain inputs (each
  // stored tensor once, scalar constants baked), then the output.
  std::set<ValueId> bound;
  auto bind = [&](ValueId v) { return bind_once(graph, v, group.label, device, bound, kernel); };
  for (ValueId v : input_values) VKFUSE_TRY(bind(v));
  for (const std::vector<ValueId>& values : stage_values)
    for (ValueId v : values)
      if (!(graph.value(v).constant && graph.value(v).constant->numel() == 1)) VKFUSE_TRY(bind(v));
  VKFUSE_TRY(check_storage(graph, group.outputs[0], group.label, device));
  kernel.bound_values.push_back(group.outputs[0]);
  return kernel;
}

}  // namespace vkfuse
