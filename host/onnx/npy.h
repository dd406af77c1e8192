// NumPy .npy encoding and decoding in memory (format versions 1.0, 2.0 and 3.0).
//
//   "\x93NUMPY" major minor | header length (u16 in 1.0, u32 in 2.0/3.0, little-endian) |
//   "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" padded with spaces, '\n' | data
//
// Read: '<f4' -> f32, '<f2' -> f16, '<i4' -> i32, '<i8' -> i32 (every value range-checked), '<i2', '|i1' and
// '|u1' -> i32, '|b1' -> bool (any non-zero byte reads as 1). Fortran order is accepted only where it
// equals C order (rank <= 1); big-endian data and other dtypes are errors that say what to re-save as.
// Write: version 1.0 (2.0 only when the header needs it), numpy's own layout and 64-byte alignment.
//
// Errors start with `what` (the file name), so a caller can pass them on as they are.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include <vkfuse/status.hpp>
#include <vkfuse/vkfuse.hpp>

namespace vkfuse {

Result<HostTensor> decode_npy(std::span<const std::byte> file, const std::string& what);
// Errors when `tensor.bytes` does not hold numel * dtype_size bytes.
Result<std::vector<std::byte>> encode_npy(const HostTensor& tensor);

}  // namespace vkfuse
