#include "host/group_kernel.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "host/attention_kernel.h"
#include "host/element_rows_kernel.h"
#include "host/shape_inference.h"
#include "host/view_reorder.h"

namespace vkfuse {
namespace {

std::string resolve_function(const OpDef& op, DType out) {
  std::string name(op.glsl_function);
  const std::string token = "{out}";
  if (const std::size_t at = name.find(token); at != std::string::npos) name.replace(at, token.size(), dtype_name(out));
  return name;
}

}  // namespace

KernelCombine to_kernel_combine(ReduceCombine combine) {
  switch (combine) {
    case ReduceCombine::kMax: return KernelCombine::kMax;
    case ReduceCombine::kMin: return KernelCombine::kMin;
    case ReduceCombine::kProd: return KernelCombine::kProd;
    default: return KernelCombine::kSum;
  }
}

KernelOp node_op(const GraphIR& graph, const Node& node, std::vector<KernelOperand> args) {
  const DType out = graph.value(node.output).dtype;
  return {std::string(node.op->name), "ops/" + std::string(node.op->snippet) + ".glsl", resolve_function(*node.op, out),
          std::move(args), node.attrs, out};
}

Result<ResolvedView> resolve_view(const GraphIR& graph, ValueId value) {
  std::vector<NodeId> chain;
  ValueId base = value;
  while (graph.is_view(base)) {
    chain.push_back(graph.value(base).producer);
    base = graph.node(chain.back()).inputs[0];
  }
  StridedLayout layout = contiguous_layout(graph.value(base).shape);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const Node& node = graph.node(*it);
    if (Status s = node.op->view(layout, node.op_attrs()); !s.ok()) return s.with_context("node '" + node.name + "'");
  }
  return ResolvedView{base, std::move(layout)};
}

std::optional<OperandScale> operand_scale(const GraphIR& graph, NodeId reader, std::size_t k) {
  const Node& node = graph.node(reader);
  if (node.op->kind != OpKind::kKernel || k >= node.inputs.size() || !(node.op->linear_inputs >> k & 1u)) return std::nullopt;
  std::vector<NodeId> chain;  // the views from input k back to the scale's result, outermost first
  ValueId scaled = node.inputs[k];
  while (graph.is_view(scaled)) {
    chain.push_back(graph.value(scaled).producer);
    scaled = graph.node(chain.back()).inputs[0];
  }
  const NodeId p = graph.value(scaled).producer;
  if (p == kNoNode || graph.node(p).op->kind != OpKind::kElementwise || graph.node(p).inputs.size() != 2) return std::nullopt;
  const Node& scale = graph.node(p);
  for (std::size_t j = 0; j < 2; ++j) {
    const Value& x = graph.value(scale.inputs[j]);
    const Value& c = graph.value(scale.inputs[1 - j]);
    if (!(scale.op->linear_inputs >> j & 1u) || !c.constant || c.constant->numel() != 1 || x.constant ||
        x.shape != graph.value(scaled).shape || x.dtype != graph.value(scaled).dtype)
      continue;
    auto source = resolve_view(graph, scale.inputs[j]);
    if (!source.ok()) return std::nullopt;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const Node& view = graph.node(*it);
      if (!view.op->view(source->layout, view.op_attrs()).ok()) return std::nullopt;
    }
    return OperandScale{p, scale.inputs[j], std::move(*source)};
  }
  return std::nullopt;
}

Result<std::optional<OperandScale>> group_operand_scale(const GraphIR& graph, const FusionGroup& group, NodeId reader,
                                                        std::size_t k) {
  const Node& node = graph.node(reader);
  const NodeId source_of = graph.value(graph.view_base(node.inputs[k])).producer;
  if (std::find(group.scales.begin(), group.scales.end(), source_of) == group.scales.end()) return std::optional<OperandScale>{};
  auto scale = operand_scale(graph, reader, k);
  if (!scale || scale->scale != source_of)
    return group_error(ErrorCode::kInternal, group.label, "node '" + node.name + "' reads a view of a member");
  return scale;
}

