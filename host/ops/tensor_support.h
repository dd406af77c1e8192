// Helpers shared by the tensor kernel ops (Concat, Gather, Pad, Resize, DepthToSpace, ArgMax, Tile,
// Expand): attribute checks with messages that name the attribute and its allowed values, axis
// normalization, index arithmetic for the CPU references, and GLSL array literals for templates that
// loop over dimensions. The op tables of host/ops/tensor_*_ops.cpp are concatenated in tensor_ops.cpp.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "host/op_def.h"

namespace vkfuse {

// The tables, one per file (tensor_ops() in host/op_registry.h is their concatenation).
std::span<const OpDef> tensor_select_ops();    // Concat, Gather, ArgMax
std::span<const OpDef> tensor_resample_ops();  // Pad, Resize
std::span<const OpDef> tensor_layout_ops();    // DepthToSpace, Tile, Expand

// Scalar attribute `index` (named `name`) as a whole number in [lo, hi]; otherwise kInvalidArgument
// "attribute 'mode' = 3 is not one of 0..2 (0 constant, 1 reflect, 2 edge)" (`meaning` is optional).
Result<int> int_attr(const OpAttrs& attrs, std::size_t index, const char* name, int lo, int hi,
                     const char* meaning = nullptr);

// Scalar attribute `index` as an axis of a tensor of `rank` (negative counts from the back), in
// [0, rank). The error names the attribute, its value, the allowed range and `tensor` (e.g.
// "input 0 [2,3]").
Result<int> axis_attr(const OpAttrs& attrs, std::size_t index, const char* name, std::size_t rank,
                      const std::string& tensor);

// The list attribute `name`, which the op requires; the error says which op needs it.
Result<std::vector<std::int64_t>> required_list(const OpAttrs& attrs, const char* name);

// "input 1 [7,13]"
std::string describe_input(std::span<const TensorInfo> inputs, std::size_t index);

// Product of shape[begin, end).
std::int64_t dims_product(const Shape& shape, std::size_t begin, std::size_t end);
// Row-major element strides.
std::vector<std::int64_t> row_major_strides(const Shape& shape);
// Coordinates of linear index `index` in `shape` (row-major) and back.
std::vector<std::int64_t> unravel_index(std::int64_t index, const Shape& shape);
std::int64_t ravel_index(std::span<const std::int64_t> coords, const Shape& shape);

// GLSL array constructors: "uint[](2u, 3u)" and "int[](-1, 4)". `values` must not be empty (GLSL has
// no zero-length arrays).
std::string glsl_uint_array(std::span<const std::int64_t> values);
std::string glsl_int_array(std::span<const std::int64_t> values);

// Kernel templates index in 32 bits: kUnsupported when `shape` has 2^31 elements or more;
// kInvalidArgument when its element count overflows int64.
Status require_32bit_indexing(const Shape& shape, const std::string& tensor);

}  // namespace vkfuse
