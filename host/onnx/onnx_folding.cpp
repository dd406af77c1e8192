// Folding of the data-movement ops (every output element is a copy of one input element, so one
// index map per op serves both integer and float constants). Elementwise math is in
// onnx_folding_math.cpp.
#include "host/onnx/onnx_folding.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "host/checked_math.h"
#include "host/onnx/onnx_node_map.h"
#include "host/onnx/onnx_shapes.h"
#include "onnx.pb.h"

namespace vkfuse::onnx_import {
namespace {

using Inputs = std::span<const ConstTensor* const>;
using Outputs = std::optional<std::vector<ConstTensor>>;

Status invalid(const FoldContext& c, const std::string& message) {
  return make_error(ErrorCode::kInvalidArgument, c.attrs.where() + ": " + message);
}

const ConstTensor* input(Inputs in, std::size_t i) { return i < in.size() ? in[i] : nullptr; }

constexpr std::int64_t kMaxFoldedElements = FoldBudget::kMaxTensorElements;
// check_fold_size's message states both limits.
static_assert(kMaxFoldedElements == std::int64_t{1} << 24 && FoldBudget::kMaxModelElements == std::int64_t{1} << 26);

Result<std::vector<std::int64_t>> ints(const FoldContext& c, Inputs in, std::size_t i, const char* what) {
  const ConstTensor* t = input(in, i);
  if (!t) return invalid(c, std::string(what) + " (input " + std::to_string(i) + ") is missing");
  return integer_values(*t, c.attrs.where() + ": " + what);
}

// out[i] = in[src[i]].
ConstTensor take(const ConstTensor& in, Shape shape, const std::vector<std::int64_t>& src) {
  ConstTensor out;
  out.shape = std::move(shape);
  out.onnx_type = in.onnx_type;
  if (in.is_float()) {
    out.floats.resize(src.size());
    for (std::size_t i = 0; i < src.size(); ++i) out.floats[i] = in.floats[static_cast<std::size_t>(src[i])];
  } else {
    out.ints.resize(src.size());
    for (std::size_t i = 0; i < src.size(); ++i) out.ints[i] = in.ints[static_cast<std::size_t>(src[i])];
  }
  return out;
}

// The source offsets of a strided view (shape, strides, offset) in row-major output order.
std::vector<std::int64_t> strided_indices(const Shape& shape, const std::vector<std::int64_t>& strides, std::int64_t offset) {
  const std::int64_t numel = shape_numel(shape);
  std::vector<std::int64_t> src(static_cast<std::size_t>(std::max<std::int64_t>(numel, 0)));
  std::vector<std::int64_t> coord(shape.size(), 0);
  std::int64_t at = offset;
  for (std::size_t i = 0; i < src.size(); ++i) {
    src[i] = at;
    for (std::size_t d = shape.size(); d-- > 0;) {  // odometer step
      at += strides[d];
      if (++coord[d] < shape[d]) break;
      at -= strides[d] * coord[d];
      coord[d] = 0;
    }
  }
  return src;
}

ConstTensor with_shape(const ConstTensor& in, Shape shape) {
  ConstTensor out = in;
  out.shape = std::move(shape);
  return out;
}

// Not `std::vector{std::move(t)}`: an initializer list copies its elements.
Outputs one(ConstTensor t) {
  std::vector<ConstTensor> out;
  out.push_back(std::move(t));
  return out;
}

Result<Outputs> fold_transpose(const FoldContext& c, const ConstTensor& x) {
  const std::size_t rank = x.shape.size();
  std::vector<std::int64_t> perm(rank);
  std::iota(perm.rbegin(), perm.rend(), 0);
  VKFUSE_ASSIGN_OR_RETURN(perm, c.attrs.integers("perm", perm));
  std::vector<std::int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t d = 0; d < sorted.size(); ++d)
    if (sorted.size() != rank || sorted[d] != static_cast<std::int64_t>(d))
      return invalid(c, "perm " + shape_to_string(perm) + " is not a permutation of rank " + std::to_string(rank));
  const std::vector<std::int64_t> in_strides = row_major_strides(x.shape);
  Shape shape(rank);
  std::vector<std::int64_t> strides(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    shape[d] = x.shape[static_cast<std::size_t>(perm[d])];
    strides[d] = in_strides[static_cast<std::size_t>(perm[d])];
  }
  VKFUSE_TRY(check_fold_size(c, shape));
  return one(take(x, shape, strided_indices(shape, strides, 0)));
}

Result<Outputs> fold_slice(const FoldContext& c, Inputs in) {
  const ConstTensor& x = *in[0];
  VKFUSE_ASSIGN_OR_RETURN(const auto starts, ints(c, in, 1, "starts"));
  VKFUSE_ASSIGN_OR_RETURN(const auto ends, ints(c, in, 2, "ends"));
  std::vector<std::int64_t> axes, steps;
  if (input(in, 3)) {
    VKFUSE_ASSIGN_OR_RETURN(axes, ints(c, in, 3, "axes"));
  }
  if (input(in, 4)) {
    VKFUSE_ASSIGN_OR_RETURN(steps, ints(c, in, 4, "steps"));
  }
  auto resolved = resolve_slice(x.shape, starts, ends, axes, steps);
  if (!resolved.ok()) return invalid(c, resolved.status().message());
  Shape shape = x.shape;
  std::vector<std::int64_t> strides = row_major_strides(x.shape);
  std::int64_t offset = 0;
  for (const SliceAxis& s : *resolved) {
    const auto a = static_cast<std::size_t>(s.axis);
    offset += s.start * strides[a];
    strides[a] *= s.step;
    shape[a] = s.count;
  }
  VKFUSE_TRY(check_fold_size(c, shape));
  return one(take(x, shape, strided_indices(shape, strides, offset)));
}

Result<Outputs> fold_expand(const FoldContext& c, const ConstTensor& x, const std::vector<std::int64_t>& target) {
  VKFUSE_TRY(check_fold_size(c, target));
  auto shape = broadcast_all({x.shape, target});
  if (!shape.ok()) return invalid(c, "Expand: " + shape.status().message());
  VKFUSE_TRY(check_fold_size(c, *shape));
  const std::vector<std::int64_t> in_strides = row_major_strides(x.shape);
  std::vector<std::int64_t> strides(shape->size(), 0);
  const std::size_t lead = shape->size() - x.shape.size();
  for (std::size_t d = 0; d < x.shape.size(); ++d) strides[lead + d] = x.shape[d] == 1 ? 0 : in_strides[d];
  return one(take(x, *shape, strided_indices(*shape, strides, 0)));
}

Result<Outputs> fold_tile(const FoldContext& c, const ConstTensor& x, const std::vector<std::int64_t>& repeats) {
  if (repeats.size() != x.shape.size())
    return invalid(c, "Tile repeats " + shape_to_string(repeats) + " do not match the rank of " + shape_to_string(x.shape));
  Shape shape = x.shape;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (repeats[d] < 0) return invalid(c, "Tile repeats " + shape_to_string(repeats) + " are negative");
    auto tiled = mul_or_error(shape[d], repeats[d], "output dim " + std::to_string(d));
    if (!tiled.ok()) return tiled.status().with_context(c.attrs.where());
    shape[d] = *tiled;
  }
  VKFUSE_TRY(check_fold_size(c, shape));
  const std::vector<std::int64_t> in_strides = row_major_strides(x.shape);
  std::vector<std::int64_t> src(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < src.size(); ++i) {
    std::int64_t rest = static_cast<std::int64_t>(i), at = 0;
    for (std::size_t d = shape.size(); d-- > 0;) {
      at += (rest % shape[d]) % x.shape[d] * in_strides[d];
      rest /= shape[d];
    }
    src[i] = at;
  }
  return one(take(x, shape, src));
}

