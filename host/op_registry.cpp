#include "host/op_registry.h"

#include <vector>

#include "backend/device_plan.h"

namespace vkfuse {

std::span<const OpDef> all_ops() {
  static const std::vector<OpDef> table = [] {
    std::vector<OpDef> ops;
    for (auto part : {elementwise_ops(), reduce_ops(), view_ops(), matmul_ops(), nn_ops(), tensor_ops(), composite_ops()})
      for (const OpDef& op : part) ops.push_back(op);
    return ops;
  }();
  return table;
}

const OpDef* find_op(std::string_view name) {
  for (const OpDef& op : all_ops())
    if (op.name == name) return &op;
  return nullptr;
}

std::uint32_t scratch_bindings(const OpDef& op, const DevicePlan& device) {
  return device.max_bindings >= kMinBindingsForScratch ? op.scratch : 0;
}

}  // namespace vkfuse
