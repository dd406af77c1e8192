// Layout ops as index maps: they rewrite a strided view of a stored tensor and never dispatch.
//   Slice(x; axis, start, end, step): ONNX semantics for one axis (negative indices count from the end,
//     out-of-range ones clamp, step may be negative).
#include <algorithm>
#include <string>

#include "host/op_registry.h"

namespace vkfuse {
namespace {

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
  auto start = static_cast<std::int64_t>(attrs[1]);
  auto end = static_cast<std::int64_t>(std::clamp<double>(attrs[2], -9.0e18, 9.0e18));
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  std::int64_t count = 0;
  if (step > 0) {
    start = std::clamp<std::int64_t>(start, 0, dim);
    end = std::clamp<std::int64_t>(end, 0, dim);
    count = end > start ? (end - start + step - 1) / step : 0;
  } else {
    start = std::clamp<std::int64_t>(start, 0, dim - 1);
    end = std::clamp<std::int64_t>(end, -1, dim - 1);
    count = start > end ? (start - end - step - 1) / -step : 0;
  }
  const auto a = static_cast<std::size_t>(axis);
  layout.offset += start * layout.strides[a];
  layout.strides[a] *= step;
  layout.shape[a] = count;
  return {};
}

double reference_identity(std::span<const double> in, std::span<const float>) { return in[0]; }

constexpr TestDomain kDomain{-4.0f, 4.0f, 0.0f, false};

constexpr OpDef kViewOps[] = {
    {"Slice", OpKind::kView, 1, "", "", {InputClass::kAny}, TypeRule::kSameAsFirst, kSliceAttrs, reference_identity,
     0.0f, Tolerance::kExact, kDomain, ReduceCombine::kSum, view_slice},
};

}  // namespace

std::span<const OpDef> view_ops() { return kViewOps; }

}  // namespace vkfuse
