#include "host/view_reorder.h"

#include <algorithm>
#include <set>
#include <utility>

#include "host/shape_inference.h"

namespace vkfuse {

std::optional<ReorderedSpace> reordered_space(const Shape& value, const StridedLayout& view) {
  const std::int64_t numel = shape_numel(value);
  if (view.offset != 0 || numel <= 1 || shape_numel(view.shape) != numel || view.strides.size() != view.shape.size())
    return std::nullopt;
  // The view's axes, innermost first, must tile the value's elements: 1, then each the one before times
  // its extent.
  std::vector<std::pair<std::int64_t, std::int64_t>> axes;  // (stride, extent)
  for (std::size_t d = 0; d < view.shape.size(); ++d)
    if (view.shape[d] != 1) axes.emplace_back(view.strides[d], view.shape[d]);
  std::sort(axes.begin(), axes.end());
  std::set<std::int64_t> cuts{1, numel};
  std::int64_t expected = 1;
  for (const auto& [stride, extent] : axes) {
    if (stride != expected) return std::nullopt;
    expected *= extent;
    cuts.insert(stride);
  }
  std::int64_t step = 1;
  for (std::size_t a = value.size(); a-- > 0;) {
    cuts.insert(step);
    step *= value[a];
  }
  // Each cut must divide the next for the two splits to share axes.
  ReorderedSpace space;
  for (auto it = cuts.rbegin(); std::next(it) != cuts.rend(); ++it) {
    const std::int64_t outer = *it, inner = *std::next(it);
    if (outer % inner != 0) return std::nullopt;
    space.domain.push_back(outer / inner);
    space.step.push_back(inner);
  }
  return space;
}

std::vector<std::int64_t> strides_over(const ReorderedSpace& space, const StridedLayout& layout,
                                       const std::vector<std::int64_t>& at_axis) {
  std::vector<std::int64_t> strides(space.domain.size(), 0);
  for (std::size_t k = 0; k < space.domain.size(); ++k) {
    const std::int64_t step = space.step[k];
    for (std::size_t d = 0; d < layout.shape.size(); ++d) {
      const std::int64_t stride = layout.strides[d];
      if (layout.shape[d] != 1 && stride <= step && step < stride * layout.shape[d]) {
        strides[k] = at_axis[d] * (step / stride);
        break;
      }
    }
  }
  return strides;
}

std::vector<std::int64_t> broadcast_strides(const Shape& shape, const std::vector<std::int64_t>& strides,
                                            const Shape& domain) {
  const std::vector<std::int64_t> own = strides.empty() ? contiguous_layout(shape).strides : strides;
  const auto lead = static_cast<std::ptrdiff_t>(domain.size()) - static_cast<std::ptrdiff_t>(shape.size());
  std::vector<std::int64_t> out(domain.size(), 0);
  for (std::ptrdiff_t d = std::max<std::ptrdiff_t>(lead, 0); d < static_cast<std::ptrdiff_t>(domain.size()); ++d) {
    const auto r = static_cast<std::size_t>(d - lead);
    if (shape[r] != 1) out[static_cast<std::size_t>(d)] = own[r];
  }
  return out;
}

ElementPlacement placement_of(const Shape& extents, const std::vector<std::int64_t>& strides) {
  std::vector<std::pair<std::int64_t, std::int64_t>> levels;  // (extent, stride), innermost first
  for (std::size_t d = extents.size(); d-- > 0;) {
    if (extents[d] == 1) continue;
    if (!levels.empty() && strides[d] == levels.back().first * levels.back().second)
      levels.back().first *= extents[d];  // continues the level inside it: one level
    else
      levels.emplace_back(extents[d], strides[d]);
  }
  ElementPlacement place;
  if (levels.empty()) return place;
  std::size_t next = 0;
  place.slice = 1;
  if (levels[0].second == 1) place.slice = levels[next++].first;
  if (next == levels.size()) return ElementPlacement{};  // one contiguous run: element i at i
  place.stride = levels[next].second;
  std::int64_t inner = place.slice * levels[next].first;
  for (++next; next < levels.size(); ++next) {
    place.blocks.emplace_back(inner, levels[next].second);
    inner *= levels[next].first;
  }
  return place;
}

}  // namespace vkfuse
