#include "host/slice_range.h"

#include <algorithm>

namespace vkfuse {

SliceRange resolve_slice_range(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step) {
  // Clamp the sentinels first so that adding `dim` cannot overflow.
  start = std::clamp<std::int64_t>(start, -dim - 1, dim + 1);
  end = std::clamp<std::int64_t>(end, -dim - 1, dim + 1);
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  SliceRange range;
  if (step > 0) {
    start = std::clamp<std::int64_t>(start, 0, dim);
    end = std::clamp<std::int64_t>(end, 0, dim);
    range.count = end > start ? (end - start + step - 1) / step : 0;
  } else {
    start = std::clamp<std::int64_t>(start, 0, dim - 1);
    end = std::clamp<std::int64_t>(end, -1, dim - 1);
    range.count = start > end ? (start - end - step - 1) / -step : 0;
  }
  range.start = start;
  return range;
}

}  // namespace vkfuse
