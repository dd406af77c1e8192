// Tensor files: NumPy .npy (float32, float16, int64, int32, bool) and ONNX TensorProto .pb (the format
// of ONNX's own test data). int64 data becomes i32 (an error names the file if a value does not fit).
#pragma once

#include <string>

#include <vkfuse/status.hpp>
#include <vkfuse/vkfuse.hpp>

namespace vkfuse {

// By extension: ".npy" or ".pb".
VKFUSE_API Result<HostTensor> read_tensor_file(const std::string& path);
VKFUSE_API Status write_npy(const std::string& path, const HostTensor& tensor);

}  // namespace vkfuse
