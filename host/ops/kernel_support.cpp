#include "host/ops/kernel_support.h"

#include <algorithm>

#include "codegen/broadcast_map.h"
#include "host/graph.h"

namespace vkfuse {

std::string glsl_uint(std::int64_t value) { return std::to_string(value) + "u"; }

std::uint32_t grid_for(std::int64_t items, std::uint32_t workgroup_size, const DevicePlan& device) {
  const std::int64_t groups = (items + workgroup_size - 1) / workgroup_size;
  return static_cast<std::uint32_t>(std::clamp<std::int64_t>(groups, 1, device.max_groups_x));
}

std::string batch_offset_glsl(const Shape& out_batch, const Shape& batch, std::int64_t matrix, const std::string& var) {
  const std::string index = broadcast_index_glsl(broadcast_map(out_batch, batch), var);
  return "((" + index + ") * " + glsl_uint(matrix) + ")";
}

std::int64_t batch_offset(const Shape& out_batch, const Shape& batch, std::int64_t matrix, std::int64_t index) {
  std::int64_t offset = 0, stride = 1;
  const std::size_t lead = out_batch.size() - batch.size();
  for (std::size_t d = out_batch.size(); d-- > lead;) {
    const std::int64_t coord = index % out_batch[d];
    index /= out_batch[d];
    if (batch[d - lead] != 1) offset += coord * stride;
    stride *= batch[d - lead];
  }
  return offset * matrix;
}

Status require_float(std::span<const TensorInfo> inputs, std::size_t index, const char* role) {
  const DType dtype = inputs[index].dtype;
  if (dtype == DType::kF32 || dtype == DType::kF16) return {};
  return make_error(ErrorCode::kInvalidArgument,
                    std::string(role) + " (input " + std::to_string(index) + ") is " + dtype_name(dtype) + ", expected f32 or f16");
}

}  // namespace vkfuse