namespace {

// Whether `view` is its stored base whole, in row-major order.
bool is_whole_base(const GraphIR& graph, const ResolvedView& view) {
  const StridedLayout contiguous = contiguous_layout(view.layout.shape);
  return view.layout.offset == 0 && view.layout.strides == contiguous.strides &&
         shape_numel(graph.value(view.base).shape) == shape_numel(view.layout.shape);
}

}  // namespace

bool is_contiguous_value(const GraphIR& graph, ValueId v) {
  auto view = resolve_view(graph, v);
  return view.ok() && is_whole_base(graph, *view);
}

TensorInfo view_info_of(const GraphIR& graph, ValueId v, const ResolvedView& view) {
  TensorInfo info{graph.value(v).shape, graph.value(v).dtype};
  if (!is_whole_base(graph, view)) {
    info.strides = view.layout.strides;
    info.offset = view.layout.offset;
  }
  return info;
}

TensorInfo view_info(const GraphIR& graph, ValueId v) {
  auto view = resolve_view(graph, v);
  return view.ok() ? view_info_of(graph, v, *view) : TensorInfo{graph.value(v).shape, graph.value(v).dtype};
}

TensorInfo GraphIR::input_info(NodeId n, ValueId u) const {
  return node(n).op->reads_in_place ? view_info(*this, u) : TensorInfo{value(u).shape, value(u).dtype};
}

std::vector<TensorInfo> GraphIR::input_infos(NodeId n) const {
  std::vector<TensorInfo> infos;
  for (ValueId u : node(n).inputs) infos.push_back(input_info(n, u));
  return infos;
}

Status group_error(ErrorCode code, const std::string& label, const std::string& why) {
  return make_error(code, "group '" + label + "': " + why);
}

Status check_storage(const GraphIR& graph, ValueId v, const std::string& label, const DevicePlan& device) {
  const Value& value = graph.value(v);
  const bool f16 = value.dtype == DType::kF16, boolean = value.dtype == DType::kBool || value.dtype == DType::kU8;
  if ((f16 && !device.f16_storage) || (boolean && !device.u8_storage))
    return group_error(ErrorCode::kUnsupported, label,
                       "tensor '" + value.name + "' is " + dtype_name(value.dtype) + ", which needs " +
                           (f16 ? "storageBuffer16BitAccess" : "storageBuffer8BitAccess") +
                           "; this device does not offer it (use f32, or Cast inside the graph)");
  return {};
}

Status bind_once(const GraphIR& graph, ValueId v, const std::string& label, const DevicePlan& device,
                 std::set<ValueId>& bound, GroupKernel& kernel) {
  VKFUSE_TRY(check_storage(graph, v, label, device));
  VKFUSE_ASSIGN_OR_RETURN(ResolvedView view, resolve_view(graph, v));
  if (bound.insert(view.base).second) kernel.bound_values.push_back(view.base);
  return {};
}

Result<KernelInput> whole_input(const GraphIR& graph, ValueId v, const std::string& label) {
  if (!is_contiguous_value(graph, v))
    return group_error(ErrorCode::kInternal, label, "'" + graph.value(v).name + "' is read through a strided view");
  VKFUSE_ASSIGN_OR_RETURN(ResolvedView view, resolve_view(graph, v));
  KernelInput input;
  input.dtype = graph.value(v).dtype;
  input.shape = graph.value(v).shape;
  input.buffer = view.base;
  return input;
}

ElementPlacement output_placement(const FusionGroup& group, ValueId v) {
  auto slice = group.stored_in.find(v);
  return slice == group.stored_in.end() ? ElementPlacement{} : slice->second.placement;
}

ValueId output_binding(const FusionGroup& group, ValueId v) {
  auto slice = group.stored_in.find(v);
  return slice == group.stored_in.end() ? v : slice->second.into;
}

