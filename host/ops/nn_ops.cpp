// The nn op table (see host/op_registry.h): Gemm, Conv, ConvTranspose and pooling, concatenated from
// their files (gemm_ops.cpp, conv_ops.cpp, pool_ops.cpp).
#include <vector>

#include "host/op_registry.h"
#include "host/ops/nn_support.h"

namespace vkfuse {

std::span<const OpDef> nn_ops() {
  static const std::vector<OpDef> table = [] {
    std::vector<OpDef> ops;
    for (auto part : {gemm_ops(), conv_ops(), pool_ops()}) ops.insert(ops.end(), part.begin(), part.end());
    return ops;
  }();
  return table;
}

}  // namespace vkfuse
