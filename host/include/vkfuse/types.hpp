// Element types and shapes shared by the public API and the internals.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <vkfuse/export.h>

namespace vkfuse {

// kU8: bytes 0..255 (8-bit storage), for pixels and masks; storage only: Cast them to compute.
enum class DType : std::uint8_t { kF32, kF16, kI32, kBool, kU8 };

using Shape = std::vector<std::int64_t>;

// "f32", "f16", "i32", "bool", "u8"
VKFUSE_API const char* dtype_name(DType dtype);
// Bytes of one element in host memory and in GPU buffers (bool is one byte).
VKFUSE_API std::size_t dtype_size(DType dtype);
// Product of the dimensions (1 for a scalar of rank 0).
VKFUSE_API std::int64_t shape_numel(const Shape& shape);
// "[2,256,4]"
VKFUSE_API std::string shape_to_string(const Shape& shape);

}  // namespace vkfuse