Result<Outputs> fold_concat(const FoldContext& c, Inputs in) {
  std::vector<const ConstTensor*> parts;
  for (const ConstTensor* t : in)
    if (t) parts.push_back(t);
  if (parts.empty()) return invalid(c, "Concat has no inputs");
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t axis_attr, c.attrs.integer("axis", 0));
  const auto rank = static_cast<std::int64_t>(parts[0]->shape.size());
  auto axis = normalize_axis(axis_attr, rank, "Concat axis");
  if (!axis.ok()) return invalid(c, axis.status().message());
  const auto a = static_cast<std::size_t>(*axis);
  Shape shape = parts[0]->shape;
  shape[a] = 0;
  for (const ConstTensor* t : parts) {
    bool same = t->shape.size() == shape.size() && t->is_float() == parts[0]->is_float();
    for (std::size_t d = 0; same && d < shape.size(); ++d) same = d == a || t->shape[d] == shape[d];
    if (!same) return invalid(c, "Concat inputs " + shape_to_string(parts[0]->shape) + " and " + shape_to_string(t->shape) + " do not match");
    auto extent = add_or_error(shape[a], t->shape[a], "output dim " + std::to_string(a));
    if (!extent.ok()) return extent.status().with_context(c.attrs.where());
    shape[a] = *extent;
  }
  VKFUSE_TRY(check_fold_size(c, shape));
  ConstTensor out = make_zero_tensor(shape, parts[0]->onnx_type);
  const std::int64_t outer = dims_product(shape, 0, a);
  std::size_t at = 0;
  for (std::int64_t o = 0; o < outer; ++o)
    for (const ConstTensor* t : parts) {
      const auto chunk = static_cast<std::size_t>(dims_product(t->shape, a, t->shape.size()));
      for (std::size_t k = 0; k < chunk; ++k, ++at) {
        const std::size_t from = static_cast<std::size_t>(o) * chunk + k;
        if (out.is_float()) out.floats[at] = t->floats[from];
        else out.ints[at] = t->ints[from];
      }
    }
  return one(std::move(out));
}

