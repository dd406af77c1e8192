// FusionGroup (GroupRoot::kElementRows) -> KernelSpec for roots/element_rows.glsl: a kernel op whose
// elements can be computed alone (OpDef::element: a depthwise Conv) and the reduce group that walks the
// rows of its result, read through a view (FusionPlanner, element rows).
#pragma once

#include <cstdint>

#include "backend/device_plan.h"
#include "host/fusion_planner.h"
#include "host/group_kernel.h"

namespace vkfuse {

// How the root runs a group: its element op and its element template, the view through which the chain reads that op's result
// (over the chain's domain), the rows of that domain (its last axis walked), the rows per block and the
// workgroup. An error says why the root cannot take the group (the planner then keeps it apart).
struct ElementRowsLayout {
  NodeId element = kNoNode;
  ElementLaunch launch;  // its template, over its inputs (each read whole and contiguous)
  ValueId read = 0;  // the value the chain reads: the op's result, or a view of it
  ResolvedView view;  // `read` over the op's result
  std::int64_t rows = 0, row_length = 0, rows_per_block = 0;
  std::int64_t run = 1;  // rows per vkf_element_run call (ElementLaunch::run_row), or 1
  std::uint32_t workgroup = 0;
};
Result<ElementRowsLayout> element_rows_layout(const GraphIR& graph, const FusionGroup& group, const DevicePlan& device);

Result<GroupKernel> make_element_rows_kernel(const GraphIR& graph, const FusionGroup& group, const DevicePlan& device);

}  // namespace vkfuse
