// GraphBuilder: shape and dtype inference as the graph is built, with errors that name the node.
#include <algorithm>
#include <set>

#include "host/checked_math.h"
#include "host/graph.h"
#include "host/group_kernel.h"
#include "host/op_registry.h"
#include "host/public_api.h"
#include "host/shape_inference.h"

namespace vkfuse {

void append_node(GraphIR& g, Node node) {
  const auto at = static_cast<NodeId>(g.nodes.size());
  g.values[static_cast<std::size_t>(node.output)].producer = at;
  for (ValueId v : node.inputs) {
    auto& consumers = g.values[static_cast<std::size_t>(v)].consumers;
    if (consumers.empty() || consumers.back() != at) consumers.push_back(at);
  }
  g.nodes.push_back(std::move(node));
}

ValueId add_constant(GraphIR& g, HostTensor data, std::string name) {
  Value value;
  value.name = std::move(name);
  value.shape = data.shape;
  value.dtype = data.dtype;
  value.constant = std::make_shared<const HostTensor>(std::move(data));
  g.values.push_back(std::move(value));
  return static_cast<ValueId>(g.values.size() - 1);
}

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const std::int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

namespace {

// A kReduce op with the list "axes" (or noop_with_empty_axes): a permutation view where reduced axes
// come before kept ones, the reduction of the trailing axes (named `name`), and a reshape view to the
// ONNX output shape where the reduce root's shape differs from it.
//   x[2,3,4] ReduceSum(axes [0], keepdims 1)  =>  Transpose(perm [1,2,0]) -> ReduceSum(axis 2) -> Reshape [1,3,4]
Tensor lower_reduce_axes(GraphBuilder& b, const OpDef& def, Tensor x, const ReduceAxes& r, const std::string& name) {
  if (r.noop) return b.op("Identity", {x}, {}, name);
  Tensor t = x;
  if (!r.perm.empty()) t = b.op("Transpose", {t}, {{"perm", r.perm}}, name + "/transpose");
  if (r.first_axis < static_cast<int>(r.permuted.size())) {
    Shape kept(r.permuted.begin(), r.permuted.begin() + r.first_axis);
    const bool native_keepdims = [&] {
      Shape with_ones = kept;
      with_ones.resize(r.permuted.size(), 1);
      return with_ones == r.out_shape;
    }();
    t = b.op(def.name, {t}, {{"axis", static_cast<float>(r.first_axis)}, {"keepdims", native_keepdims ? 1.0f : 0.0f}},
             name);
  }
  if (t.id == x.id) return b.op("Reshape", {x}, {{"shape", r.out_shape}}, name);  // only size-1 dims reduced
  if (t.valid() && b.shape(t) != r.out_shape) t = b.op("Reshape", {t}, {{"shape", r.out_shape}}, name + "/reshape");
  return t;
}

}  // namespace

struct GraphBuilder::State {
  GraphIR ir;
  Status error;
  std::set<std::string> node_names;