Result<Outputs> fold_gather(const FoldContext& c, const ConstTensor& data, const ConstTensor& indices) {
  VKFUSE_ASSIGN_OR_RETURN(const auto idx, integer_values(indices, c.attrs.where() + ": Gather indices"));
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t axis_attr, c.attrs.integer("axis", 0));
  auto axis = normalize_axis(axis_attr, static_cast<std::int64_t>(data.shape.size()), "Gather axis");
  if (!axis.ok()) return invalid(c, axis.status().message());
  const auto a = static_cast<std::size_t>(*axis);
  const std::int64_t dim = data.shape[a];
  Shape shape(data.shape.begin(), data.shape.begin() + static_cast<std::ptrdiff_t>(a));
  shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
  shape.insert(shape.end(), data.shape.begin() + static_cast<std::ptrdiff_t>(a) + 1, data.shape.end());
  VKFUSE_TRY(check_fold_size(c, shape));
  const std::int64_t outer = dims_product(data.shape, 0, a), inner = dims_product(data.shape, a + 1, data.shape.size());
  std::vector<std::int64_t> src;
  src.reserve(static_cast<std::size_t>(outer) * idx.size() * static_cast<std::size_t>(inner));
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t index : idx) {
      const std::int64_t i = index < 0 ? index + dim : index;
      if (i < 0 || i >= dim)
        return invalid(c, "Gather index " + std::to_string(index) + " is out of range for axis " + std::to_string(a) + " of " +
                              shape_to_string(data.shape));
      for (std::int64_t k = 0; k < inner; ++k) src.push_back((o * dim + i) * inner + k);
    }
  return one(take(data, shape, src));
}

Result<Outputs> fold_split(const FoldContext& c, Inputs in) {
  const ConstTensor& x = *in[0];
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t axis_attr, c.attrs.integer("axis", 0));
  auto axis = normalize_axis(axis_attr, static_cast<std::int64_t>(x.shape.size()), "Split axis");
  if (!axis.ok()) return invalid(c, axis.status().message());
  const std::int64_t dim = x.shape[static_cast<std::size_t>(*axis)];
  std::vector<std::int64_t> sizes;
  if (c.opset < 13) {
    VKFUSE_ASSIGN_OR_RETURN(sizes, c.attrs.integers("split"));
  } else if (input(in, 1)) {
    VKFUSE_ASSIGN_OR_RETURN(sizes, ints(c, in, 1, "split"));
  }
  const auto outputs = static_cast<std::int64_t>(c.node.output_size());
  if (sizes.empty()) {
    VKFUSE_ASSIGN_OR_RETURN(std::int64_t n, c.attrs.integer("num_outputs", outputs));
    if (n <= 0) return invalid(c, "Split into " + std::to_string(n) + " outputs");
    const std::int64_t chunk = (dim + n - 1) / n;  // opset 18: the last chunk may be smaller
    for (std::int64_t at = 0; at < dim; at += chunk) sizes.push_back(std::min(chunk, dim - at));
  }
  std::int64_t total = 0;
  for (std::int64_t s : sizes) {
    if (s < 0 || s > dim) return invalid(c, "Split sizes " + shape_to_string(sizes) + " do not fit axis " + std::to_string(*axis));
    total += s;
  }
  if (total != dim || static_cast<std::int64_t>(sizes.size()) != outputs)
    return invalid(c, "Split sizes " + shape_to_string(sizes) + " do not divide axis " + std::to_string(*axis) + " of " +
                          shape_to_string(x.shape) + " into " + std::to_string(outputs) + " outputs");
  VKFUSE_TRY(check_fold_size(c, x.shape));
  std::vector<ConstTensor> out;
  std::int64_t start = 0;
  for (std::int64_t s : sizes) {
    Shape shape = x.shape;
    shape[static_cast<std::size_t>(*axis)] = s;
    const std::vector<std::int64_t> strides = row_major_strides(x.shape);
    out.push_back(take(x, shape, strided_indices(shape, strides, start * strides[static_cast<std::size_t>(*axis)])));
    start += s;
  }
  return Outputs{std::move(out)};
}

