// FusionGroup -> KernelSpec: what the code generator needs, and the values to bind in binding order.
#pragma once

#include <vector>

#include "backend/device_plan.h"
#include "codegen/kernel_spec.h"
#include "host/fusion_planner.h"

namespace vkfuse {

struct GroupKernel {
  KernelSpec spec;
  std::vector<ValueId> bound_values;  // binding order; views are bound as their stored base value
};

Result<GroupKernel> make_group_kernel(const GraphIR& graph, const FusionGroup& group, const DevicePlan& device);

// The stored value a view chain reads, and the chain's layout over it. For a stored value: itself and
// its contiguous layout.
struct ResolvedView {
  ValueId base;
  StridedLayout layout;
};
Result<ResolvedView> resolve_view(const GraphIR& graph, ValueId value);

}  // namespace vkfuse
