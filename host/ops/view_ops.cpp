// Layout ops as index maps: they rewrite a strided view of a stored tensor and never dispatch.
//   Slice(x; axis, start, end, step): ONNX semantics for one axis (negative indices count from the end,
//     out-of-range ones clamp, step may be negative).
//   Reshape(x; list shape): ONNX with allowzero = 0 (0 copies the input's dim, one -1 is inferred).
//   Transpose(x; list perm): default reverses the axes.
//   Squeeze(x; list axes): drops the named size-1 axes (default: all of them). Negative axes count
//     from the end of the input.
//   Unsqueeze(x; list axes): inserts size-1 axes; negative axes count from the end of the output.
//   Flatten(x; axis = 1): [prod(dims before axis), prod(dims from axis)]; axis in [-rank, rank].
//
// Reshape and Flatten merge and split the input's strides where its dims are laid out as one block;
// where they are not (a Reshape of a transpose) they answer kUnsupported and the builder copies the
// input first (GraphBuilder::op). Every view gives size-1 dims the stride a contiguous tensor would
// have: their stride is never used to address anything, and this way a view of a contiguous tensor
// stays recognisably contiguous (kernel ops then read it without a copy).
#include <algorithm>
#include <string>

#include "host/checked_math.h"
#include "host/op_registry.h"
#include "host/slice_range.h"

