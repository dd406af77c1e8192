// FusionGroup (GroupRoot::kAttention) -> KernelSpec for roots/attention.glsl: two batched products
// (OpDef::matrix_product) through the row chain between them (FusionPlanner, attention).
#pragma once

#include <string>
#include <vector>

#include "backend/device_plan.h"
#include "host/fusion_planner.h"
#include "host/group_kernel.h"

namespace vkfuse {

// How the root runs a group's two products: the first (its operands read in place, operand scales'
// sources included), the second (its left operand the chain), the rows per query block, the keys per
// staged chunk and the workgroup. An error says why the root cannot take them (the planner then keeps the groups apart).
struct AttentionLayout {
  NodeId first = kNoNode, second = kNoNode;
  MatrixProduct qk, pv;
  std::vector<ResolvedView> operands;  // the first's A and B, the second's B, as stored
  std::vector<OperandScale> scales;    // the group's operand scales on the first product, by operand
  std::int64_t rows_per_block = 0, keys_per_chunk = 0;
  std::uint32_t workgroup = 0;
};
Result<AttentionLayout> attention_layout(const GraphIR& graph, const FusionGroup& group, const DevicePlan& device);

Result<GroupKernel> make_attention_kernel(const GraphIR& graph, const FusionGroup& group, const DevicePlan& device);

}  // namespace vkfuse
