// Folding of elementwise math over constants: integers natively in int64 (shape arithmetic must be
// exact, and torch's INT64_MAX sentinels do not survive a trip through double), floats through the op
// table's scalar references (double), rounded to the element type.
#include <cmath>
#include <algorithm>
#include <functional>
#include <limits>

#include "host/onnx/onnx_elementwise.h"
#include "host/onnx/onnx_folding.h"
#include "host/onnx/onnx_shapes.h"
#include "host/op_registry.h"
#include "onnx.pb.h"

namespace vkfuse::onnx_import {
namespace {

using onnx::TensorProto;
using Inputs = std::span<const ConstTensor* const>;

Status invalid(const FoldContext& c, const std::string& message) {
  return make_error(ErrorCode::kInvalidArgument, c.attrs.where() + ": " + message);
}

// For each output element, the flat index into each input (numpy broadcasting).
struct Broadcast {
  Shape shape;
  std::vector<std::vector<std::int64_t>> strides;  // per input, 0 where broadcast
};

Result<Broadcast> broadcast(const FoldContext& c, const std::vector<const ConstTensor*>& in) {
  std::vector<Shape> shapes;
  for (const ConstTensor* t : in) shapes.push_back(t->shape);
  auto shape = broadcast_all(shapes);
  if (!shape.ok()) return invalid(c, shape.status().message());
  VKFUSE_TRY(check_fold_size(c, *shape));
  Broadcast b{*shape, {}};
  for (const ConstTensor* t : in) {
    const std::vector<std::int64_t> own = row_major_strides(t->shape);
    std::vector<std::int64_t> strides(shape->size(), 0);
    const std::size_t lead = shape->size() - t->shape.size();
    for (std::size_t d = 0; d < t->shape.size(); ++d) strides[lead + d] = t->shape[d] == 1 ? 0 : own[d];
    b.strides.push_back(std::move(strides));
  }
  return b;
}

// Calls fn(out_index, source indices) for every output element.
template <class Fn>
void for_each_element(const Broadcast& b, Fn fn) {
  const std::int64_t numel = shape_numel(b.shape);
  std::vector<std::int64_t> coord(b.shape.size(), 0), src(b.strides.size(), 0);
  for (std::int64_t i = 0; i < numel; ++i) {
    fn(static_cast<std::size_t>(i), src);
    for (std::size_t d = b.shape.size(); d-- > 0;) {
      for (std::size_t k = 0; k < src.size(); ++k) src[k] += b.strides[k][d];
      if (++coord[d] < b.shape[d]) break;
      for (std::size_t k = 0; k < src.size(); ++k) src[k] -= b.strides[k][d] * coord[d];
      coord[d] = 0;
    }
  }
}

// Integer ops. nullopt: not an integer op the folder knows.
using IntOp = std::function<Result<std::int64_t>(std::span<const std::int64_t>)>;

// Two's complement wrap-around, as numpy's int64 arithmetic (signed overflow would be undefined).
std::int64_t wrap(std::uint64_t v) { return static_cast<std::int64_t>(v); }
std::uint64_t u(std::int64_t v) { return static_cast<std::uint64_t>(v); }
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

std::optional<std::pair<IntOp, bool>> integer_op(const std::string& op, std::int64_t fmod) {
  using V = std::span<const std::int64_t>;
  auto ok = [](std::int64_t v) -> Result<std::int64_t> { return v; };
  auto zero = []() -> Result<std::int64_t> {
    return make_error(ErrorCode::kInvalidArgument, "integer division by zero");
  };
  const bool to_bool = true;
  if (op == "Add") return std::pair{IntOp([=](V v) { return ok(wrap(u(v[0]) + u(v[1]))); }), !to_bool};
  if (op == "Sub") return std::pair{IntOp([=](V v) { return ok(wrap(u(v[0]) - u(v[1]))); }), !to_bool};
  if (op == "Mul") return std::pair{IntOp([=](V v) { return ok(wrap(u(v[0]) * u(v[1]))); }), !to_bool};
  if (op == "Div")
    return std::pair{IntOp([=](V v) { return v[1] == 0 ? zero() : v[1] == -1 ? ok(wrap(0 - u(v[0]))) : ok(v[0] / v[1]); }),
                     !to_bool};
  if (op == "Mod")
    return std::pair{IntOp([=](V v) -> Result<std::int64_t> {
                       if (v[1] == 0) return zero();
                       if (v[1] == -1) return std::int64_t{0};
                       std::int64_t r = v[0] % v[1];
                       if (!fmod && r != 0 && ((r < 0) != (v[1] < 0))) r += v[1];  // sign of the divisor
                       return r;
                     }),
                     !to_bool};
  if (op == "Max") return std::pair{IntOp([=](V v) { return ok(std::max(v[0], v[1])); }), !to_bool};
  if (op == "Min") return std::pair{IntOp([=](V v) { return ok(std::min(v[0], v[1])); }), !to_bool};
  if (op == "Neg") return std::pair{IntOp([=](V v) { return ok(wrap(0 - u(v[0]))); }), !to_bool};
  if (op == "Abs") return std::pair{IntOp([=](V v) { return ok(v[0] < 0 && v[0] != kMin ? -v[0] : v[0]); }), !to_bool};
  if (op == "Sign") return std::pair{IntOp([=](V v) { return ok((v[0] > 0) - (v[0] < 0)); }), !to_bool};
  if (op == "Equal") return std::pair{IntOp([=](V v) { return ok(v[0] == v[1]); }), to_bool};
  if (op == "Less") return std::pair{IntOp([=](V v) { return ok(v[0] < v[1]); }), to_bool};
  if (op == "Greater") return std::pair{IntOp([=](V v) { return ok(v[0] > v[1]); }), to_bool};
  if (op == "LessOrEqual") return std::pair{IntOp([=](V v) { return ok(v[0] <= v[1]); }), to_bool};
  if (op == "GreaterOrEqual") return std::pair{IntOp([=](V v) { return ok(v[0] >= v[1]); }), to_bool};
  if (op == "Not") return std::pair{IntOp([=](V v) { return ok(v[0] == 0); }), to_bool};
  if (op == "And") return std::pair{IntOp([=](V v) { return ok(v[0] != 0 && v[1] != 0); }), to_bool};
  if (op == "Or") return std::pair{IntOp([=](V v) { return ok(v[0] != 0 || v[1] != 0); }), to_bool};
  if (op == "Xor") return std::pair{IntOp([=](V v) { return ok((v[0] != 0) != (v[1] != 0)); }), to_bool};
  if (op == "Where") return std::pair{IntOp([=](V v) { return ok(v[0] != 0 ? v[1] : v[2]); }), !to_bool};
  return std::nullopt;
}

int arity(const std::string& op) {
  if (op == "Where") return 3;
  if (op == "Neg" || op == "Abs" || op == "Sign" || op == "Not") return 1;
  return 2;
}

Result<std::optional<ConstTensor>> fold_integers(const FoldContext& c, const std::vector<const ConstTensor*>& in) {
  const std::string& op = c.node.op_type();
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t fmod, c.attrs.integer("fmod", 0));
  auto fn = integer_op(op, fmod);
  if (!fn || static_cast<int>(in.size()) != arity(op)) return std::optional<ConstTensor>{};
  VKFUSE_ASSIGN_OR_RETURN(const Broadcast b, broadcast(c, in));
  ConstTensor out = make_zero_tensor(b.shape, fn->second ? TensorProto::BOOL : in[op == "Where" ? 1 : 0]->onnx_type);
  std::vector<std::int64_t> args(in.size());
  Status error;
  for_each_element(b, [&](std::size_t i, const std::vector<std::int64_t>& src) {
    if (!error.ok()) return;
    for (std::size_t k = 0; k < in.size(); ++k) args[k] = in[k]->ints[static_cast<std::size_t>(src[k])];
    auto v = fn->first(args);
    if (!v.ok()) error = invalid(c, v.status().message());
    else out.ints[i] = *v;
  });
  if (!error.ok()) return error;
  return std::optional<ConstTensor>{std::move(out)};
}

Result<std::optional<ConstTensor>> fold_floats(const FoldContext& c, const OpDef& def, const std::vector<const ConstTensor*>& in,
                                               const ConstTensor* clip_min, const ConstTensor* clip_max) {
  VKFUSE_ASSIGN_OR_RETURN(const std::vector<float> attr_values, elementwise_attr_values(def, c.attrs, clip_min, clip_max));
  int out_type = in[0]->onnx_type;
  if (def.type_rule == TypeRule::kBool) out_type = TensorProto::BOOL;
  if (def.type_rule == TypeRule::kSameAsSecond) out_type = in[1]->onnx_type;
  VKFUSE_ASSIGN_OR_RETURN(const Broadcast b, broadcast(c, in));
  ConstTensor out = make_zero_tensor(b.shape, out_type);
  std::vector<double> args(in.size());
  for_each_element(b, [&](std::size_t i, const std::vector<std::int64_t>& src) {
    for (std::size_t k = 0; k < in.size(); ++k) args[k] = in[k]->at(static_cast<std::size_t>(src[k]));
    const double v = def.reference(args, attr_values);
    if (out.is_float()) out.floats[i] = round_to_onnx_float(v, out_type);
    else if (out_type == TensorProto::BOOL) out.ints[i] = v != 0.0 ? 1 : 0;
    else out.ints[i] = std::isfinite(v) ? static_cast<std::int64_t>(std::clamp(v, -9.2e18, 9.2e18)) : 0;
  });
  return std::optional<ConstTensor>{std::move(out)};
}

}  // namespace

