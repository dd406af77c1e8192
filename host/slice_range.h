// ONNX Slice semantics for one axis, shared by the Slice view and the importer's folding.
#pragma once

#include <cstdint>

namespace vkfuse {

struct SliceRange {
  std::int64_t start = 0;  // first element taken
  std::int64_t count = 0;  // elements taken (0 when the range is empty)
};

// Negative start/end count from the end; out-of-range values clamp (INT64_MIN/MAX sentinels included);
// `step` != 0 may be negative (then start clamps to [0, dim-1] and end to [-1, dim-1]).
SliceRange resolve_slice_range(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step);

}  // namespace vkfuse