Result<Outputs> fold_constant(const FoldContext& c) {
  VKFUSE_ASSIGN_OR_RETURN(const onnx::TensorProto* value, c.attrs.tensor("value"));
  if (value) {
    VKFUSE_ASSIGN_OR_RETURN(ConstTensor t, const_from_proto(*value, c.base_dir, c.attrs.where() + " value"));
    return one(std::move(t));
  }
  if (c.attrs.has("value_float")) {
    VKFUSE_ASSIGN_OR_RETURN(const float v, c.attrs.real("value_float", 0.0f));
    return one(make_float_tensor({}, {v}));
  }
  if (c.attrs.has("value_floats")) {
    VKFUSE_ASSIGN_OR_RETURN(std::vector<float> v, c.attrs.reals("value_floats"));
    const auto n = static_cast<std::int64_t>(v.size());
    return one(make_float_tensor({n}, std::move(v)));
  }
  if (c.attrs.has("value_int")) {
    VKFUSE_ASSIGN_OR_RETURN(const std::int64_t v, c.attrs.integer("value_int", 0));
    return one(make_int64_tensor({}, {v}));
  }
  if (c.attrs.has("value_ints")) {
    VKFUSE_ASSIGN_OR_RETURN(std::vector<std::int64_t> v, c.attrs.integers("value_ints"));
    const auto n = static_cast<std::int64_t>(v.size());
    return one(make_int64_tensor({n}, std::move(v)));
  }
  for (const char* name : {"sparse_value", "value_string", "value_strings"})
    if (c.attrs.has(name)) return c.attrs.unsupported(name, "");
  return invalid(c, "Constant has no value");
}

Result<Outputs> fold_constant_of_shape(const FoldContext& c, Inputs in) {
  VKFUSE_ASSIGN_OR_RETURN(const Shape shape, ints(c, in, 0, "shape"));
  VKFUSE_TRY(check_fold_size(c, shape));
  VKFUSE_ASSIGN_OR_RETURN(const onnx::TensorProto* value, c.attrs.tensor("value"));
  ConstTensor fill = make_float_tensor({1}, {0.0f});
  if (value) {
    VKFUSE_ASSIGN_OR_RETURN(fill, const_from_proto(*value, c.base_dir, c.attrs.where() + " value"));
  }
  if (fill.numel() != 1) return invalid(c, "ConstantOfShape value must hold one element");
  ConstTensor out = make_zero_tensor(shape, fill.onnx_type);
  if (out.is_float()) std::fill(out.floats.begin(), out.floats.end(), fill.floats[0]);
  else std::fill(out.ints.begin(), out.ints.end(), fill.ints[0]);
  return one(std::move(out));
}

