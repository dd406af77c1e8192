// Helpers the kernel-op tables share: defines, dispatch sizes, batch broadcasting, shape checks.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "backend/device_plan.h"
#include "host/op_def.h"

namespace vkfuse {

// "123u"
std::string glsl_uint(std::int64_t value);
// Workgroups for `items` invocations of `workgroup_size`, clamped to the device (templates loop).
std::uint32_t grid_for(std::int64_t items, std::uint32_t workgroup_size, const DevicePlan& device);

// The GLSL expression (in `var`) of the element offset of batch `var` of a tensor whose batch
// dimensions `batch` broadcast to `out_batch`, each batch holding `matrix` elements.
std::string batch_offset_glsl(const Shape& out_batch, const Shape& batch, std::int64_t matrix, const std::string& var);
// The same on the CPU.
std::int64_t batch_offset(const Shape& out_batch, const Shape& batch, std::int64_t matrix, std::int64_t index);

// kInvalidArgument naming the op's input when its dtype is not f32 or f16.
Status require_float(std::span<const TensorInfo> inputs, std::size_t index, const char* role);

}  // namespace vkfuse