Result<ConstTensor> cast_constant(const ConstTensor& x, int to, const std::string& where) {
  if (!TensorProto::DataType_IsValid(to) || to == TensorProto::UNDEFINED || to == TensorProto::STRING ||
      to == TensorProto::COMPLEX64 || to == TensorProto::COMPLEX128)
    return make_error(ErrorCode::kUnsupported, where + ": Cast to " + std::to_string(to) + " is not supported");
  ConstTensor out = make_zero_tensor(x.shape, to);
  for (std::size_t i = 0; i < static_cast<std::size_t>(x.numel()); ++i) {
    if (out.is_float()) {
      out.floats[i] = round_to_onnx_float(x.at(i), to);
      continue;
    }
    std::int64_t v = 0;
    if (!x.is_float()) {
      v = x.ints[i];
    } else {
      const double f = std::trunc(x.floats[i]);  // NaN -> 0; saturate instead of undefined behaviour
      v = std::isnan(f) ? 0 : f >= 9.2e18 ? std::numeric_limits<std::int64_t>::max() : f <= -9.2e18 ? std::numeric_limits<std::int64_t>::min() : static_cast<std::int64_t>(f);
    }
    switch (to) {  // integer narrowing wraps, as numpy's astype does
      case TensorProto::BOOL: v = v != 0 || (x.is_float() && x.floats[i] != 0.0f); break;
      case TensorProto::INT32: v = static_cast<std::int32_t>(static_cast<std::uint32_t>(v)); break;
      case TensorProto::INT16: v = static_cast<std::int16_t>(static_cast<std::uint16_t>(v)); break;
      case TensorProto::INT8: v = static_cast<std::int8_t>(static_cast<std::uint8_t>(v)); break;
      case TensorProto::UINT32: v = static_cast<std::uint32_t>(v); break;
      case TensorProto::UINT16: v = static_cast<std::uint16_t>(v); break;
      case TensorProto::UINT8: v = static_cast<std::uint8_t>(v); break;
      default: break;
    }
    out.ints[i] = v;
  }
  return out;
}

