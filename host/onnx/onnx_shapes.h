// Shape arithmetic of the ONNX layout ops, shared by the CPU folder (which moves constant data) and the
// node mappers (which emit vkfuse view ops with static shapes). Errors say what is wrong without the
// node; callers add it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <vkfuse/status.hpp>
#include <vkfuse/types.hpp>

namespace vkfuse::onnx_import {

// `axis` in [-rank, rank) made non-negative, or an error.
Result<std::int64_t> normalize_axis(std::int64_t axis, std::int64_t rank, const char* what = "axis");
// Each axis normalized; duplicates are an error.
Result<std::vector<std::int64_t>> normalize_axes(const std::vector<std::int64_t>& axes, std::int64_t rank,
                                                 const char* what = "axes");

// Reshape's target (0 copies the input dim unless allowzero, one -1 is inferred).
Result<Shape> reshape_target(const Shape& input, const std::vector<std::int64_t>& spec, bool allowzero);
// Flatten at `axis` (negative counts from the end): [prod(dims < axis), prod(dims >= axis)].
Result<Shape> flatten_shape(const Shape& input, std::int64_t axis);
// Squeeze: `axes` (empty: every dim of size 1) must be dims of size 1.
Result<Shape> squeeze_shape(const Shape& input, const std::vector<std::int64_t>& axes);
// Unsqueeze: `axes` index the output (rank + axes.size()).
Result<Shape> unsqueeze_shape(const Shape& input, const std::vector<std::int64_t>& axes);

// numpy broadcasting of several shapes.
Result<Shape> broadcast_all(const std::vector<Shape>& shapes);

// One axis of an ONNX Slice resolved: the first index, the step and the element count (count may be 0).
struct SliceAxis {
  std::int64_t axis = 0;
  std::int64_t start = 0;
  std::int64_t step = 1;
  std::int64_t count = 0;
};
// ONNX Slice semantics (opset 10+): negative starts/ends count from the end, out-of-range values clamp,
// steps may be negative (then the clamps are [0, dim-1] and [-1, dim-1]); axes default to 0..n-1.
Result<std::vector<SliceAxis>> resolve_slice(const Shape& input, const std::vector<std::int64_t>& starts,
                                             const std::vector<std::int64_t>& ends,
                                             const std::vector<std::int64_t>& axes,
                                             const std::vector<std::int64_t>& steps);

// Row-major strides of a shape (in elements).
std::vector<std::int64_t> row_major_strides(const Shape& shape);

// Product of dims [begin, end).
std::int64_t dims_product(const Shape& shape, std::size_t begin, std::size_t end);

}  // namespace vkfuse::onnx_import