Result<Outputs> fold_range(const FoldContext& c, Inputs in) {
  for (std::size_t i = 0; i < 3; ++i)
    if (!input(in, i) || input(in, i)->numel() != 1) return invalid(c, "Range inputs must be scalars");
  const ConstTensor& start = *in[0];
  if (in[1]->is_float() != start.is_float() || in[2]->is_float() != start.is_float())
    return invalid(c, "Range inputs must have one type");
  // count = max(ceil((limit - start) / delta), 0), bounded before anything is allocated.
  const double span = in[1]->at(0) - start.at(0), delta_f = in[2]->at(0);
  if (delta_f == 0.0) return invalid(c, "Range delta is 0");
  const double count_f = std::max(std::ceil(span / delta_f), 0.0);
  if (std::isnan(count_f)) return invalid(c, "Range has no element count (NaN)");
  VKFUSE_TRY(check_fold_size(c, {count_f < 9.2e18 ? static_cast<std::int64_t>(count_f) : std::numeric_limits<std::int64_t>::max()}));
  if (!start.is_float()) {
    const std::int64_t s0 = start.ints[0], limit = in[1]->ints.at(0), delta = in[2]->ints.at(0);
    // Exact in integers (the double estimate above only bounds the size): ceil division, and every
    // value checked for overflow.
    std::int64_t diff = 0;
    if (__builtin_sub_overflow(limit, s0, &diff) || (diff == std::numeric_limits<std::int64_t>::min() && delta == -1))
      return invalid(c, "Range limits overflow int64");
    const std::int64_t q = diff / delta, r = diff % delta;
    const std::int64_t count = std::max<std::int64_t>(q + ((r != 0 && ((r > 0) == (delta > 0))) ? 1 : 0), 0);
    VKFUSE_TRY(check_fold_size(c, {count}));
    std::vector<std::int64_t> v(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < v.size(); ++i) {
      std::int64_t step = 0;
      if (__builtin_mul_overflow(static_cast<std::int64_t>(i), delta, &step) || __builtin_add_overflow(s0, step, &v[i]))
        return invalid(c, "Range values overflow int64");
    }
    ConstTensor out = make_int64_tensor({count}, std::move(v));
    out.onnx_type = start.onnx_type;
    return one(std::move(out));
  }
  const auto count = static_cast<std::int64_t>(count_f);
  std::vector<float> v(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = round_to_onnx_float(start.at(0) + static_cast<double>(i) * delta_f, start.onnx_type);
  return one(make_float_tensor({count}, std::move(v), start.onnx_type));
}

// Squeeze/Unsqueeze axes: an attribute before opset 13, an input from 13.
Result<std::vector<std::int64_t>> squeeze_axes(const FoldContext& c, Inputs in) {
  if (c.opset < 13) return c.attrs.integers("axes");
  if (!input(in, 1)) return std::vector<std::int64_t>{};
  return ints(c, in, 1, "axes");
}

template <class T>
Result<Outputs> reshaped(const FoldContext& c, const ConstTensor& x, Result<T> shape) {
  if (!shape.ok()) return invalid(c, shape.status().message());
  VKFUSE_TRY(check_fold_size(c, x.shape));
  return one(with_shape(x, *shape));
}

}  // namespace

Result<ConstTensor> fold_shape_of(const Shape& shape, const NodeAttributes& attrs) {
  const auto rank = static_cast<std::int64_t>(shape.size());
  VKFUSE_ASSIGN_OR_RETURN(std::int64_t start, attrs.integer("start", 0));
  VKFUSE_ASSIGN_OR_RETURN(std::int64_t end, attrs.integer("end", rank));
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<std::int64_t>(start, 0, rank);
  end = std::clamp<std::int64_t>(end, start, rank);
  std::vector<std::int64_t> dims(shape.begin() + start, shape.begin() + end);
  const auto n = static_cast<std::int64_t>(dims.size());
  return make_int64_tensor({n}, std::move(dims));
}

ConstTensor fold_size_of(const Shape& shape) { return make_int64_tensor({}, {shape_numel(shape)}); }

