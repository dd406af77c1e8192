// FusionGroup (GroupRoot::kAttention) -> KernelSpec (roots/attention.glsl). The first product's result
// enters the row chain as its operand kReduced R (R: the chain's reductions); its operand scales and
// post chain, then the reduce group's ops, run along each row; the chain's value is the second
// product's left operand; the second's post chain and outputs are a kernel root's post stage.
#include "host/attention_kernel.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "host/ops/kernel_support.h"
#include "host/row_chain_builder.h"

namespace vkfuse {
namespace {

// Rows of a query block (the most of 16, 8, 4) and keys of a staged chunk (the most of 64, 32, 16, 8)
// whose left operand rows, scores, chain values and chunk fit shared memory.
std::pair<std::int64_t, std::int64_t> block_shape(std::int64_t d, std::int64_t n, std::int64_t dv, const DevicePlan& device) {
  for (std::int64_t rows : {16, 8, 4})
    for (std::int64_t keys : {64, 32, 16, 8})
      if ((rows * (d + 2 * n) + keys * std::max(d + 1, dv)) * 4 <= static_cast<std::int64_t>(device.shared_memory_bytes))
        return {rows, keys};
  return {0, 0};
}

}  // namespace

Result<AttentionLayout> attention_layout(const GraphIR& graph, const FusionGroup& group, const DevicePlan& device) {
  auto fail = [&](const std::string& why) {
    return group_error(ErrorCode::kUnsupported, group.label, why);
  };
  AttentionLayout layout;
  layout.second = group.anchor;
  for (NodeId n : group.nodes)
    if (n != group.anchor && graph.node(n).op->kind == OpKind::kKernel) {
      if (layout.first != kNoNode) return fail("more than two kernel ops");
      layout.first = n;
    }
  if (layout.first == kNoNode || layout.second == kNoNode) return fail("not two products");
  const Node& first = graph.node(layout.first);
  const Node& second = graph.node(layout.second);
  if (!first.op->matrix_product || !second.op->matrix_product) return fail("not two batched products");
  if (!device.subgroup_arithmetic) return fail("the row chain needs subgroup arithmetic");
  // Where f16 products run on cooperative matrices, they stay there: the three dispatches were faster
  // (docs/tuning-log.md, "attention_layout").
  const auto f16 = [&](const Node& n) {
    return graph.value(n.inputs[0]).dtype == DType::kF16 && graph.value(n.inputs[1]).dtype == DType::kF16;
  };
  if (device.coopmat_f16 && (f16(first) || f16(second))) return fail("its f16 products run on cooperative matrices");
  // The first product's operands in place (an operand scale's source where the group scales it).
  std::vector<TensorInfo> infos;
  for (std::size_t k = 0; k < 2; ++k) {
    const ValueId v = first.inputs[k];
    auto scale = group_operand_scale(graph, group, layout.first, k);
    if (!scale.ok()) return scale.status();
    ResolvedView view;
    if (scale->has_value()) {
      view = (*scale)->view;
      layout.scales.push_back(**scale);
    } else {
      VKFUSE_ASSIGN_OR_RETURN(view, resolve_view(graph, v));
    }
    infos.push_back(view_info_of(graph, v, view));
    layout.operands.push_back(view);
  }
  VKFUSE_ASSIGN_OR_RETURN(layout.qk, first.op->matrix_product(infos));
  VKFUSE_ASSIGN_OR_RETURN(const ResolvedView v_view, resolve_view(graph, second.inputs[1]));
  const TensorInfo p_info{graph.value(second.inputs[0]).shape, graph.value(second.inputs[0]).dtype};
  const TensorInfo v_info = view_info_of(graph, second.inputs[1], v_view);
  const std::vector<TensorInfo> second_infos{p_info, v_info};
  VKFUSE_ASSIGN_OR_RETURN(layout.pv, second.op->matrix_product(second_infos));
  layout.operands.push_back(v_view);
  const MatrixProduct &qk = layout.qk, &pv = layout.pv;
  if (qk.batch != pv.batch || qk.m != pv.m || qk.n != pv.k)
    return fail("the second product does not read the first's rows as its left operand");
  for (const ResolvedView& view : layout.operands) {
    const DType dtype = graph.value(view.base).dtype;
    if (dtype != DType::kF32 && dtype != DType::kF16) return fail("an operand is not a float tensor");
    if (graph.value(view.base).bytes() > device.max_binding_bytes) return fail("an operand is larger than one binding");
  }
  layout.workgroup = std::min<std::uint32_t>(256, device.max_workgroup_invocations);
  std::tie(layout.rows_per_block, layout.keys_per_chunk) = block_shape(qk.k, qk.n, pv.n, device);
  if (layout.rows_per_block == 0) return fail("a block of rows does not fit shared memory");
  return layout;
}

Result<GroupKernel> make_attention_kernel(const GraphIR& graph, const FusionGroup& group, const DevicePlan& device) {
  VKFUSE_ASSIGN_OR_RETURN(AttentionLayout layout, attention_layout(graph, group, device));
  auto fail = [&](const std::string& why) {
    return group_error(ErrorCode::kInternal, group.label, why);
  };
  GroupKernel kernel;
  KernelSpec& spec = kernel.spec;
  const Node& second = graph.node(layout.second);
  const MatrixProduct &qk = layout.qk, &pv = layout.pv;
  spec.label = group.label;
  spec.domain = spec.reduced = graph.value(second.output).shape;
  spec.workgroup_size = layout.workgroup;
  spec.preserve_inf_nan = device.preserve_inf_nan;
  spec.subgroup_reduce = true;
  spec.kernel_root = "roots/attention.glsl";
  const std::int64_t blocks = (qk.m + layout.rows_per_block - 1) / layout.rows_per_block;
  spec.kernel_workgroups = {grid_for(qk.batch * blocks, 1, device), 1, 1};
  auto macro = [](const std::string& batch) { return "(" + batch + ")"; };
  spec.kernel_defines = {
      {"VKF_BATCH", glsl_uint(qk.batch)},        {"VKF_M", glsl_uint(qk.m)},
      {"VKF_ROW_N", glsl_uint(qk.n)},            {"VKF_ROW_PITCH", glsl_uint(qk.n)},
      {"VKF_D", glsl_uint(qk.k)},
      {"VKF_DV", glsl_uint(pv.n)},               {"VKF_BQ", glsl_uint(layout.rows_per_block)},
      {"VKF_Q_BLOCKS", glsl_uint(blocks)},       {"VKF_KC", glsl_uint(layout.keys_per_chunk)},
      {"VKF_A1_BATCH(b)", macro(qk.a_batch)},
      {"VKF_A1_SM", glsl_uint(qk.a_stride_m)},   {"VKF_A1_SK", glsl_uint(qk.a_stride_k)},
      {"VKF_B1_BATCH(b)", macro(qk.b_batch)},    {"VKF_B1_SK", glsl_uint(qk.b_stride_k)},
      {"VKF_B1_SN", glsl_uint(qk.b_stride_n)},   {"VKF_B2_BATCH(b)", macro(pv.b_batch)},
      {"VKF_B2_SK", glsl_uint(pv.b_stride_k)},   {"VKF_B2_SN", glsl_uint(pv.b_stride_n)}};

  // The three operands, bound whole as stored (views of one tensor share its binding).
  std::vector<ValueId> bind_order;
  for (const ResolvedView& view : layout.operands) {
    KernelInput input;
    input.dtype = graph.value(view.base).dtype;
    input.shape = Shape{shape_numel(graph.value(view.base).shape)};
    input.buffer = view.base;
    spec.inputs.push_back(std::move(input));
    bind_order.push_back(view.base);
  }

  // The row chain: the first product's element, its scales and post chain, the reduce group's nodes.
  int reductions = 0;
  for (NodeId n : group.nodes) reductions += graph.node(n).op->kind == OpKind::kReduce ? 1 : 0;
  RowChainBuilder chain(graph, group.label, graph.value(graph.node(layout.first).output).shape, reductions);
  KernelOperand product = chain.source();
  for (const OperandScale& scale : layout.scales) {  // each operand scale on the product: x * s -> (a b) * s
    const Node& node = graph.node(scale.scale);
    std::vector<KernelOperand> args;
    for (ValueId u : node.inputs) {
      if (u == scale.source) {
        args.push_back(product);
        continue;
      }
      VKFUSE_ASSIGN_OR_RETURN(KernelOperand in, chain.input(u));
      args.push_back(in);
    }
    product = chain.add_op(node, std::move(args));
  }
  chain.hold(graph.node(layout.first).output, product);
  std::set<NodeId> post_nodes;  // the second product's post chain
  for (NodeId n : group.nodes) {
    const Node& node = graph.node(n);
    if (n == layout.first || n == layout.second || std::find(group.scales.begin(), group.scales.end(), n) != group.scales.end())
      continue;
    bool after_second = false;
    for (ValueId u : node.inputs)
      after_second = after_second || u == second.output ||
                     std::any_of(post_nodes.begin(), post_nodes.end(), [&](NodeId q) { return graph.node(q).output == u; });
    if (after_second) post_nodes.insert(n);
    else VKFUSE_TRY(chain.add(n));
  }
  VKFUSE_ASSIGN_OR_RETURN(spec.row_chain, chain.finish(second.inputs[0]));

  // The second product's post chain and the outputs (its result is the post stage's reduced value 0).
  std::map<ValueId, KernelOperand> post_operand{{second.output, {KernelOperand::Source::kReduced, 0}}};
  std::map<ValueId, int> post_input;
  std::vector<ValueId> post_values;
  for (NodeId n : post_nodes) {
    const Node& node = graph.node(n);
    if (node.op->kind != OpKind::kElementwise) return fail("'" + node.name + "' after the second product");
    std::vector<KernelOperand> args;
    for (ValueId u : node.inputs) {
      if (auto it = post_operand.find(u); it != post_operand.end()) {
        args.push_back(it->second);
        continue;
      }
      if (!post_input.count(u)) {
        VKFUSE_ASSIGN_OR_RETURN(KernelInput input, stage_input(graph, u));
        if (!input.is_literal) post_values.push_back(u);
        spec.post_inputs.push_back(std::move(input));
        post_input[u] = static_cast<int>(spec.post_inputs.size() - 1);
      }
      args.push_back({KernelOperand::Source::kInput, post_input[u]});
    }
    spec.post_ops.push_back(node_op(graph, node, std::move(args)));
    post_operand[node.output] = {KernelOperand::Source::kOp, static_cast<int>(spec.post_ops.size() - 1)};
  }
  for (ValueId v : group.outputs) {
    auto it = post_operand.find(v);
    if (it == post_operand.end()) return fail("'" + graph.value(v).name + "' is inside the chain and cannot be stored");
    KernelOutput output;
    output.value = it->second;
    output.dtype = graph.value(v).dtype;
    output.pre_stage = false;
    output.placement = output_placement(group, v);
    spec.outputs.push_back(output);
  }

  // Bindings in the code generator's order: the operands, the chain's stored inputs, the post inputs
  // (each stored tensor once), the outputs.
  std::set<ValueId> bound;
  auto bind = [&](ValueId v) { return bind_once(graph, v, group.label, device, bound, kernel); };
  for (ValueId v : bind_order) VKFUSE_TRY(bind(v));
  for (ValueId v : chain.stored()) VKFUSE_TRY(bind(v));
  for (ValueId v : post_values) VKFUSE_TRY(bind(v));
  for (ValueId v : group.outputs) {
    VKFUSE_TRY(check_storage(graph, v, group.label, device));
    kernel.bound_values.push_back(output_binding(group, v));
  }
  return kernel;
}

}  // namespace vkfuse