Result<KernelInput> stage_input(const GraphIR& graph, ValueId v) {
  const Value& value = graph.value(v);
  KernelInput input;
  input.dtype = value.dtype;
  input.shape = value.shape;
  if (value.constant && value.constant->numel() == 1) {
    input.is_literal = true;
    input.literal = value.constant->to_floats().at(0);
    return input;
  }
  VKFUSE_ASSIGN_OR_RETURN(ResolvedView view, resolve_view(graph, v));
  input.buffer = view.base;
  if (view.layout.strides != contiguous_layout(view.layout.shape).strides || view.layout.offset != 0) {
    input.strides = view.layout.strides;
    input.offset = view.layout.offset;
  }
  return input;
}

Result<GroupKernel> make_group_kernel(const GraphIR& graph, const FusionGroup& group, const DevicePlan& device) {
  if (group.root == GroupRoot::kVector) return make_vector_kernel(graph, group, device);
  if (group.root == GroupRoot::kAttention) return make_attention_kernel(graph, group, device);
  if (group.root == GroupRoot::kElementRows) return make_element_rows_kernel(graph, group, device);
  GroupKernel kernel;
  KernelSpec& spec = kernel.spec;
  spec.label = group.label;
  spec.domain = group.domain;
  spec.workgroup_size = group.root == GroupRoot::kReduce ? device.reduce_workgroup : device.elementwise_workgroup;
  spec.preserve_inf_nan = device.preserve_inf_nan;
  spec.subgroup_reduce = group.root == GroupRoot::kReduce && device.subgroup_arithmetic;

  // Stage of each node: pre (over the domain), reduce (a reduction, or a kernel op's result), post
  // (over the reduced shape, or in a kernel op's stores). A node that reads reduced values is post when it
  // reads nothing of the domain and has the reduced shape; otherwise it is a pre node of a later walk
  // over the row (the planner's row passes), which reads the reduced values it needs as uniforms.
  // kPlane: a reduction in a kernel group, of the anchor's result over its planes (FusionPlanner, plane
  // sums): the root folds it as it stores.
  enum class Stage { kPre, kReduce, kPost, kPlane };
  std::map<NodeId, Stage> stage;
  std::map<ValueId, NodeId> produced;
  for (NodeId n : group.nodes) produced[graph.node(n).output] = n;
  // Post-fusion through a reordering view (host/view_reorder.h; FusionPlanner::forms_valid_group): the
  // view a post chain reads a member value through, the space its order and the anchor's share, and the
  // post nodes after it (`viewed`), which run at the anchor's element in that space.
  std::optional<ValueId> crossing;
  for (NodeId n : group.nodes)
    for (ValueId v : graph.node(n).inputs)
      if (graph.node(n).op->kind != OpKind::kKernel && graph.is_view(v) && produced.count(graph.view_base(v))) crossing = v;
  std::optional<ReorderedSpace> space;
  StridedLayout view_layout, own_layout;
  if (crossing) {
    VKFUSE_ASSIGN_OR_RETURN(ResolvedView view, resolve_view(graph, *crossing));
    space = reordered_space(graph.value(view.base).shape, view.layout);
    if (group.root != GroupRoot::kKernel || !space)
      return group_error(ErrorCode::kInternal, group.label, "a member reads a view of another");
    view_layout = view.layout;
    own_layout = contiguous_layout(graph.value(view.base).shape);
  }
  auto member_value = [&](ValueId v) { return crossing && v == *crossing ? graph.view_base(v) : v; };
  std::set<NodeId> viewed;
  // A post input read at the anchor's element: strided over the shared space, from its reader's order.
  auto in_space = [&](KernelInput input, bool in_view) {
    if (!space || input.is_literal) return input;
    if (shape_numel(input.shape) == 1) {  // one element: of the space's rank
      input.shape = Shape(space->domain.size(), 1);
      input.strides.clear();
      return input;
    }
    const StridedLayout& layout = in_view ? view_layout : own_layout;
    input.strides = strides_over(*space, layout, broadcast_strides(input.shape, input.strides, layout.shape));
    input.shape = space->domain;
    for (std::size_t k = 0; k < input.shape.size(); ++k)
      if (input.strides[k] == 0) input.shape[k] = 1;
    return input;
  };
  for (NodeId n : group.nodes) {
    const Node& node = graph.node(n);
    for (ValueId v : node.inputs)
      if ((crossing && v == *crossing) || (produced.count(v) && viewed.count(produced.at(v)))) viewed.insert(n);
    Stage s = Stage::kPre;
    if (node.op->kind == OpKind::kReduce && group.root == GroupRoot::kKernel) {
      s = Stage::kPlane;
    } else if (node.op->kind == OpKind::kReduce) {
      s = Stage::kReduce;
      spec.reduce_axis = reduce_first_axis(node, graph.value(node.inputs[0]).shape.size());
      spec.reduced = graph.value(node.output).shape;
    } else if (node.op->kind == OpKind::kKernel && n != group.anchor) {
      s = Stage::kPre;  // an element computed in the anchor's loads
    } else if (node.op->kind == OpKind::kKernel) {
      s = Stage::kReduce;
      spec.reduced = graph.value(node.output).shape;
    } else {
      bool reads_pre = false, reads_reduced = false;
      for (ValueId v : node.inputs)
        if (auto it = produced.find(member_value(v)); it != produced.end())
          (stage[it->second] == Stage::kPre ? reads_pre : reads_reduced) = true;
      if (reads_reduced && !reads_pre && (group.root == GroupRoot::kKernel || graph.value(node.output).shape == spec.reduced))
        s = Stage::kPost;
    }
    stage[n] = s;
  }

  // Operand of a value in its stage: a computed value, or a (possibly new) stage input.
  std::map<ValueId, KernelOperand> pre_operand, post_operand;
  std::map<ValueId, KernelOperand> viewed_operand;  // post inputs read in the view's order
  std::map<ValueId, std::pair<KernelOperand, double>> plane_operand;  // a plane sum: what it folds, its scale
  bool plane_sums = false;
  for (const auto& [n, s] : stage) plane_sums = plane_sums || s == Stage::kPlane;
  std::map<ValueId, int> reduced_index;
  auto input_operand = [&](ValueId v, bool post, bool in_view = false) -> Result<KernelOperand> {
    auto& operands = in_view ? viewed_operand : post ? post_operand : pre_operand;
    if (auto it = operands.find(v); it != operands.end()) return it->second;
    VKFUSE_ASSIGN_OR_RETURN(KernelInput input, stage_input(graph, v));
    auto& inputs = post ? spec.post_inputs : spec.inputs;
    inputs.push_back(post ? in_space(std::move(input), in_view) : std::move(input));
    KernelOperand operand{KernelOperand::Source::kInput, static_cast<int>(inputs.size() - 1)};
    operands[v] = operand;
    return operand;
  };

  std::vector<ValueId> pre_input_values, load_input_values, post_input_values;
  std::set<ValueId> element_values;  // read by an element: bound even where a scalar constant
  std::map<ValueId, std::uint64_t> chunk_bytes;  // stored tensors a kernel op reads in chunks
  // Pre-fusion: an anchor argument the group computes (an elementwise chain the planner copied in) is
  // evaluated in the anchor's loads, over the chain's own inputs.
  // A stored tensor a kernel op (an anchor, or an element in its loads) reads whole, from its first
  // element on: its binding's base, contiguous; or, for an op that reads views in place
  // (OpDef::reads_in_place), the stored tensor a view lies in, which the launch addresses itself.
  auto kernel_op_input = [&](ValueId v, const Node& reader, const ResolvedView& view) -> Result<KernelInput> {
    const bool contiguous = view_info_of(graph, v, view).strides.empty();
    if (!contiguous && !reader.op->reads_in_place)
      return make_error(ErrorCode::kInternal, "node '" + reader.name + "': a kernel op reads a strided view");
    KernelInput input;
    input.dtype = graph.value(v).dtype;
    input.shape = contiguous ? graph.value(v).shape : Shape{shape_numel(graph.value(view.base).shape)};
    input.buffer = view.base;
    return input;
  };
  std::map<ValueId, float> load_costs;  // arguments computed from an element: its cost (TensorInfo::load_cost)
  auto build_load = [&](ValueId v) -> Result<KernelLoad> {
    std::set<NodeId> chain;
    std::vector<NodeId> stack{produced.at(v)};
    while (!stack.empty()) {
      const NodeId q = stack.back();
      stack.pop_back();
      if (!chain.insert(q).second || graph.node(q).op->kind == OpKind::kKernel) continue;  // an element's inputs are stored
      for (ValueId u : graph.node(q).inputs)
        if (auto it = produced.find(u); it != produced.end()) stack.push_back(it->second);
    }
    KernelLoad load;
    std::map<ValueId, KernelOperand> operand;
    for (NodeId q : chain) {  // the element first: its inputs bind before the chain's
      const Node& node = graph.node(q);
      if (node.op->kind != OpKind::kKernel) continue;
      if (load.element || !node.op->element)
        return group_error(ErrorCode::kInternal, group.label, "'" + node.name + "' in a kernel op's loads");
      std::vector<TensorInfo> infos;
      KernelElement element;
      for (ValueId u : node.inputs) {
        if (produced.count(u))
          return make_error(ErrorCode::kInternal, "node '" + node.name + "': an element reads a computed value");
        VKFUSE_ASSIGN_OR_RETURN(ResolvedView view, resolve_view(graph, u));
        VKFUSE_ASSIGN_OR_RETURN(KernelInput input, kernel_op_input(u, node, view));
        infos.push_back({input.shape, input.dtype});
        element.inputs.push_back(std::move(input));
        load_input_values.push_back(u);
        element_values.insert(u);
      }
      const Value& out = graph.value(node.output);
      auto launch = node.op->element(infos, {out.shape, out.dtype}, node.op_attrs());
      if (!launch.ok()) return launch.status().with_context("node '" + node.name + "' (" + std::string(node.op->name) + ")");
      element.shape = out.shape;
      element.root = launch->root;
      element.defines = launch->defines;
      load_costs[v] = launch->cost;
      load.element = std::move(element);
      operand[node.output] = {KernelOperand::Source::kReduced, 0};
    }
    for (NodeId q : chain) {  // ascending ids: topological order
      const Node& node = graph.node(q);
      if (node.op->kind == OpKind::kKernel) continue;
      if (node.op->kind != OpKind::kElementwise)
        return group_error(ErrorCode::kInternal, group.label, "'" + node.name + "' in a kernel op's loads");
      std::vector<KernelOperand> args;
      for (ValueId u : node.inputs) {
        if (auto it = operand.find(u); it != operand.end()) {
          args.push_back(it->second);
          continue;
        }
        VKFUSE_ASSIGN_OR_RETURN(KernelInput input, stage_input(graph, u));
        if (!input.is_literal) load_input_values.push_back(u);
        load.inputs.push_back(std::move(input));
        args.push_back(operand[u] = {KernelOperand::Source::kInput, static_cast<int>(load.inputs.size() - 1)});
      }
      load.ops.push_back(node_op(graph, node, std::move(args)));
      operand[node.output] = {KernelOperand::Source::kOp, static_cast<int>(load.ops.size() - 1)};
    }
    load.value = operand.at(v);
    return load;
  };
  // A kernel op (the group's anchor): its launcher picks the template, constants and geometry; its
  // inputs are bound whole, in argument order, and its result is the post stage's reduced value 0.
  // Operand scales (FusionPlanner::absorb_operand_scales): the anchor's result scaled in its stores.
  std::optional<KernelOperand> scaled_result;
  std::vector<OperandScale> scales;
  // An anchor's input bound whole; larger than one binding: consecutive chunks, each a whole number of
  // binding alignments.
  auto bind_anchor_input = [&](KernelInput input, ValueId read) {
    if (graph.value(input.buffer).bytes() > device.max_binding_bytes) {
      input.chunk_elements = static_cast<std::int64_t>(device.chunk_bytes() / dtype_size(input.dtype));
      chunk_bytes[input.buffer] = device.chunk_bytes();
    }
    spec.inputs.push_back(std::move(input));
    pre_input_values.push_back(read);
  };
  auto add_anchor = [&](NodeId n) -> Status {
    const Node& node = graph.node(n);
    const Value& out = graph.value(node.output);
    std::vector<TensorInfo> infos;
    for (std::size_t k = 0; k < node.inputs.size(); ++k) {
      const ValueId v = node.inputs[k];
      const Value& value = graph.value(v);
      infos.push_back(graph.input_info(n, v));
      VKFUSE_ASSIGN_OR_RETURN(const std::optional<OperandScale> scale, group_operand_scale(graph, group, n, k));
      if (scale) {  // its source, in place
        infos.back() = view_info_of(graph, v, scale->view);
        VKFUSE_ASSIGN_OR_RETURN(KernelInput input, kernel_op_input(v, node, scale->view));
        bind_anchor_input(std::move(input), scale->source);
        scales.push_back(*scale);
        continue;
      }
      if (produced.count(v)) {
        VKFUSE_ASSIGN_OR_RETURN(KernelLoad load, build_load(v));
        if (auto cost = load_costs.find(v); cost != load_costs.end()) infos.back().load_cost = cost->second;
        KernelInput input;
        input.dtype = value.dtype;
        input.shape = value.shape;
        input.load = static_cast<int>(spec.loads.size());
        spec.loads.push_back(std::move(load));
        spec.inputs.push_back(std::move(input));
        continue;
      }
      VKFUSE_ASSIGN_OR_RETURN(ResolvedView view, resolve_view(graph, v));
      VKFUSE_ASSIGN_OR_RETURN(KernelInput input, kernel_op_input(v, node, view));
      bind_anchor_input(std::move(input), v);
    }
    TensorInfo out_info{out.shape, out.dtype};
    out_info.plane_sums = plane_sums;
    out_info.pooled_only = plane_sums && std::all_of(group.outputs.begin(), group.outputs.end(), [&](ValueId v) {
      return graph.node(produced.at(v)).op->kind == OpKind::kReduce;
    });
    auto launch = node.op->launch(infos, out_info, node.op_attrs(), device);
    if (!launch.ok()) return launch.status().with_context("node '" + node.name + "' (" + std::string(node.op->name) + ")");
    if (launch->plane_sums != plane_sums)
      return group_error(ErrorCode::kInternal, group.label, "node '" + node.name + "' (" +
                         std::string(node.op->name) + ") cannot sum its result over planes");
    spec.workgroup_size = launch->workgroup_size;
    spec.kernel_root = launch->root;
    spec.kernel_defines = launch->defines;
    spec.kernel_element = launch->element;
    spec.kernel_vec4_inputs = launch->vec4_inputs;
    spec.kernel_workgroups = launch->workgroups;
    spec.split_counters = launch->split_counters;
    spec.split_partial_bytes = launch->split_partial_bytes;
    reduced_index[node.output] = 0;
    // Each scale, as its node computes it, on the product: x * s -> (a b) * s.
    for (const OperandScale& s : scales) {
      const Node& scale = graph.node(s.scale);
      std::vector<KernelOperand> args;
      for (ValueId u : scale.inputs) {
        if (u == s.source) {
          args.push_back(scaled_result.value_or(KernelOperand{KernelOperand::Source::kReduced, 0}));
          continue;
        }
        if (!post_operand.count(u)) post_input_values.push_back(u);
        VKFUSE_ASSIGN_OR_RETURN(KernelOperand operand, input_operand(u, true));
        args.push_back(operand);
      }
      spec.post_ops.push_back(node_op(graph, scale, std::move(args)));
      scaled_result = KernelOperand{KernelOperand::Source::kOp, static_cast<int>(spec.post_ops.size() - 1)};
    }
    return {};
  };
  // Reduced value `index` as the post stage reads it: the anchor's result (0 in a kernel group) scaled
  // where scales apply.
  auto reduced_operand = [&](int index) {
    return index == 0 && scaled_result ? *scaled_result : KernelOperand{KernelOperand::Source::kReduced, index};
  };
  // A reduced or post-stage value read by a later walk over the row: reductions by index; post ops are
  // evaluated again in the pre stage, where their operands (reduced values, inputs of the reduced shape
  // that broadcast along the row) are uniform over each row.
  std::function<Result<KernelOperand>(ValueId)> row_operand = [&](ValueId v) -> Result<KernelOperand> {
    if (auto it = reduced_index.find(v); it != reduced_index.end())
      return KernelOperand{KernelOperand::Source::kReduced, it->second};
    if (auto it = pre_operand.find(v); it != pre_operand.end()) return it->second;
    const Node& node = graph.node(produced.at(v));
    std::vector<KernelOperand> args;
    for (ValueId u : node.inputs) {
      if (produced.count(u)) {
        VKFUSE_ASSIGN_OR_RETURN(KernelOperand operand, row_operand(u));
        args.push_back(operand);
        continue;
      }
      if (!pre_operand.count(u)) pre_input_values.push_back(u);
      VKFUSE_ASSIGN_OR_RETURN(KernelOperand operand, input_operand(u, false));
      args.push_back(operand);
    }
    spec.ops.push_back(node_op(graph, node, std::move(args)));
    return pre_operand[v] = {KernelOperand::Source::kOp, static_cast<int>(spec.ops.size() - 1)};
  };
  for (NodeId n : group.nodes) {
    const Node& node = graph.node(n);
    if (n == group.anchor) {
      VKFUSE_TRY(add_anchor(n));
      continue;
    }
    if (group.root == GroupRoot::kKernel && stage[n] == Stage::kPre) continue;  // in the anchor's loads
    if (stage[n] == Stage::kPlane) {
      const ValueId in = node.inputs.at(0);
      auto it = reduced_index.find(in);
      const KernelOperand folded = it != reduced_index.end() ? reduced_operand(it->second) : post_operand.at(in);
      const double size = static_cast<double>(shape_numel(graph.value(in).shape) / shape_numel(graph.value(node.output).shape));
      plane_operand[node.output] = {folded, node.op->combine == ReduceCombine::kMean ? 1.0 / size : 1.0};
      continue;
    }
    const bool post = stage[n] == Stage::kPost, in_view = viewed.count(n) > 0;
    std::vector<KernelOperand> args;
    for (ValueId read : node.inputs) {
      const ValueId v = member_value(read);
      if (auto it = reduced_index.find(v); post && it != reduced_index.end()) {
        args.push_back(reduced_operand(it->second));
        continue;
      }
      if (auto it = produced.find(v); !post && it != produced.end() && stage[it->second] != Stage::kPre) {
        VKFUSE_ASSIGN_OR_RETURN(KernelOperand operand, row_operand(v));
        args.push_back(operand);
        continue;
      }
      auto& operands = post ? post_operand : pre_operand;
      if (!operands.count(v) && !viewed_operand.count(v) && !produced.count(v))
        (post ? post_input_values : pre_input_values).push_back(v);
      VKFUSE_ASSIGN_OR_RETURN(KernelOperand operand, input_operand(v, post, in_view && !produced.count(v)));
      args.push_back(operand);
    }
    if (stage[n] == Stage::kReduce) {
      spec.reductions.push_back({args.at(0), to_kernel_combine(node.op->combine), node.op->combine == ReduceCombine::kMean});
      reduced_index[node.output] = static_cast<int>(spec.reductions.size() - 1);
      continue;
    }
    auto& ops = post ? spec.post_ops : spec.ops;
    ops.push_back(node_op(graph, node, std::move(args)));
    (post ? post_operand : pre_operand)[node.output] = {KernelOperand::Source::kOp, static_cast<int>(ops.size() - 1)};
  }

  for (ValueId v : group.outputs) {
    const NodeId n = produced.at(v);
    KernelOutput output;
    output.dtype = graph.value(v).dtype;
    output.pre_stage = stage[n] == Stage::kPre;
    if (output.pre_stage && group.root == GroupRoot::kKernel)
      return group_error(ErrorCode::kInternal, group.label, "'" + graph.value(v).name +
                         "' is computed in a kernel op's loads and cannot be stored");
    if (stage[n] == Stage::kReduce) {
      output.value = reduced_operand(reduced_index.at(v));
    } else if (stage[n] == Stage::kPlane) {
      std::tie(output.value, output.plane_scale) = plane_operand.at(v);
      output.plane_sum = true;
    } else {
      output.value = (output.pre_stage ? pre_operand : post_operand).at(v);
    }
    if (output.pre_stage && group.root == GroupRoot::kElementwise && graph.value(v).shape != spec.domain)
      return group_error(ErrorCode::kInternal, group.label, "output '" + graph.value(v).name +
                         "' does not have the group's shape");
    output.placement = output_placement(group, v);
    if (viewed.count(n)) {  // contiguous in the view's order, stored from the anchor's
      if (group.stored_in.count(v))
        return group_error(ErrorCode::kInternal, group.label, "'" + graph.value(v).name +
                           "' is stored through a view and into another tensor");
      const StridedLayout contiguous = contiguous_layout(graph.value(v).shape);
      output.placement = placement_of(space->domain, strides_over(*space, view_layout, contiguous.strides));
    }
    spec.outputs.push_back(output);
  }
  if (space) spec.domain = spec.reduced = space->domain;

  // Binding order (see count_bindings): the distinct stored tensors the pre inputs view, then the post
  // inputs', in order of first use; then the outputs.
  std::set<ValueId> bound;
  // Scalar constants are baked into elementwise stages; a kernel op binds every input.
  const bool anchored = group.root == GroupRoot::kKernel;
  auto bind_inputs = [&](const std::vector<ValueId>& values, bool anchor_inputs) -> Status {
    for (ValueId v : values) {
      const Value& value = graph.value(v);
      if (!anchor_inputs && value.constant && value.constant->numel() == 1 && !element_values.count(v)) continue;
      VKFUSE_ASSIGN_OR_RETURN(ResolvedView view, resolve_view(graph, v));
      auto chunked = chunk_bytes.find(view.base);
      if (chunked != chunk_bytes.end() && !anchor_inputs)  // a post-stage read: one binding cannot hold it
        return group_error(ErrorCode::kUnsupported, group.label, "tensor '" + value.name +
                           "' is larger than one storage buffer binding (" +
                           std::to_string(device.max_binding_bytes) + " bytes)");
      if (!bound.insert(view.base).second) continue;
      if (chunked == chunk_bytes.end()) {
        kernel.bound_values.push_back(view.base);
        continue;
      }
      const std::uint64_t total = graph.value(view.base).bytes();  // a view read in place: all of its base
      for (std::uint64_t offset = 0; offset < total; offset += chunked->second) {
        kernel.chunks[kernel.bound_values.size()] = {offset, std::min(chunked->second, total - offset)};
        kernel.bound_values.push_back(view.base);
      }
    }
    return {};
  };
  // f16 and bool tensors live in 16- and 8-bit storage buffers; say so plainly where the device lacks them.
  for (const std::vector<ValueId>* values :
       std::initializer_list<const std::vector<ValueId>*>{&pre_input_values, &load_input_values, &post_input_values,
                                                          &group.outputs})
    for (ValueId v : *values)
      if (!(graph.value(v).constant && graph.value(v).constant->numel() == 1) || (anchored && values == &pre_input_values) ||
          element_values.count(v))
        VKFUSE_TRY(check_storage(graph, v, group.label, device));
  VKFUSE_TRY(bind_inputs(pre_input_values, anchored));
  VKFUSE_TRY(bind_inputs(load_input_values, false));
  VKFUSE_TRY(bind_inputs(post_input_values, false));
  for (ValueId v : group.outputs) kernel.bound_values.push_back(output_binding(group, v));
  return kernel;
}

}  // namespace vkfuse
