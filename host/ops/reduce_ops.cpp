// Reductions. Every row takes the same attributes, in two forms:
//   - scalar "axis": the first reduced axis; every axis after it is reduced too (default 0 = all);
//   - ONNX list "axes" (negative ones count from the end; empty or absent = all, or nothing with
//     noop_with_empty_axes = 1). GraphBuilder lowers it to the first form: a Transpose view that
//     moves the reduced axes to the end where they are not there already, the trailing reduction,
//     and a Reshape view to the ONNX output shape (host/shape_inference.h, resolve_reduce_axes).
// plus "keepdims" (default 1).
//
// ReduceSum, ReduceMean, ReduceMax, ReduceMin and ReduceProd are reduce roots (kReduce): their combine
// step lives in shaders/roots/reduce.glsl, chains fuse into their loads and after their result.
// ReduceSumSquare, ReduceL2 and ReduceLogSumExp are composites over them, which fuse the same way:
//   ReduceSumSquare(x) = ReduceSum(x * x)                      1 dispatch
//   ReduceL2(x)        = Sqrt(ReduceSum(x * x))                1 dispatch
//   ReduceLogSumExp(x) = Log(ReduceSum(Exp(x - m))) + m, m = ReduceMax(x)   2 dispatches (1 where rows
//                        allow the planner's row passes: keepdims and at most 4096 elements)
// Every row carries a whole-tensor CPU reference of the ONNX semantics (reference_kernel), independent
// of the lowering, which the tests compare the GPU results with.
#include <algorithm>
#include <cmath>
#include <limits>

#include "host/op_registry.h"
#include "host/ops/composite_support.h"
#include "host/shape_inference.h"