namespace vkfuse {
namespace {

std::string list_string(const std::vector<std::int64_t>& list) { return shape_to_string(list); }

// Size-1 dims get the stride they would have in a contiguous tensor (see the file comment).
void settle_unit_strides(StridedLayout& layout) {
  for (std::size_t d = layout.shape.size(); d-- > 0;)
    if (layout.shape[d] == 1)
      layout.strides[d] = d + 1 < layout.shape.size() ? layout.strides[d + 1] * layout.shape[d + 1] : 1;
}

// `axis` counted from the end when negative, checked against [0, rank).
Result<std::size_t> normalize_axis(std::int64_t axis, std::size_t rank, const std::string& what) {
  const auto r = static_cast<std::int64_t>(rank);
  const std::int64_t a = axis < 0 ? axis + r : axis;
  if (a < 0 || a >= r)
    return make_error(ErrorCode::kInvalidArgument, what + " " + std::to_string(axis) + " is out of range for rank " +
                                                       std::to_string(rank));
  return static_cast<std::size_t>(a);
}

// Normalized, distinct axes of a list (for Squeeze and Unsqueeze).
Result<std::vector<bool>> axis_set(const std::vector<std::int64_t>& axes, std::size_t rank, const std::string& op) {
  std::vector<bool> chosen(rank, false);
  for (std::int64_t axis : axes) {
    VKFUSE_ASSIGN_OR_RETURN(std::size_t a, normalize_axis(axis, rank, op + " axis"));
    if (chosen[a])
      return make_error(ErrorCode::kInvalidArgument,
                        op + " axes " + list_string(axes) + " name axis " + std::to_string(a) + " twice");
    chosen[a] = true;
  }
  return chosen;
}

// Re-expresses `layout` with shape `target` (same element count). Each run of input dims that the
// target splits or merges must be one block in memory (stride[k] = stride[k+1] * shape[k+1]);
// size-1 dims take no part. Otherwise kUnsupported.
Status reshape_layout(StridedLayout& layout, const Shape& target, const std::string& op) {
  std::vector<std::size_t> in_dims, out_dims;  // the non-unit dims of each side
  for (std::size_t d = 0; d < layout.shape.size(); ++d)
    if (layout.shape[d] != 1) in_dims.push_back(d);
  for (std::size_t d = 0; d < target.size(); ++d)
    if (target[d] != 1) out_dims.push_back(d);
  std::vector<std::int64_t> strides(target.size(), 0);
  std::size_t i = 0, o = 0;
  while (i < in_dims.size() && o < out_dims.size()) {
    // The shortest runs i..i_end and o..o_end with equal products.
    std::size_t i_end = i + 1, o_end = o + 1;
    std::int64_t in_product = layout.shape[in_dims[i]], out_product = target[out_dims[o]];
    while (in_product != out_product) {
      if (in_product < out_product && i_end < in_dims.size()) in_product *= layout.shape[in_dims[i_end++]];
      else if (out_product < in_product && o_end < out_dims.size()) out_product *= target[out_dims[o_end++]];
      else return make_error(ErrorCode::kInternal, op + ": element counts of " + shape_to_string(layout.shape) +
                                                       " and " + shape_to_string(target) + " differ");
    }
    for (std::size_t k = i; k + 1 < i_end; ++k) {
      const std::size_t a = in_dims[k], b = in_dims[k + 1];
      if (layout.strides[a] != layout.strides[b] * layout.shape[b])
        return make_error(ErrorCode::kUnsupported,
                          op + " to " + shape_to_string(target) + ": dims " + std::to_string(a) + " and " +
                              std::to_string(b) + " of the strided input " + shape_to_string(layout.shape) +
                              " (strides " + list_string(layout.strides) + ") are not one block in memory");
    }
    std::int64_t stride = layout.strides[in_dims[i_end - 1]];
    for (std::size_t k = o_end; k-- > o;) {
      strides[out_dims[k]] = stride;
      stride *= target[out_dims[k]];
    }
    i = i_end;
    o = o_end;
  }
  if (i != in_dims.size() || o != out_dims.size())
    return make_error(ErrorCode::kInternal, op + ": element counts of " + shape_to_string(layout.shape) + " and " +
                                                shape_to_string(target) + " differ");
  layout.shape = target;
  layout.strides = std::move(strides);
  settle_unit_strides(layout);
  return {};
}

constexpr AttrDef kSliceAttrs[] = {{"axis", 0.0f}, {"start", 0.0f}, {"end", 2147483647.0f}, {"step", 1.0f}};

Status view_slice(StridedLayout& layout, const OpAttrs& op_attrs) {
  const std::span<const float> attrs = op_attrs.scalars;
  const auto rank = static_cast<std::int64_t>(layout.shape.size());
  std::int64_t axis = static_cast<std::int64_t>(attrs[0]);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank)
    return make_error(ErrorCode::kInvalidArgument, "Slice axis " + std::to_string(static_cast<int>(attrs[0])) +
                                                       " is out of range for rank " + std::to_string(rank));
  const std::int64_t dim = layout.shape[static_cast<std::size_t>(axis)];
  const auto step = static_cast<std::int64_t>(attrs[3]);
  if (step == 0) return make_error(ErrorCode::kInvalidArgument, "Slice step is 0");
  const SliceRange range = resolve_slice_range(dim, static_cast<std::int64_t>(std::clamp<double>(attrs[1], -9.0e18, 9.0e18)),
                                               static_cast<std::int64_t>(std::clamp<double>(attrs[2], -9.0e18, 9.0e18)), step);
  const auto a = static_cast<std::size_t>(axis);
  layout.offset += range.start * layout.strides[a];
  layout.strides[a] *= step;
  layout.shape[a] = range.count;
  return {};
}

// ONNX Reshape's target with allowzero = 0: 0 copies the input's dim at that index, one -1 takes
// what is left.
Result<Shape> reshape_target(const Shape& in, const std::vector<std::int64_t>& spec) {
  Shape target(spec.size());
  std::int64_t known = 1;
  std::size_t inferred = spec.size();
  for (std::size_t d = 0; d < spec.size(); ++d) {
    const std::int64_t v = spec[d];
    if (v == 0) {
      if (d >= in.size())
        return make_error(ErrorCode::kInvalidArgument, "shape " + list_string(spec) + ": entry " + std::to_string(d) +
                                                           " is 0 (copy the input's dim), but the input " +
                                                           shape_to_string(in) + " has rank " + std::to_string(in.size()));
      target[d] = in[d];
    } else if (v == -1) {
      if (inferred != spec.size())
        return make_error(ErrorCode::kInvalidArgument, "shape " + list_string(spec) + " has more than one -1 (entries " +
                                                           std::to_string(inferred) + " and " + std::to_string(d) + ")");
      inferred = d;
      continue;
    } else if (v < 0) {
      return make_error(ErrorCode::kInvalidArgument, "shape " + list_string(spec) + ": entry " + std::to_string(d) +
                                                         " is " + std::to_string(v) + " (only -1 may be negative)");
    } else {
      target[d] = v;
    }
    VKFUSE_ASSIGN_OR_RETURN(known, mul_or_error(known, target[d], "shape " + list_string(spec) + ": the element count"));
  }
  const std::int64_t numel = shape_numel(in);
  if (inferred != spec.size()) {
    if (numel % known != 0)
      return make_error(ErrorCode::kInvalidArgument,
                        "shape " + list_string(spec) + ": the input " + shape_to_string(in) + " has " +
                            std::to_string(numel) + " elements, which the other entries' product " +
                            std::to_string(known) + " does not divide");
    target[inferred] = numel / known;
  } else if (known != numel) {
    return make_error(ErrorCode::kInvalidArgument, "shape " + list_string(spec) + " has " + std::to_string(known) +
                                                       " elements, the input " + shape_to_string(in) + " has " +
                                                       std::to_string(numel));
  }
  return target;
}

Status view_reshape(StridedLayout& layout, const OpAttrs& attrs) {
  if (!attrs.has_list("shape"))
    return make_error(ErrorCode::kInvalidArgument, "Reshape needs the list attribute 'shape'");
  VKFUSE_ASSIGN_OR_RETURN(Shape target, reshape_target(layout.shape, attrs.list("shape")));
  return reshape_layout(layout, target, "Reshape");
}

Status view_transpose(StridedLayout& layout, const OpAttrs& attrs) {
  const std::size_t rank = layout.shape.size();
  std::vector<std::int64_t> perm = attrs.list("perm");
  if (!attrs.has_list("perm"))
    for (std::size_t d = rank; d-- > 0;) perm.push_back(static_cast<std::int64_t>(d));
  if (perm.size() != rank)
    return make_error(ErrorCode::kInvalidArgument, "Transpose perm " + list_string(perm) + " has " +
                                                       std::to_string(perm.size()) + " entries, the input " +
                                                       shape_to_string(layout.shape) + " has rank " + std::to_string(rank));
  std::vector<bool> used(rank, false);
  StridedLayout out{Shape(rank), std::vector<std::int64_t>(rank), layout.offset};
  for (std::size_t d = 0; d < rank; ++d) {
    const std::int64_t p = perm[d];
    if (p < 0 || p >= static_cast<std::int64_t>(rank))
      return make_error(ErrorCode::kInvalidArgument, "Transpose perm " + list_string(perm) + ": " + std::to_string(p) +
                                                         " is not an axis of rank " + std::to_string(rank));
    if (used[static_cast<std::size_t>(p)])
      return make_error(ErrorCode::kInvalidArgument,
                        "Transpose perm " + list_string(perm) + " names axis " + std::to_string(p) + " twice");
    used[static_cast<std::size_t>(p)] = true;
    out.shape[d] = layout.shape[static_cast<std::size_t>(p)];
    out.strides[d] = layout.strides[static_cast<std::size_t>(p)];
  }
  layout = std::move(out);
  settle_unit_strides(layout);
  return {};
}

Status view_squeeze(StridedLayout& layout, const OpAttrs& attrs) {
  const std::size_t rank = layout.shape.size();
  const std::vector<std::int64_t> axes = attrs.list("axes");
  std::vector<bool> drop(rank, false);
  if (axes.empty()) {
    for (std::size_t d = 0; d < rank; ++d) drop[d] = layout.shape[d] == 1;
  } else {
    VKFUSE_ASSIGN_OR_RETURN(drop, axis_set(axes, rank, "Squeeze"));
    for (std::size_t d = 0; d < rank; ++d)
      if (drop[d] && layout.shape[d] != 1)
        return make_error(ErrorCode::kInvalidArgument, "Squeeze axis " + std::to_string(d) + " of " +
                                                           shape_to_string(layout.shape) + " has size " +
                                                           std::to_string(layout.shape[d]) + ", not 1");
  }
  StridedLayout out{{}, {}, layout.offset};
  for (std::size_t d = 0; d < rank; ++d)
    if (!drop[d]) {
      out.shape.push_back(layout.shape[d]);
      out.strides.push_back(layout.strides[d]);
    }
  layout = std::move(out);
  return {};
}

Status view_unsqueeze(StridedLayout& layout, const OpAttrs& attrs) {
  if (!attrs.has_list("axes"))
    return make_error(ErrorCode::kInvalidArgument, "Unsqueeze needs the list attribute 'axes'");
  const std::vector<std::int64_t> axes = attrs.list("axes");
  const std::size_t rank = layout.shape.size() + axes.size();
  VKFUSE_ASSIGN_OR_RETURN(std::vector<bool> insert, axis_set(axes, rank, "Unsqueeze"));
  StridedLayout out{{}, {}, layout.offset};
  std::size_t next = 0;
  for (std::size_t d = 0; d < rank; ++d) {
    out.shape.push_back(insert[d] ? 1 : layout.shape[next]);
    out.strides.push_back(insert[d] ? 0 : layout.strides[next]);
    if (!insert[d]) ++next;
  }
  layout = std::move(out);
  settle_unit_strides(layout);
  return {};
}

constexpr AttrDef kFlattenAttrs[] = {{"axis", 1.0f}};

Status view_flatten(StridedLayout& layout, const OpAttrs& attrs) {
  const auto rank = static_cast<std::int64_t>(layout.shape.size());
  const auto given = static_cast<std::int64_t>(attrs.scalars[0]);
  const std::int64_t axis = given < 0 ? given + rank : given;
  if (axis < 0 || axis > rank)
    return make_error(ErrorCode::kInvalidArgument, "Flatten axis " + std::to_string(given) + " is out of range for rank " +
                                                       std::to_string(rank) + " (allowed: -rank to rank)");
  Shape target{1, 1};
  for (std::int64_t d = 0; d < rank; ++d) target[d < axis ? 0 : 1] *= layout.shape[static_cast<std::size_t>(d)];
  return reshape_layout(layout, target, "Flatten");
}

double reference_identity(std::span<const double> in, std::span<const float>) { return in[0]; }

constexpr TestDomain kDomain{-4.0f, 4.0f, 0.0f, false};
constexpr std::string_view kShapeList[] = {"shape"};
constexpr std::string_view kPermList[] = {"perm"};
constexpr std::string_view kAxesList[] = {"axes"};

constexpr OpDef kViewOps[] = {
    {"Slice", OpKind::kView, 1, "", "", {InputClass::kAny}, TypeRule::kSameAsFirst, kSliceAttrs, reference_identity,
     0.0f, Tolerance::kExact, kDomain, ReduceCombine::kSum, view_slice},
    {.name = "Reshape", .kind = OpKind::kView, .arity = 1, .input_class = {InputClass::kAny},
     .type_rule = TypeRule::kSameAsFirst, .reference = reference_identity, .cost = 0.0f, .tolerance = Tolerance::kExact,
     .domain = kDomain, .view = view_reshape, .list_attrs = kShapeList},
    {.name = "Transpose", .kind = OpKind::kView, .arity = 1, .input_class = {InputClass::kAny},
     .type_rule = TypeRule::kSameAsFirst, .reference = reference_identity, .cost = 0.0f, .tolerance = Tolerance::kExact,
     .domain = kDomain, .view = view_transpose, .list_attrs = kPermList},
    {.name = "Squeeze", .kind = OpKind::kView, .arity = 1, .input_class = {InputClass::kAny},
     .type_rule = TypeRule::kSameAsFirst, .reference = reference_identity, .cost = 0.0f, .tolerance = Tolerance::kExact,
     .domain = kDomain, .view = view_squeeze, .list_attrs = kAxesList},
    {.name = "Unsqueeze", .kind = OpKind::kView, .arity = 1, .input_class = {InputClass::kAny},
     .type_rule = TypeRule::kSameAsFirst, .reference = reference_identity, .cost = 0.0f, .tolerance = Tolerance::kExact,
     .domain = kDomain, .view = view_unsqueeze, .list_attrs = kAxesList},
    {.name = "Flatten", .kind = OpKind::kView, .arity = 1, .input_class = {InputClass::kAny},
     .type_rule = TypeRule::kSameAsFirst, .attrs = kFlattenAttrs, .reference = reference_identity, .cost = 0.0f,
     .tolerance = Tolerance::kExact, .domain = kDomain, .view = view_flatten},
};

}  // namespace

std::span<const OpDef> view_ops() { return kViewOps; }

}  // namespace vkfuse