Result<std::optional<ConstTensor>> fold_elementwise(const FoldContext& c, Inputs inputs) {
  const std::string& op = c.node.op_type();
  if ((op == "Cast" || op == "CastLike") && !inputs.empty() && inputs[0]) VKFUSE_TRY(check_fold_size(c, inputs[0]->shape));
  if (op == "Cast") {
    VKFUSE_ASSIGN_OR_RETURN(const std::int64_t to, c.attrs.integer("to", TensorProto::FLOAT));
    VKFUSE_ASSIGN_OR_RETURN(ConstTensor out, cast_constant(*inputs[0], static_cast<int>(to), c.attrs.where()));
    return std::optional<ConstTensor>{std::move(out)};
  }
  if (op == "CastLike") {
    if (inputs.size() < 2 || !inputs[1]) return invalid(c, "CastLike needs its target_type input");
    VKFUSE_ASSIGN_OR_RETURN(ConstTensor out, cast_constant(*inputs[0], inputs[1]->onnx_type, c.attrs.where()));
    return std::optional<ConstTensor>{std::move(out)};
  }
  std::vector<const ConstTensor*> in;
  for (const ConstTensor* t : inputs)
    if (t) in.push_back(t);
  // Variadic Sum/Max/Min/Mean fold pairwise (Mean: the sum, then a division).
  const bool variadic = op == "Sum" || op == "Mean" || ((op == "Max" || op == "Min") && in.size() != 2);
  if (variadic) {
    if (in.empty()) return invalid(c, op + " has no inputs");
    const ConstTensor* first = in[0];
    VKFUSE_TRY(check_fold_size(c, first->shape));
    if (in.size() == 1 && op != "Mean") return std::optional<ConstTensor>{*first};
    // Recurse through a two-input node of the combining op.
    onnx::NodeProto pair;
    pair.set_op_type(op == "Sum" || op == "Mean" ? "Add" : op);
    const NodeAttributes pair_attrs(pair, c.attrs.where());
    const FoldContext pc{pair, pair_attrs, c.opset, c.base_dir, c.budget};
    ConstTensor acc = *first;
    for (std::size_t k = 1; k < in.size(); ++k) {
      const ConstTensor* args[] = {&acc, in[k]};
      VKFUSE_ASSIGN_OR_RETURN(std::optional<ConstTensor> next, fold_elementwise(pc, args));
      if (!next) return std::optional<ConstTensor>{};
      acc = std::move(*next);
    }
    if (op == "Mean") {
      if (!acc.is_float()) return std::optional<ConstTensor>{};
      for (float& v : acc.floats) v = round_to_onnx_float(v / static_cast<double>(in.size()), acc.onnx_type);
    }
    return std::optional<ConstTensor>{std::move(acc)};
  }
  bool all_integer = true;
  for (const ConstTensor* t : in) all_integer = all_integer && !t->is_float();
  if (all_integer && !in.empty()) return fold_integers(c, in);
  const OpDef* def = find_op(op);
  if (!def || def->kind != OpKind::kElementwise || !def->reference) return std::optional<ConstTensor>{};
  if (op == "Clip") {  // opset 11+: min and max are inputs 1 and 2
    const ConstTensor* lo = inputs.size() > 1 ? inputs[1] : nullptr;
    const ConstTensor* hi = inputs.size() > 2 ? inputs[2] : nullptr;
    const ConstTensor* x[] = {inputs[0]};
    return fold_floats(c, *def, {x[0]}, lo, hi);
  }
  if (static_cast<int>(in.size()) != def->arity) return std::optional<ConstTensor>{};
  return fold_floats(c, *def, in, nullptr, nullptr);
}

}  // namespace vkfuse::onnx_import