namespace vkfuse {
namespace {

constexpr AttrDef kReduceAttrs[] = {{"axis", 0.0f}, {"keepdims", 1.0f}, {"noop_with_empty_axes", 0.0f}};
constexpr std::string_view kAxesList[] = {"axes"};

// Scalar references fold one more element into an accumulator: (acc, x) -> acc.
double fold_sum(std::span<const double> in, std::span<const float>) { return in[0] + in[1]; }
double fold_max(std::span<const double> in, std::span<const float>) { return std::max(in[0], in[1]); }
double fold_min(std::span<const double> in, std::span<const float>) { return std::min(in[0], in[1]); }
double fold_prod(std::span<const double> in, std::span<const float>) { return in[0] * in[1]; }

// The reduced axes of a node's attributes: the list "axes", else every axis from the scalar "axis".
std::vector<std::int64_t> named_axes(const OpAttrs& attrs, std::size_t rank) {
  if (attrs.has_list("axes")) return attrs.list("axes");
  std::int64_t axis = static_cast<std::int64_t>(attrs.scalars[0]);
  if (axis < 0) axis += static_cast<std::int64_t>(rank);
  std::vector<std::int64_t> axes;
  for (std::int64_t d = std::max<std::int64_t>(axis, 0); d < static_cast<std::int64_t>(rank); ++d) axes.push_back(d);
  return axes;
}

bool keepdims(const OpAttrs& attrs) { return attrs.scalars[1] != 0.0f; }
// ONNX: with noop_with_empty_axes, no (or an empty) "axes" list means no reduction at all (as in
// GraphBuilder's lowering, which takes this form whenever the list or the flag is given).
bool noop_with_empty_axes(const OpAttrs& attrs) { return attrs.scalars[2] != 0.0f && attrs.list("axes").empty(); }

// ---- CPU references: ONNX semantics straight from the definition, over whole tensors.

// The elements each output element folds, in row-major order of the input, gathered by walking every
// input index and dropping the reduced coordinates. `finish` turns them into the output value.
// `identity` maps each element when the reduction is a no-op (empty axes and noop_with_empty_axes).
using Finish = double (*)(const std::vector<double>& values);
using Identity = double (*)(double x);

Status reference_reduce(std::span<const RefTensor> in, const OpAttrs& attrs, RefTensor& out, Finish finish,
                        Identity noop_map) {
  const RefTensor& x = in[0];
  const std::size_t rank = x.shape.size();
  const std::vector<std::int64_t> axes = named_axes(attrs, rank);
  std::vector<bool> reduced(rank, axes.empty());
  for (std::int64_t a : axes) {
    const std::int64_t d = a < 0 ? a + static_cast<std::int64_t>(rank) : a;
    if (d < 0 || d >= static_cast<std::int64_t>(rank))
      return make_error(ErrorCode::kInvalidArgument, "reference: axis " + std::to_string(a) + " out of range");
    reduced[static_cast<std::size_t>(d)] = true;
  }
  if (noop_with_empty_axes(attrs) || rank == 0) {
    out.data.resize(x.data.size());
    std::transform(x.data.begin(), x.data.end(), out.data.begin(), noop_map);
    return {};
  }
  Shape kept_shape;
  for (std::size_t d = 0; d < rank; ++d) kept_shape.push_back(reduced[d] ? 1 : x.shape[d]);
  std::vector<std::vector<double>> groups(static_cast<std::size_t>(shape_numel(kept_shape)));
  std::vector<std::int64_t> index(rank, 0);
  for (std::size_t i = 0; i < x.data.size(); ++i) {
    std::int64_t group = 0;
    for (std::size_t d = 0; d < rank; ++d) group = group * kept_shape[d] + (reduced[d] ? 0 : index[d]);
    groups[static_cast<std::size_t>(group)].push_back(x.data[i]);
    for (std::size_t d = rank; d-- > 0;) {  // next row-major index
      if (++index[d] < x.shape[d]) break;
      index[d] = 0;
    }
  }
  if (static_cast<std::int64_t>(groups.size()) != shape_numel(out.shape))
    return make_error(ErrorCode::kInvalidArgument, "reference: output shape " + shape_to_string(out.shape) +
                                                       " does not match the reduction of " + shape_to_string(x.shape));
  out.data.resize(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) out.data[g] = finish(groups[g]);
  return {};
}

double sum_of(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += x;
  return s;
}
double mean_of(const std::vector<double>& v) { return sum_of(v) / static_cast<double>(v.size()); }
double max_of(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }
double min_of(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }
double prod_of(const std::vector<double>& v) {
  double p = 1.0;
  for (double x : v) p *= x;
  return p;
}
double sum_square_of(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += x * x;
  return s;
}
double l2_of(const std::vector<double>& v) { return std::sqrt(sum_square_of(v)); }
double log_sum_exp_of(const std::vector<double>& v) {
  const double m = max_of(v);
  double s = 0.0;
  for (double x : v) s += std::exp(x - m);
  return m + std::log(s);
}
double same(double x) { return x; }
double square(double x) { return x * x; }

Status reference_sum(std::span<const RefTensor> in, const OpAttrs& a, RefTensor& out) {
  return reference_reduce(in, a, out, sum_of, same);
}
Status reference_mean(std::span<const RefTensor> in, const OpAttrs& a, RefTensor& out) {
  return reference_reduce(in, a, out, mean_of, same);
}
Status reference_max(std::span<const RefTensor> in, const OpAttrs& a, RefTensor& out) {
  return reference_reduce(in, a, out, max_of, same);
}
Status reference_min(std::span<const RefTensor> in, const OpAttrs& a, RefTensor& out) {
  return reference_reduce(in, a, out, min_of, same);
}
Status reference_prod(std::span<const RefTensor> in, const OpAttrs& a, RefTensor& out) {
  return reference_reduce(in, a, out, prod_of, same);
}
// ONNX's no-op of ReduceSumSquare still squares; ReduceL2 and ReduceLogSumExp pass the input through.
Status reference_sum_square(std::span<const RefTensor> in, const OpAttrs& a, RefTensor& out) {
  return reference_reduce(in, a, out, sum_square_of, square);
}
Status reference_l2(std::span<const RefTensor> in, const OpAttrs& a, RefTensor& out) {
  return reference_reduce(in, a, out, l2_of, same);
}
Status reference_log_sum_exp(std::span<const RefTensor> in, const OpAttrs& a, RefTensor& out) {
  return reference_reduce(in, a, out, log_sum_exp_of, same);
}

// ---- Composite expansions. Each runs on one view of x arranged for the reduce root, so that the
// ops before the reduction fuse into its loads whatever the axes:
//   x -> Transpose (reduced axes last; only where needed) -> Cast to f32 (f16 only) -> ops -> trailing
//   reduction -> ops -> Cast back -> Reshape to the ONNX shape (only where the reduction's differs)

struct Trailing {
  Tensor input;             // x in f32, permuted
  std::vector<Attr> attrs;  // the trailing reduction: axis, keepdims
  Shape out_shape;          // ONNX
  DType dtype;              // x's
};

Result<Trailing> trailing_form(GraphBuilder& b, Tensor x, const ReduceAxes& r, const std::string& name) {
  // Views first, then the cast: a view of the cast's result would make the cast store it.
  Trailing t{x, {}, r.out_shape, b.dtype(x)};
  if (!r.perm.empty()) t.input = b.op("Transpose", {t.input}, {{"perm", r.perm}}, name + "/transpose");
  Shape folded = r.permuted;
  const int first = r.first_axis;
  if (first == static_cast<int>(folded.size())) {  // no dim > 1 is reduced: fold a unit axis, one element
    folded.push_back(1);
    t.input = b.op("Reshape", {t.input}, {{"shape", folded}}, name + "/unit_axis");
  }
  t.input = cast_to_f32(b, t.input, name + "/to_f32");
  Shape kept_with_ones(folded.begin(), folded.begin() + first);
  kept_with_ones.resize(folded.size(), 1);
  t.attrs = {{"axis", static_cast<float>(first)}, {"keepdims", kept_with_ones == r.out_shape ? 1.0f : 0.0f}};
  VKFUSE_ASSIGN_OR_RETURN(t.input, expanded(b, t.input));
  return t;
}

// Casts the result back to x's dtype and views it as the ONNX shape (that Reshape, where one is
// needed, is named `name`).
Result<Tensor> finish(GraphBuilder& b, Tensor y, const Trailing& t, const std::string& name) {
  y = cast_back(b, y, t.dtype, name + "/to_f16");
  if (y.valid() && b.shape(y) != t.out_shape) y = b.op("Reshape", {y}, {{"shape", t.out_shape}}, name);
  return expanded(b, y);
}

Result<ReduceAxes> axes_of(GraphBuilder& b, Tensor x, const OpAttrs& attrs) {
  const Shape shape = b.shape(x);
  const bool noop = noop_with_empty_axes(attrs);
  return resolve_reduce_axes(shape, noop ? std::vector<std::int64_t>{} : named_axes(attrs, shape.size()), keepdims(attrs),
                             noop);
}

Result<Tensor> expand_sum_square(GraphBuilder& b, std::span<const Tensor> in, const OpAttrs& attrs,
                                 const std::string& name) {
  const Tensor x = in[0];
  VKFUSE_ASSIGN_OR_RETURN(ReduceAxes r, axes_of(b, x, attrs));
  if (r.noop) return expanded(b, b.op("Mul", {x, x}, {}, name));  // ONNX: the no-op still squares
  VKFUSE_ASSIGN_OR_RETURN(Trailing t, trailing_form(b, x, r, name));
  const Tensor square = b.op("Mul", {t.input, t.input}, {}, name + "/square");
  return finish(b, b.op("ReduceSum", {square}, t.attrs, name + "/sum"), t, name);
}

Result<Tensor> expand_l2(GraphBuilder& b, std::span<const Tensor> in, const OpAttrs& attrs, const std::string& name) {
  const Tensor x = in[0];
  VKFUSE_ASSIGN_OR_RETURN(ReduceAxes r, axes_of(b, x, attrs));
  if (r.noop) return expanded(b, b.op("Identity", {x}, {}, name));
  VKFUSE_ASSIGN_OR_RETURN(Trailing t, trailing_form(b, x, r, name));
  const Tensor square = b.op("Mul", {t.input, t.input}, {}, name + "/square");
  const Tensor sum = b.op("ReduceSum", {square}, t.attrs, name + "/sum");
  return finish(b, b.op("Sqrt", {sum}, {}, name + "/sqrt"), t, name);
}

// log(sum(exp(x - m))) + m with m the maximum, so that exp never overflows. The maximum keeps its
// reduced axes (x - m broadcasts); the sum takes the ONNX keepdims, and m is viewed to match it.
Result<Tensor> expand_log_sum_exp(GraphBuilder& b, std::span<const Tensor> in, const OpAttrs& attrs,
                                  const std::string& name) {
  const Tensor x = in[0];
  VKFUSE_ASSIGN_OR_RETURN(ReduceAxes r, axes_of(b, x, attrs));
  if (r.noop) return expanded(b, b.op("Identity", {x}, {}, name));
  VKFUSE_ASSIGN_OR_RETURN(Trailing t, trailing_form(b, x, r, name));
  const std::vector<Attr> keep{t.attrs[0], {"keepdims", 1.0f}};
  const Tensor m = b.op("ReduceMax", {t.input}, keep, name + "/max");
  const Tensor e = b.op("Exp", {b.op("Sub", {t.input, m}, {}, name + "/sub")}, {}, name + "/exp");
  const Tensor s = b.op("ReduceSum", {e}, t.attrs, name + "/sum");
  Tensor shift = m;
  if (s.valid() && m.valid() && b.shape(s) != b.shape(m)) shift = b.op("Reshape", {m}, {{"shape", b.shape(s)}}, name + "/max_view");
  return finish(b, b.op("Add", {b.op("Log", {s}, {}, name + "/log"), shift}, {}, name + "/add"), t, name);
}

constexpr TestDomain kDomain{-4.0f, 4.0f, 0.0f, false};

constexpr OpDef kReduceOps[] = {
    {.name = "ReduceSum", .kind = OpKind::kReduce, .arity = 1, .input_class = {InputClass::kFloat},
     .type_rule = TypeRule::kSameAsFirst, .attrs = kReduceAttrs, .reference = fold_sum, .cost = 1.0f,
     .tolerance = Tolerance::kExact, .domain = kDomain, .combine = ReduceCombine::kSum, .list_attrs = kAxesList,
     .reference_kernel = reference_sum},
    {.name = "ReduceMean", .kind = OpKind::kReduce, .arity = 1, .input_class = {InputClass::kFloat},
     .type_rule = TypeRule::kSameAsFirst, .attrs = kReduceAttrs, .reference = fold_sum, .cost = 1.0f,
     .tolerance = Tolerance::kExact, .domain = kDomain, .combine = ReduceCombine::kMean, .list_attrs = kAxesList,
     .reference_kernel = reference_mean},
    {.name = "ReduceMax", .kind = OpKind::kReduce, .arity = 1, .input_class = {InputClass::kFloat},
     .type_rule = TypeRule::kSameAsFirst, .attrs = kReduceAttrs, .reference = fold_max, .cost = 1.0f,
     .tolerance = Tolerance::kExact, .domain = kDomain, .combine = ReduceCombine::kMax, .list_attrs = kAxesList,
     .reference_kernel = reference_max},
    {.name = "ReduceMin", .kind = OpKind::kReduce, .arity = 1, .input_class = {InputClass::kFloat},
     .type_rule = TypeRule::kSameAsFirst, .attrs = kReduceAttrs, .reference = fold_min, .cost = 1.0f,
     .tolerance = Tolerance::kExact, .domain = kDomain, .combine = ReduceCombine::kMin, .list_attrs = kAxesList,
     .reference_kernel = reference_min},
    // Products grow fast: test inputs stay near 1 in magnitude.
    {.name = "ReduceProd", .kind = OpKind::kReduce, .arity = 1, .input_class = {InputClass::kFloat},
     .type_rule = TypeRule::kSameAsFirst, .attrs = kReduceAttrs, .reference = fold_prod, .cost = 1.0f,
     .tolerance = Tolerance::kExact, .domain = {.lo = 0.5f, .hi = 1.5f}, .combine = ReduceCombine::kProd,
     .list_attrs = kAxesList, .reference_kernel = reference_prod},
    {.name = "ReduceSumSquare", .kind = OpKind::kComposite, .arity = 1, .input_class = {InputClass::kFloat},
     .type_rule = TypeRule::kSameAsFirst, .attrs = kReduceAttrs, .cost = 2.0f, .tolerance = Tolerance::kExact,
     .domain = kDomain, .list_attrs = kAxesList, .reference_kernel = reference_sum_square,
     .expand = expand_sum_square},
    {.name = "ReduceL2", .kind = OpKind::kComposite, .arity = 1, .input_class = {InputClass::kFloat},
     .type_rule = TypeRule::kSameAsFirst, .attrs = kReduceAttrs, .cost = 6.0f, .tolerance = Tolerance::kSmooth,
     .domain = kDomain, .list_attrs = kAxesList, .reference_kernel = reference_l2, .expand = expand_l2},
    {.name = "ReduceLogSumExp", .kind = OpKind::kComposite, .arity = 1, .input_class = {InputClass::kFloat},
     .type_rule = TypeRule::kSameAsFirst, .attrs = kReduceAttrs, .cost = 20.0f, .tolerance = Tolerance::kSmooth,
     .domain = kDomain, .list_attrs = kAxesList, .reference_kernel = reference_log_sum_exp,
     .expand = expand_log_sum_exp},
};

}  // namespace

std::span<const OpDef> reduce_ops() { return kReduceOps; }

}  // namespace vkfuse
