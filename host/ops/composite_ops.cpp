// Composite ops: GraphBuilder::op expands each into primitives (elementwise ops, reductions, views),
// which the planner then fuses like any others. Each row also carries a whole-tensor CPU reference,
// written from the ONNX definition, that the tests compare the expansion with. They compute in f32
// (f16 inputs are cast up and the result back; the casts fuse).
//
//   Softmax(x; axis = -1)     m = ReduceMax(x), e = Exp(x - m), y = e / ReduceSum(e)
//                             1 dispatch of three walks over each row (the planner's row passes,
//                             rows of at most 4096): [ReduceMax -> Sub -> Exp -> ReduceSum -> Div];
//                             longer rows 3: [ReduceMax] [Sub -> Exp -> ReduceSum] [Sub -> Exp -> Div]
//                             (the exp is recomputed rather than stored; the max needs its own walk)
//   LogSoftmax(x; axis = -1)  y = (x - m) - Log(ReduceSum(Exp(x - m)))       the same: 1 or 3
//     Both reduce the trailing axes: for an axis with a dim > 1 after it, they run on a Transpose
//     view that moves the axis last and view the result back with the inverse Transpose.
//   LayerNormalization(x, scale[, bias]; axis = -1, epsilon = 1e-5): over the axes [axis, rank),
//     mean and variance in two passes (no E[x^2] - E[x]^2 cancellation):
//       mean = ReduceMean(x), d = x - mean, y = d / Sqrt(ReduceMean(d * d) + eps) * scale + bias
//     1 dispatch of three walks over each row (mean, variance, result), or for rows longer than 4096
//     3: [ReduceMean] [Sub -> Mul -> ReduceMean -> Add -> Sqrt] [Sub -> Div -> Mul -> Add]
//   BatchNormalization(x, scale, bias, mean, var; epsilon = 1e-5), inference, channels on axis 1:
//     the [C] parameters are viewed as [C,1,...,1] so that everything is elementwise:
//       y = (x - mean) * (scale / Sqrt(var + eps)) + bias
//     the per-channel chain is cheap and recomputed where it is used: one dispatch, fused with the
//     elementwise ops around it.
#include <algorithm>
#include <cmath>

#include "host/op_registry.h"
#include "host/ops/composite_support.h"