namespace {

Result<Outputs> fold_dispatch(const FoldContext& c, Inputs in) {
  const std::string& op = c.node.op_type();
  if (op == "Constant") return fold_constant(c);
  if (op == "ConstantOfShape") return fold_constant_of_shape(c, in);
  if (op == "Range") return fold_range(c, in);
  if (in.empty() || !in[0]) return Outputs{};
  const ConstTensor& x = *in[0];
  if (op == "Identity" || op == "Dropout") {
    VKFUSE_TRY(check_fold_size(c, x.shape));
    std::vector<ConstTensor> out{x};
    if (op == "Dropout" && c.node.output_size() > 1) {  // the mask: all true in inference
      ConstTensor mask = make_zero_tensor(x.shape, onnx::TensorProto::BOOL);
      std::fill(mask.ints.begin(), mask.ints.end(), 1);
      out.push_back(std::move(mask));
    }
    return Outputs{std::move(out)};
  }
  if (op == "Shape") {
    VKFUSE_ASSIGN_OR_RETURN(ConstTensor t, fold_shape_of(x.shape, c.attrs));
    return one(std::move(t));
  }
  if (op == "Size") return one(fold_size_of(x.shape));
  if (op == "Reshape") {
    VKFUSE_ASSIGN_OR_RETURN(const auto spec, ints(c, in, 1, "shape"));
    VKFUSE_ASSIGN_OR_RETURN(const std::int64_t allowzero, c.attrs.integer("allowzero", 0));
    return reshaped(c, x, reshape_target(x.shape, spec, allowzero != 0));
  }
  if (op == "Flatten") {
    VKFUSE_ASSIGN_OR_RETURN(const std::int64_t axis, c.attrs.integer("axis", 1));
    return reshaped(c, x, flatten_shape(x.shape, axis));
  }
  if (op == "Squeeze") {
    VKFUSE_ASSIGN_OR_RETURN(const auto axes, squeeze_axes(c, in));
    return reshaped(c, x, squeeze_shape(x.shape, axes));
  }
  if (op == "Unsqueeze") {
    VKFUSE_ASSIGN_OR_RETURN(const auto axes, squeeze_axes(c, in));
    return reshaped(c, x, unsqueeze_shape(x.shape, axes));
  }
  if (op == "Transpose") return fold_transpose(c, x);
  if (op == "Slice") return fold_slice(c, in);
  if (op == "Concat") return fold_concat(c, in);
  if (op == "Split") return fold_split(c, in);
  if (op == "Gather") {
    if (!input(in, 1)) return invalid(c, "Gather needs indices");
    return fold_gather(c, x, *in[1]);
  }
  if (op == "Expand") {
    VKFUSE_ASSIGN_OR_RETURN(const auto shape, ints(c, in, 1, "shape"));
    return fold_expand(c, x, shape);
  }
  if (op == "Tile") {
    VKFUSE_ASSIGN_OR_RETURN(const auto repeats, ints(c, in, 1, "repeats"));
    return fold_tile(c, x, repeats);
  }
  VKFUSE_ASSIGN_OR_RETURN(std::optional<ConstTensor> result, fold_elementwise(c, in));
  if (!result) return Outputs{};
  return one(std::move(*result));
}

}  // namespace

Status check_fold_size(const FoldContext& c, const Shape& shape) {
  for (std::int64_t d : shape)
    if (d < 0) return invalid(c, "the result shape " + shape_to_string(shape) + " has a negative dimension");
  const std::optional<std::int64_t> numel = checked_numel(shape);
  const std::int64_t left = c.budget ? c.budget->elements_left : kMaxFoldedElements;
  if (!numel || *numel > kMaxFoldedElements || *numel > left)
    return make_error(ErrorCode::kOutOfMemory,
                      c.attrs.where() + ": folding would create a constant of shape " + shape_to_string(shape) + " (" +
                          (numel ? std::to_string(*numel) + " elements" : std::string("more than 2^63 elements")) +
                          "), over the folder's limit of 2^24 elements per tensor and 2^26 per model");
  return {};
}

Result<std::optional<std::vector<ConstTensor>>> fold_node(const FoldContext& c, Inputs in) {
  Result<Outputs> folded = fold_dispatch(c, in);
  if (!folded.ok()) {
    if (folded.status().code() != ErrorCode::kOutOfMemory) return folded.status();
    const OnnxOpMapping* mapping = find_onnx_mapping(c.node.op_type());
    if (!mapping || mapping->map == map_fold_only)  // no GPU op to leave it to
      return make_error(ErrorCode::kUnsupported, folded.status().message());
    return Outputs{};  // too large to hold on the host: the GPU computes it from the constant inputs
  }
  if (*folded && c.budget)
    for (const ConstTensor& t : **folded) c.budget->elements_left -= t.numel();
  return folded;
}

}  // namespace vkfuse::onnx_import