  bool check_tensor(Tensor t) const { return t.valid() && static_cast<std::size_t>(t.id) < ir.values.size(); }
  void fail(Status status) {
    if (error.ok()) error = std::move(status);
  }
  Tensor add_value(Value value) {
    ir.values.push_back(std::move(value));
    return Tensor{static_cast<int>(ir.values.size() - 1)};
  }
  // Executions find inputs and outputs by name: each needs one of its own, shared with no other
  // input or output.
  Status check_io_name(const std::string& name, const std::string& kind) const {
    if (name.empty())
      return make_error(ErrorCode::kInvalidArgument, "a graph " + kind + " has an empty name; executions find it by name");
    for (ValueId id : ir.inputs)
      if (ir.value(id).name == name)
        return make_error(ErrorCode::kInvalidArgument, kind == "input" ? "two graph inputs are named '" + name + "'"
                                                                       : kind + " '" + name + "' has the name of a graph input");
    for (ValueId id : ir.outputs)
      if (ir.value(id).name == name)
        return make_error(ErrorCode::kInvalidArgument, kind == "output" ? "two graph outputs are named '" + name + "'"
                                                                        : kind + " '" + name + "' has the name of a graph output");
    return {};
  }
  Status check_shape(const std::string& what, const Shape& shape) const {
    for (std::int64_t d : shape)
      if (d <= 0)
        return make_error(ErrorCode::kInvalidArgument,
                          what + " has shape " + shape_to_string(shape) +
                              (d == 0 ? ": zero-size tensors are not supported" : ": dimensions must be positive"));
    const std::optional<std::int64_t> numel = checked_numel(shape);
    if (!numel)
      return make_error(ErrorCode::kInvalidArgument, what + " has shape " + shape_to_string(shape) +
                                                         ": the element count overflows int64");
    if (*numel >= (std::int64_t{1} << 32))
      return make_error(ErrorCode::kUnsupported, what + " has " + std::to_string(*numel) +
                                                     " elements; at most 2^32 - 1 are supported");
    return {};
  }
};

GraphBuilder::GraphBuilder() : state_(std::make_unique<State>()) {}
GraphBuilder::~GraphBuilder() = default;
GraphBuilder::GraphBuilder(GraphBuilder&&) noexcept = default;
GraphBuilder& GraphBuilder::operator=(GraphBuilder&&) noexcept = default;

// A moved-from builder (state_ null) makes no tensors and records nothing; status() and build() say
// why.
Tensor GraphBuilder::input(std::string name, Shape shape, DType dtype) {
  if (!state_) return {};
  if (Status s = state_->check_io_name(name, "input"); !s.ok()) {
    state_->fail(std::move(s));
    return {};
  }
  if (Status s = state_->check_shape("input '" + name + "'", shape); !s.ok()) {
    state_->fail(std::move(s));
    return {};
  }
  Value value{std::move(name), std::move(shape), dtype};
  value.is_input = true;
  Tensor t = state_->add_value(std::move(value));
  state_->ir.inputs.push_back(t.id);
  return t;
}

Tensor GraphBuilder::constant(HostTensor data, std::string name) {
  if (!state_) return {};
  if (name.empty()) name = "const_" + std::to_string(state_->ir.values.size());
  if (Status s = state_->check_shape("constant '" + name + "'", data.shape); !s.ok()) {
    state_->fail(std::move(s));
    return {};
  }
  if (data.bytes.size() != static_cast<std::size_t>(data.numel()) * dtype_size(data.dtype)) {
    state_->fail(make_error(ErrorCode::kInvalidArgument, "constant '" + name + "' of shape " +
                                                             shape_to_string(data.shape) + " has " +
                                                             std::to_string(data.bytes.size()) + " bytes"));
    return {};
  }
  Value value{std::move(name), data.shape, data.dtype};
  value.constant = std::make_shared<const HostTensor>(std::move(data));
  return state_->add_value(std::move(value));
}

Tensor GraphBuilder::scalar(float v, DType dtype) { return constant(HostTensor::from_floats({}, {v}, dtype)); }

Tensor GraphBuilder::op(std::string_view op_type, const std::vector<Tensor>& inputs, const std::vector<Attr>& attrs,
                        std::string node_name) {
  if (!state_) return {};
  State& s = *state_;
  if (node_name.empty()) {  // generated: "Add_3", made unique if a given name already took it
    node_name = std::string(op_type) + "_" + std::to_string(s.ir.nodes.size());
    while (s.node_names.count(node_name)) node_name += "_";
  }
  if (!s.node_names.insert(node_name).second) {
    s.fail(make_error(ErrorCode::kInvalidArgument, "two nodes are named '" + node_name + "'"));
    return {};
  }
  const OpDef* def = find_op(op_type);
  if (!def) {
    s.fail(make_error(ErrorCode::kNotFound, "node '" + node_name + "': unknown op '" + std::string(op_type) + "'"));
    return {};
  }
  for (Tensor t : inputs)
    if (!s.check_tensor(t)) {
      // An earlier error produced this invalid tensor; keep that error, or report a foreign handle.
      s.fail(make_error(ErrorCode::kInvalidArgument, "node '" + node_name + "': an input is not a valid tensor"));
      return {};
    }
  Node node{node_name, def, {}, -1, {}};
  for (Tensor t : inputs) node.inputs.push_back(t.id);
  for (const AttrDef& a : def->attrs) node.attrs.push_back(a.default_value);
  for (const Attr& given : attrs) {
    if (given.is_list) {
      if (std::find(def->list_attrs.begin(), def->list_attrs.end(), given.name) == def->list_attrs.end()) {
        s.fail(make_error(ErrorCode::kInvalidArgument, "node '" + node_name + "' (" + std::string(op_type) +
                                                           "): unknown list attribute '" + given.name + "'"));
        return {};
      }
      node.lists[given.name] = given.ints;
      continue;
    }
    auto it = std::find_if(def->attrs.begin(), def->attrs.end(), [&](const AttrDef& a) { return a.name == given.name; });
    if (it == def->attrs.end()) {
      s.fail(make_error(ErrorCode::kInvalidArgument, "node '" + node_name + "' (" + std::string(op_type) +
                                                         "): unknown attribute '" + given.name + "'"));
      return {};
    }
    node.attrs[static_cast<std::size_t>(it - def->attrs.begin())] = given.value;
  }
  // Rows that take both the scalar "axis" and the list "axes" (the reductions) take one of them.
  const bool has_axis_scalar = std::any_of(def->attrs.begin(), def->attrs.end(), [](const AttrDef& a) { return a.name == "axis"; });
  if (has_axis_scalar && node.lists.count("axes") &&
      std::any_of(attrs.begin(), attrs.end(), [](const Attr& a) { return !a.is_list && a.name == "axis"; })) {
    s.fail(make_error(ErrorCode::kInvalidArgument, "node '" + node_name + "' (" + std::string(op_type) +
                                                       "): give the scalar 'axis' or the list 'axes', not both"));
    return {};
  }
  // Composites become primitives here, so the planner only ever sees ops it can fuse. The composite's
  // name passes to its expansion (the last op is usually called that).
  if (def->kind == OpKind::kComposite) {
    if (Status checked = check_inputs(s.ir, node); !checked.ok()) {
      s.fail(checked);
      return {};
    }
    s.node_names.erase(node_name);
    auto expanded = def->expand(*this, inputs, node.op_attrs(), node_name);
    if (!expanded.ok()) {
      s.fail(expanded.status().with_context("node '" + node_name + "' (" + std::string(op_type) + ")"));
      return {};
    }
    return *expanded;
  }
  // ONNX-style reductions name their axes in the list "axes": lowered here to what the reduce root
  // does, trailing axes from a first one (see resolve_reduce_axes).
  if (def->kind == OpKind::kReduce && (node.lists.count("axes") || node.attrs.at(2) != 0.0f)) {
    const Tensor x{node.inputs.at(0)};
    const std::vector<std::int64_t> axes = node.op_attrs().list("axes");
    auto resolved = resolve_reduce_axes(s.ir.value(x.id).shape, axes, node.attrs.at(1) != 0.0f, node.attrs.at(2) != 0.0f);
    if (!resolved.ok()) {
      s.fail(resolved.status().with_context("node '" + node_name + "' (" + std::string(op_type) + ")"));
      return {};
    }
    s.node_names.erase(node_name);
    return lower_reduce_axes(*this, *def, x, *resolved, node_name);
  }
  // Kernel ops read contiguous tensors: a strided view feeding one is copied first, unless the op reads
  // it in place (OpDef::reads_in_place: MatMul). A view op that cannot express itself over a strided
  // view (a Reshape of a transpose) gets the same copy.
  if (def->kind == OpKind::kKernel) {
    std::vector<TensorInfo> infos;
    for (ValueId in : node.inputs) infos.push_back(view_info(s.ir, in));
    for (std::size_t k = 0; k < node.inputs.size(); ++k) {
      ValueId& in = node.inputs[k];
      if (is_contiguous_value(s.ir, in)) continue;
      if (def->reads_in_place && !infos[k].strides.empty() && def->reads_in_place(infos, k)) continue;
      in = op("Identity", {Tensor{in}}, {}, node_name + "_contiguous" + std::to_string(in)).id;
    }
  }
  auto inferred = infer_node(s.ir, node);
  if (!inferred.ok() && def->kind == OpKind::kView && inferred.status().code() == ErrorCode::kUnsupported &&
      !is_contiguous_value(s.ir, node.inputs[0])) {
    node.inputs[0] = op("Identity", {Tensor{node.inputs[0]}}, {}, node_name + "_contiguous").id;
    inferred = infer_node(s.ir, node);
  }
  if (!inferred.ok()) {
    s.fail(inferred.status());
    return {};
  }
  // Every value's element count fits the limit, so that later products of its dims cannot overflow.
  if (Status checked = s.check_shape("node '" + node_name + "' (" + std::string(op_type) + "): the output", inferred->shape);
      !checked.ok()) {
    s.fail(std::move(checked));
    return {};
  }
  const NodeId node_id = static_cast<NodeId>(s.ir.nodes.size());
  Value out{node_name, inferred->shape, inferred->dtype, node_id};
  Tensor result = s.add_value(std::move(out));
  node.output = result.id;
  for (ValueId in : node.inputs) {
    auto& consumers = s.ir.values[static_cast<std::size_t>(in)].consumers;
    if (consumers.empty() || consumers.back() != node_id) consumers.push_back(node_id);
  }
  s.ir.nodes.push_back(std::move(node));
  return result;
}

void GraphBuilder::output(Tensor tensor, std::string name) {
  if (!state_) return;
  if (Status s = state_->check_io_name(name, "output"); !s.ok()) {
    state_->fail(std::move(s));
    return;
  }
  if (!state_->check_tensor(tensor)) {
    state_->fail(make_error(ErrorCode::kInvalidArgument, "output '" + name + "' is not a valid tensor"));
    return;
  }
  {
    const Value& value = state_->ir.value(tensor.id);
    if (value.is_output) {
      state_->fail(make_error(ErrorCode::kInvalidArgument,
                              "output '" + name + "': value '" + value.name + "' is already the output '" + value.name + "'"));
      return;
    }
    // A graph input, a constant or a view has no buffer of its own to download: an Identity writes it.
    if (value.is_input || value.constant || state_->ir.is_view(tensor.id)) {
      tensor = op("Identity", {tensor}, {}, name + "_copy");
      if (!tensor.valid()) return;
    }
  }
  Value& value = state_->ir.values[static_cast<std::size_t>(tensor.id)];
  value.name = std::move(name);
  value.is_output = true;
  state_->ir.outputs.push_back(tensor.id);
}

Shape GraphBuilder::shape(Tensor t) const { return state_ && state_->check_tensor(t) ? state_->ir.value(t.id).shape : Shape{}; }
DType GraphBuilder::dtype(Tensor t) const {
  return state_ && state_->check_tensor(t) ? state_->ir.value(t.id).dtype : DType::kF32;
}
const Status& GraphBuilder::status() const {
  static const Status kMovedFrom = moved_from_error("GraphBuilder");
  return state_ ? state_->error : kMovedFrom;
}

Result<Graph> GraphBuilder::build() {
  if (!state_) return moved_from_error("GraphBuilder::build");
  if (!state_->error.ok()) return state_->error;
  if (state_->ir.nodes.empty()) return make_error(ErrorCode::kInvalidArgument, "the graph has no nodes");
  if (state_->ir.outputs.empty()) return make_error(ErrorCode::kInvalidArgument, "the graph has no outputs");
  Graph graph;
  graph.ir_ = std::make_shared<const GraphIR>(std::move(state_->ir));
  state_->ir = {};
  return graph;
}

std::size_t Graph::node_count() const { return ir_ ? ir_->nodes.size() : 0; }
std::size_t Graph::input_count() const { return ir_ ? ir_->inputs.size() : 0; }
std::size_t Graph::output_count() const { return ir_ ? ir_->outputs.size() : 0; }
std::size_t Graph::source_op_count() const { return ir_ ? ir_->source_op_count : 0; }

namespace {
std::vector<TensorDesc> describe(const GraphIR* ir, const std::vector<ValueId>& values) {
  std::vector<TensorDesc> out;
  if (ir == nullptr) return out;
  for (ValueId v : values) {
    const Value& value = ir->value(v);
    out.push_back({value.name, value.shape, value.dtype});
    if (auto names = ir->dim_names.find(value.name); names != ir->dim_names.end()) out.back().dim_names = names->second;
  }
  return out;
}
}  // namespace

std::vector<TensorDesc> Graph::inputs() const { return describe(ir_.get(), ir_ ? ir_->inputs : std::vector<ValueId>{}); }
std::vector<TensorDesc> Graph::outputs() const { return describe(ir_.get(), ir_ ? ir_->outputs : std::vector<ValueId>{}); }

void GraphBuilder::set_source_op_count(std::size_t count) {
  if (state_) state_->ir.source_op_count = count;
}

void GraphBuilder::set_dim_names(const std::string& io_name, std::vector<std::string> names) {
  if (!state_) return;
  state_->ir.dim_names[io_name] = std::move(names);
}

const GraphIR& graph_ir(const Graph& graph) { return *graph.ir_; }

}  // namespace vkfuse