namespace vkfuse {
namespace {

Result<std::size_t> normalize_axis(float given, std::size_t rank) {
  const auto axis = static_cast<std::int64_t>(given);
  const std::int64_t a = axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis;
  if (a < 0 || a >= static_cast<std::int64_t>(rank))
    return make_error(ErrorCode::kInvalidArgument, "axis " + std::to_string(axis) + " is out of range for rank " +
                                                       std::to_string(rank));
  return static_cast<std::size_t>(a);
}

// Names the composite's ops: intermediate ones "<name>/<role>", the one that yields the result
// "<name>".
struct Names {
  const std::string& name;
  std::string operator()(const char* role) const { return name + "/" + role; }
};

Status require_dtype(GraphBuilder& b, Tensor t, DType dtype, const char* role) {
  if (b.dtype(t) != dtype)
    return make_error(ErrorCode::kInvalidArgument, std::string(role) + " is " + dtype_name(b.dtype(t)) + ", x is " +
                                                       dtype_name(dtype) + "; insert a Cast");
  return {};
}

// ---- Softmax, LogSoftmax

constexpr AttrDef kSoftmaxAttrs[] = {{"axis", -1.0f}};

Result<Tensor> expand_softmax_family(GraphBuilder& b, Tensor x, const OpAttrs& attrs, const std::string& name,
                                     bool log) {
  const Shape shape = b.shape(x);
  const DType dtype = b.dtype(x);
  VKFUSE_ASSIGN_OR_RETURN(std::size_t axis, normalize_axis(attrs.scalars[0], shape.size()));
  const Names n{name};
  // The reduce root folds trailing axes: the axis is one already when every dim after it is 1.
  std::vector<std::int64_t> perm;
  if (std::any_of(shape.begin() + static_cast<std::ptrdiff_t>(axis) + 1, shape.end(), [](std::int64_t d) { return d != 1; })) {
    for (std::size_t d = 0; d < shape.size(); ++d)
      if (d != axis) perm.push_back(static_cast<std::int64_t>(d));
    perm.push_back(static_cast<std::int64_t>(axis));
  }
  const bool cast = dtype == DType::kF16;
  Tensor t = x;  // the view first: a view of the cast's result would make the cast store it
  if (!perm.empty()) t = b.op("Transpose", {t}, {{"perm", perm}}, n("transpose"));
  t = cast_to_f32(b, t, n("to_f32"));
  const int reduce_axis = perm.empty() ? static_cast<int>(axis) : static_cast<int>(shape.size()) - 1;
  const std::vector<Attr> over_axis{{"axis", static_cast<float>(reduce_axis)}, {"keepdims", 1.0f}};
  const Tensor max = b.op("ReduceMax", {t}, over_axis, n("max"));
  const Tensor shifted = b.op("Sub", {t, max}, {}, n("sub"));
  const Tensor e = b.op("Exp", {shifted}, {}, n("exp"));
  const Tensor sum = b.op("ReduceSum", {e}, over_axis, n("sum"));
  const std::string result_name = cast || !perm.empty() ? n(log ? "out" : "div") : name;
  Tensor y = log ? b.op("Sub", {shifted, b.op("Log", {sum}, {}, n("log"))}, {}, result_name)
                 : b.op("Div", {e, sum}, {}, result_name);
  y = cast_back(b, y, dtype, perm.empty() ? name : n("to_f16"));
  if (!perm.empty()) {
    std::vector<std::int64_t> inverse(perm.size());
    for (std::size_t d = 0; d < perm.size(); ++d) inverse[static_cast<std::size_t>(perm[d])] = static_cast<std::int64_t>(d);
    y = b.op("Transpose", {y}, {{"perm", inverse}}, name);
  }
  return expanded(b, y);
}

Result<Tensor> expand_softmax(GraphBuilder& b, std::span<const Tensor> in, const OpAttrs& attrs, const std::string& name) {
  return expand_softmax_family(b, in[0], attrs, name, false);
}
Result<Tensor> expand_log_softmax(GraphBuilder& b, std::span<const Tensor> in, const OpAttrs& attrs,
                                  const std::string& name) {
  return expand_softmax_family(b, in[0], attrs, name, true);
}

// Rows along `axis`: element k of row (outer, inner) is at (outer * n + k) * inner_size + inner.
struct AxisRows {
  std::int64_t outer = 1, n = 1, inner = 1;
  std::size_t at(std::int64_t o, std::int64_t k, std::int64_t i) const {
    return static_cast<std::size_t>((o * n + k) * inner + i);
  }
};
AxisRows rows_along(const Shape& shape, std::size_t axis) {
  AxisRows r;
  for (std::size_t d = 0; d < shape.size(); ++d) (d < axis ? r.outer : d == axis ? r.n : r.inner) *= shape[d];
  return r;
}

Status reference_softmax_family(std::span<const RefTensor> in, const OpAttrs& attrs, RefTensor& out, bool log) {
  const RefTensor& x = in[0];
  VKFUSE_ASSIGN_OR_RETURN(std::size_t axis, normalize_axis(attrs.scalars[0], x.shape.size()));
  const AxisRows r = rows_along(x.shape, axis);
  out.data.assign(x.data.size(), 0.0);
  for (std::int64_t o = 0; o < r.outer; ++o)
    for (std::int64_t i = 0; i < r.inner; ++i) {
      double max = x.data[r.at(o, 0, i)];
      for (std::int64_t k = 1; k < r.n; ++k) max = std::max(max, x.data[r.at(o, k, i)]);
      double sum = 0.0;
      for (std::int64_t k = 0; k < r.n; ++k) sum += std::exp(x.data[r.at(o, k, i)] - max);
      for (std::int64_t k = 0; k < r.n; ++k) {
        const double shifted = x.data[r.at(o, k, i)] - max;
        out.data[r.at(o, k, i)] = log ? shifted - std::log(sum) : std::exp(shifted) / sum;
      }
    }
  return {};
}

Status reference_softmax(std::span<const RefTensor> in, const OpAttrs& attrs, RefTensor& out) {
  return reference_softmax_family(in, attrs, out, false);
}
Status reference_log_softmax(std::span<const RefTensor> in, const OpAttrs& attrs, RefTensor& out) {
  return reference_softmax_family(in, attrs, out, true);
}

// ---- LayerNormalization

constexpr AttrDef kLayerNormAttrs[] = {{"axis", -1.0f}, {"epsilon", 1e-5f}};

// numpy broadcasting of `param` to `x` without growing x.
bool broadcasts_onto(const Shape& param, const Shape& x) {
  if (param.size() > x.size()) return false;
  for (std::size_t d = 0; d < param.size(); ++d) {
    const std::int64_t p = param[param.size() - 1 - d], t = x[x.size() - 1 - d];
    if (p != 1 && p != t) return false;
  }
  return true;
}

Result<Tensor> expand_layer_norm(GraphBuilder& b, std::span<const Tensor> in, const OpAttrs& attrs,
                                 const std::string& name) {
  const Tensor x = in[0];
  const Shape shape = b.shape(x);
  const DType dtype = b.dtype(x);
  VKFUSE_ASSIGN_OR_RETURN(std::size_t axis, normalize_axis(attrs.scalars[0], shape.size()));
  const char* roles[] = {"x", "scale", "bias"};
  for (std::size_t k = 1; k < in.size(); ++k) {
    VKFUSE_TRY(require_dtype(b, in[k], dtype, roles[k]));
    if (!broadcasts_onto(b.shape(in[k]), shape))
      return make_error(ErrorCode::kInvalidArgument, std::string(roles[k]) + " " + shape_to_string(b.shape(in[k])) +
                                                         " does not broadcast to x " + shape_to_string(shape));
  }
  const Names n{name};
  const std::vector<Attr> over_axes{{"axis", static_cast<float>(axis)}, {"keepdims", 1.0f}};
  const Tensor t = cast_to_f32(b, x, n("to_f32"));
  const Tensor mean = b.op("ReduceMean", {t}, over_axes, n("mean"));
  const Tensor centered = b.op("Sub", {t, mean}, {}, n("center"));
  const Tensor var = b.op("ReduceMean", {b.op("Mul", {centered, centered}, {}, n("square"))}, over_axes, n("var"));
  const Tensor deviation =
      b.op("Sqrt", {b.op("Add", {var, b.scalar(attrs.scalars[1])}, {}, n("add_epsilon"))}, {}, n("std"));
  const Tensor normalized = b.op("Div", {centered, deviation}, {}, n("normalize"));
  const bool has_bias = in.size() > 2, cast = dtype == DType::kF16;
  Tensor y = b.op("Mul", {normalized, cast_to_f32(b, in[1], n("scale_to_f32"))}, {},
                  has_bias || cast ? n("scale") : name);
  if (has_bias) y = b.op("Add", {y, cast_to_f32(b, in[2], n("bias_to_f32"))}, {}, cast ? n("bias") : name);
  return expanded(b, cast_back(b, y, dtype, name));
}

// The element of `from` that broadcasts (numpy) to element `linear` of `to`.
std::size_t broadcast_index(const Shape& from, const Shape& to, std::int64_t linear) {
  std::int64_t offset = 0, stride = 1;
  for (std::size_t d = to.size(); d-- > 0;) {
    const std::int64_t coord = linear % to[d];
    linear /= to[d];
    const std::size_t lead = to.size() - from.size();
    if (d < lead) break;
    const std::int64_t extent = from[d - lead];
    if (extent != 1) offset += coord * stride;
    stride *= extent;
  }
  return static_cast<std::size_t>(offset);
}

Status reference_layer_norm(std::span<const RefTensor> in, const OpAttrs& attrs, RefTensor& out) {
  const RefTensor& x = in[0];
  VKFUSE_ASSIGN_OR_RETURN(std::size_t axis, normalize_axis(attrs.scalars[0], x.shape.size()));
  const double epsilon = attrs.scalars[1];
  std::int64_t rows = 1, n = 1;
  for (std::size_t d = 0; d < x.shape.size(); ++d) (d < axis ? rows : n) *= x.shape[d];
  out.data.assign(x.data.size(), 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto row = static_cast<std::size_t>(r * n);
    double mean = 0.0, var = 0.0;
    for (std::int64_t k = 0; k < n; ++k) mean += x.data[row + static_cast<std::size_t>(k)];
    mean /= static_cast<double>(n);
    for (std::int64_t k = 0; k < n; ++k) {
      const double d = x.data[row + static_cast<std::size_t>(k)] - mean;
      var += d * d;
    }
    var /= static_cast<double>(n);
    for (std::int64_t k = 0; k < n; ++k) {
      const std::int64_t i = r * n + k;
      double y = (x.data[static_cast<std::size_t>(i)] - mean) / std::sqrt(var + epsilon);
      y *= in[1].data[broadcast_index(in[1].shape, x.shape, i)];
      if (in.size() > 2) y += in[2].data[broadcast_index(in[2].shape, x.shape, i)];
      out.data[static_cast<std::size_t>(i)] = y;
    }
  }
  return {};
}

// ---- BatchNormalization (inference)

constexpr AttrDef kBatchNormAttrs[] = {{"epsilon", 1e-5f}};

Result<Tensor> expand_batch_norm(GraphBuilder& b, std::span<const Tensor> in, const OpAttrs& attrs,
                                 const std::string& name) {
  const Tensor x = in[0];
  const Shape shape = b.shape(x);
  const DType dtype = b.dtype(x);
  if (shape.size() < 2)
    return make_error(ErrorCode::kInvalidArgument,
                      "x " + shape_to_string(shape) + " has no channel axis (BatchNormalization wants [N,C,...])");
  const char* roles[] = {"x", "scale", "bias", "mean", "var"};
  const Names n{name};
  // Each [C] parameter, viewed as [C,1,...,1] against x and in f32.
  Shape per_channel(shape.size() - 1, 1);
  per_channel[0] = shape[1];
  Tensor params[5];
  for (std::size_t k = 1; k < 5; ++k) {
    VKFUSE_TRY(require_dtype(b, in[k], dtype, roles[k]));
    if (b.shape(in[k]) != Shape{shape[1]})
      return make_error(ErrorCode::kInvalidArgument, std::string(roles[k]) + " has shape " +
                                                         shape_to_string(b.shape(in[k])) + "; x " + shape_to_string(shape) +
                                                         " has " + std::to_string(shape[1]) + " channels, so it must be [" +
                                                         std::to_string(shape[1]) + "]");
    Tensor p = in[k];
    if (per_channel.size() > 1) p = b.op("Reshape", {p}, {{"shape", per_channel}}, n((std::string(roles[k]) + "_per_channel").c_str()));
    params[k] = cast_to_f32(b, p, n((std::string(roles[k]) + "_to_f32").c_str()));
  }
  const Tensor deviation =
      b.op("Sqrt", {b.op("Add", {params[4], b.scalar(attrs.scalars[0])}, {}, n("add_epsilon"))}, {}, n("std"));
  const Tensor gain = b.op("Div", {params[1], deviation}, {}, n("gain"));
  const Tensor centered = b.op("Sub", {cast_to_f32(b, x, n("to_f32")), params[3]}, {}, n("center"));
  const bool cast = dtype == DType::kF16;
  const Tensor y = b.op("Add", {b.op("Mul", {centered, gain}, {}, n("scale")), params[2]}, {}, cast ? n("shift") : name);
  return expanded(b, cast_back(b, y, dtype, name));
}

Status reference_batch_norm(std::span<const RefTensor> in, const OpAttrs& attrs, RefTensor& out) {
  const RefTensor& x = in[0];
  const double epsilon = attrs.scalars[0];
  const std::int64_t channels = x.shape.at(1);
  std::int64_t inner = 1;
  for (std::size_t d = 2; d < x.shape.size(); ++d) inner *= x.shape[d];
  out.data.assign(x.data.size(), 0.0);
  for (std::size_t i = 0; i < x.data.size(); ++i) {
    const auto c = static_cast<std::size_t>((static_cast<std::int64_t>(i) / inner) % channels);
    const double scale = in[1].data[c], bias = in[2].data[c], mean = in[3].data[c], var = in[4].data[c];
    out.data[i] = (x.data[i] - mean) / std::sqrt(var + epsilon) * scale + bias;
  }
  return {};
}

constexpr TestDomain kDomain{-4.0f, 4.0f, 0.0f, false};
// BatchNormalization's variance input must be positive: its inputs are drawn from [0.25, 4].
constexpr TestDomain kPositive{0.25f, 4.0f, 0.0f, false};

constexpr InputClass kF = InputClass::kFloat;

constexpr OpDef kCompositeOps[] = {
    {.name = "Softmax", .kind = OpKind::kComposite, .arity = 1, .input_class = {kF}, .type_rule = TypeRule::kSameAsFirst,
     .attrs = kSoftmaxAttrs, .cost = 20.0f, .tolerance = Tolerance::kSmooth, .domain = kDomain,
     .reference_kernel = reference_softmax, .expand = expand_softmax},
    {.name = "LogSoftmax", .kind = OpKind::kComposite, .arity = 1, .input_class = {kF},
     .type_rule = TypeRule::kSameAsFirst, .attrs = kSoftmaxAttrs, .cost = 20.0f, .tolerance = Tolerance::kSmooth,
     .domain = kDomain, .reference_kernel = reference_log_softmax, .expand = expand_log_softmax},
    {.name = "LayerNormalization", .kind = OpKind::kComposite, .arity = 3, .input_class = {kF, kF, kF},
     .type_rule = TypeRule::kSameAsFirst, .attrs = kLayerNormAttrs, .cost = 12.0f, .tolerance = Tolerance::kSmooth,
     .domain = kDomain, .min_arity = 2, .reference_kernel = reference_layer_norm, .expand = expand_layer_norm},
    {.name = "BatchNormalization", .kind = OpKind::kComposite, .arity = 5, .input_class = {kF, kF, kF},
     .type_rule = TypeRule::kSameAsFirst, .attrs = kBatchNormAttrs, .cost = 12.0f, .tolerance = Tolerance::kSmooth,
     .domain = kPositive, .reference_kernel = reference_batch_norm, .expand = expand_batch_norm},
};

}  // namespace

std::span<const OpDef> composite_ops() { return kCompositeOps; }

}  // namespace vkfuse
