#include "host/shape_inference.h"

#include <algorithm>

#include "host/group_kernel.h"

namespace vkfuse {
namespace {

bool accepts(InputClass cls, DType dtype) {
  switch (cls) {
    case InputClass::kFloat: return dtype == DType::kF32 || dtype == DType::kF16;
    case InputClass::kBool: return dtype == DType::kBool;
    case InputClass::kAny: return true;
  }
  return false;
}

const char* class_name(InputClass cls) {
  switch (cls) {
    case InputClass::kFloat: return "f32 or f16";
    case InputClass::kBool: return "bool";
    case InputClass::kAny: return "any dtype";
  }
  return "?";
}

std::string where(const Node& node) { return "node '" + node.name + "' (" + std::string(node.op->name) + ")"; }

}  // namespace

StridedLayout contiguous_layout(const Shape& shape) {
  StridedLayout layout{shape, std::vector<std::int64_t>(shape.size()), 0};
  std::int64_t stride = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    layout.strides[d] = stride;
    stride *= shape[d];
  }
  return layout;
}

int reduce_first_axis(const Node& node, std::size_t rank) {
  int axis = static_cast<int>(node.attrs.at(0));
  if (axis < 0) axis += static_cast<int>(rank);
  return axis;
}

bool reduce_keepdims(const Node& node) { return node.attrs.at(1) != 0.0f; }

Result<ReduceAxes> resolve_reduce_axes(const Shape& input, const std::vector<std::int64_t>& axes, bool keepdims,
                                       bool noop_with_empty_axes) {
  const auto rank = static_cast<std::int64_t>(input.size());
  ReduceAxes r;
  r.reduced.assign(input.size(), axes.empty());
  for (std::int64_t axis : axes) {
    const std::int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank)
      return make_error(ErrorCode::kInvalidArgument, "axis " + std::to_string(axis) + " of axes " + shape_to_string(axes) +
                                                         " is out of range for shape " + shape_to_string(input));
    if (r.reduced[static_cast<std::size_t>(a)])
      return make_error(ErrorCode::kInvalidArgument,
                        "axes " + shape_to_string(axes) + " name axis " + std::to_string(a) + " twice");
    r.reduced[static_cast<std::size_t>(a)] = true;
  }
  r.noop = (axes.empty() && noop_with_empty_axes) || input.empty();
  if (r.noop) {
    r.permuted = r.out_shape = input;
    return r;
  }
  for (std::size_t d = 0; d < input.size(); ++d)
    if (!r.reduced[d] || keepdims) r.out_shape.push_back(r.reduced[d] ? 1 : input[d]);
  // Size-1 dims may sit on either side; only a reduced dim > 1 before a kept dim > 1 needs a permutation.
  std::size_t last_kept = 0, first_reduced = input.size();  // last_kept: one past the last kept dim > 1
  for (std::size_t d = 0; d < input.size(); ++d) {
    if (input[d] == 1) continue;
    if (r.reduced[d]) first_reduced = std::min(first_reduced, d);
    else last_kept = d + 1;
  }
  if (first_reduced == input.size() || first_reduced >= last_kept) {
    r.permuted = input;
    r.first_axis = static_cast<int>(last_kept);
    // Fold exactly the named axes when they trail and hold every reduced dim > 1 (the result then
    // needs no reshape).
    std::size_t tail = input.size();
    while (tail > 0 && r.reduced[tail - 1]) --tail;
    if (tail < input.size() && first_reduced >= tail) r.first_axis = static_cast<int>(tail);
    return r;
  }
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t d = 0; d < input.size(); ++d)
      if (r.reduced[d] == (pass == 1)) {
        r.perm.push_back(static_cast<std::int64_t>(d));
        r.permuted.push_back(input[d]);
      }
  r.first_axis = static_cast<int>(std::count(r.reduced.begin(), r.reduced.end(), false));
  return r;
}

Status check_inputs(const GraphIR& graph, const Node& node) {
  const OpDef& op = *node.op;
  const int given = static_cast<int>(node.inputs.size());
  const int fewest = op.min_arity < 0 ? op.arity : op.min_arity;
  if (given < fewest || given > op.arity)
    return make_error(ErrorCode::kInvalidArgument,
                      where(node) + " takes " + (fewest == op.arity ? std::to_string(op.arity)
                                                                     : std::to_string(fewest) + " to " + std::to_string(op.arity)) +
                          " inputs, got " + std::to_string(given));
  for (std::size_t k = 0; k < node.inputs.size() && k < 3; ++k) {
    const Value& in = graph.value(node.inputs[k]);
    if (!accepts(op.input_class[k], in.dtype))
      return make_error(ErrorCode::kInvalidArgument, where(node) + ": input " + std::to_string(k) + " ('" + in.name +
                                                         "') is " + dtype_name(in.dtype) + ", expected " +
                                                         class_name(op.input_class[k]));
  }
  return {};
}

