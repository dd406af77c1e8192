// The tensor op table (see host/op_registry.h): the tables of host/ops/tensor_*_ops.cpp, concatenated.
#include <vector>

#include "host/op_registry.h"
#include "host/ops/tensor_support.h"

namespace vkfuse {

std::span<const OpDef> tensor_ops() {
  static const std::vector<OpDef> table = [] {
    std::vector<OpDef> ops;
    for (auto part : {tensor_select_ops(), tensor_resample_ops(), tensor_layout_ops()})
      ops.insert(ops.end(), part.begin(), part.end());
    return ops;
  }();
  return table;
}

}  // namespace vkfuse