Result<TensorInfo> infer_node(const GraphIR& graph, const Node& node) {
  const OpDef& op = *node.op;
  VKFUSE_TRY(check_inputs(graph, node));
  const Value& first = graph.value(node.inputs.at(0));
  TensorInfo out{first.shape, first.dtype};
  switch (op.kind) {
    case OpKind::kElementwise: {
      // u8 is storage for pixels and masks: only Cast and Identity take it (no byte arithmetic).
      if (op.type_rule != TypeRule::kCastAttr && !op.copies_input)
        for (ValueId u : node.inputs)
          if (graph.value(u).dtype == DType::kU8)
            return make_error(ErrorCode::kInvalidArgument, where(node) + ": input '" + graph.value(u).name +
                                                               "' is u8, which only Cast and Identity take; Cast it to f32 or i32 first");
      for (std::size_t k = 1; k < node.inputs.size(); ++k) {
        const Value& in = graph.value(node.inputs[k]);
        auto shape = broadcast_shapes(out.shape, in.shape);
        if (!shape)
          return make_error(ErrorCode::kInvalidArgument,
                            where(node) + ": shapes " + shape_to_string(out.shape) + " and " +
                                shape_to_string(in.shape) + " (input " + std::to_string(k) + ", '" + in.name +
                                "') do not broadcast");
        out.shape = *shape;
      }
      // Numeric inputs that meet in one op must agree on their dtype (no implicit promotion in ONNX).
      for (std::size_t k = 1; k < node.inputs.size(); ++k) {
        const Value& in = graph.value(node.inputs[k]);
        const bool both_float = op.input_class[k] == InputClass::kFloat && op.input_class[0] == InputClass::kFloat;
        if (both_float && in.dtype != first.dtype)
          return make_error(ErrorCode::kInvalidArgument, where(node) + ": inputs are " + dtype_name(first.dtype) +
                                                             " and " + dtype_name(in.dtype) + "; insert a Cast");
      }
      switch (op.type_rule) {
        case TypeRule::kSameAsFirst: out.dtype = first.dtype; break;
        case TypeRule::kSameAsSecond: {
          const Value& a = graph.value(node.inputs.at(1));
          const Value& b = graph.value(node.inputs.at(2));
          if (a.dtype != b.dtype)
            return make_error(ErrorCode::kInvalidArgument, where(node) + ": branches are " + dtype_name(a.dtype) +
                                                               " and " + dtype_name(b.dtype));
          out.dtype = a.dtype;
          break;
        }
        case TypeRule::kBool: out.dtype = DType::kBool; break;
        case TypeRule::kCastAttr: {
          const int to = static_cast<int>(node.attrs.at(0));
          if (to < 0 || to > static_cast<int>(DType::kU8))
            return make_error(ErrorCode::kInvalidArgument, where(node) + ": 'to' = " + std::to_string(to) +
                                                               " is not a dtype (0 f32, 1 f16, 2 i32, 3 bool, 4 u8)");
          out.dtype = static_cast<DType>(to);
          break;
        }
      }
      return out;
    }
    case OpKind::kReduce: {
      const int axis = reduce_first_axis(node, first.shape.size());
      if (axis < 0 || axis >= static_cast<int>(first.shape.size()))
        return make_error(ErrorCode::kInvalidArgument, where(node) + ": axis " + std::to_string(static_cast<int>(node.attrs[0])) +
                                                           " is out of range for shape " + shape_to_string(first.shape));
      out.shape.resize(static_cast<std::size_t>(axis));
      if (reduce_keepdims(node)) out.shape.resize(first.shape.size(), 1);
      return out;
    }
    case OpKind::kView: {
      // The transform sees the input's real layout: some views (a Reshape of a transpose) cannot be
      // expressed over a strided one, and the builder then copies the input first.
      auto resolved = resolve_view(graph, node.inputs[0]);
      if (!resolved.ok()) return resolved.status();
      StridedLayout layout = resolved->layout;
      if (Status s = op.view(layout, node.op_attrs()); !s.ok()) return s.with_context(where(node));
      for (std::int64_t d : layout.shape)
        if (d <= 0)
          return make_error(ErrorCode::kInvalidArgument, where(node) + ": the result " + shape_to_string(layout.shape) +
                                                             " would be empty");
      out.shape = layout.shape;
      return out;
    }
    case OpKind::kKernel: {
      std::vector<TensorInfo> inputs;
      for (ValueId v : node.inputs) inputs.push_back({graph.value(v).shape, graph.value(v).dtype});
      auto result = op.infer(inputs, node.op_attrs());
      if (!result.ok()) return result.status().with_context(where(node));
      return result;
    }
    case OpKind::kComposite:
      return make_error(ErrorCode::kInternal, where(node) + ": a composite op was not expanded");
  }
  return make_error(ErrorCode::kInternal, where(node) + ": unknown op kind");
}

}  // namespace vkfuse
