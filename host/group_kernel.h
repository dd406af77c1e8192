// FusionGroup -> KernelSpec: what the code generator needs, and the values to bind in binding order.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "backend/device_plan.h"
#include "codegen/kernel_spec.h"
#include "host/fusion_planner.h"

namespace vkfuse {

struct GroupKernel {
  KernelSpec spec;
  std::vector<ValueId> bound_values;  // binding order; views are bound as their stored base value, and outputs
                                      // stored into a Concat's slice (FusionGroup::stored_in) as the Concat's value
  // Bindings that see one chunk of their value (a kernel input larger than one binding): binding
  // index -> byte range. A chunked value appears once per chunk in bound_values.
  struct Chunk {
    std::uint64_t offset = 0, bytes = 0;
  };
  std::map<std::size_t, Chunk> chunks;
};

Result<GroupKernel> make_group_kernel(const GraphIR& graph, const FusionGroup& group, const DevicePlan& device);

// A vector group's kernel (GroupRoot::kVector; host/vector_kernel.cpp): its stages, inputs and chains.
Result<GroupKernel> make_vector_kernel(const GraphIR& graph, const FusionGroup& group, const DevicePlan& device);

// The kernel op of elementwise node `node` on `args`, and a reduction's combine, as codegen sees them.
KernelOp node_op(const GraphIR& graph, const Node& node, std::vector<KernelOperand> args);
KernelCombine to_kernel_combine(ReduceCombine combine);
// Whether v's data is its stored base whole, in row-major order (not a strided view of another).
bool is_contiguous_value(const GraphIR& graph, ValueId v);
// v's shape and dtype, and where it is a strided view (not contiguous), its layout in its stored base
// (TensorInfo::strides and offset: what an op that reads views in place addresses).
TensorInfo view_info(const GraphIR& graph, ValueId v);
// An error about fused group `label`: "group '<label>': <why>" (the kernel builders' and the session's).
Status group_error(ErrorCode code, const std::string& label, const std::string& why);
// f16 and bool tensors live in 16- and 8-bit storage buffers: an error naming the group, the tensor and
// the feature where the device lacks it.
Status check_storage(const GraphIR& graph, ValueId v, const std::string& label, const DevicePlan& device);
// Appends the stored tensor v lies in to kernel.bound_values unless it is bound already (`bound`: the
// bases bound so far), after check_storage: the binding order of roots that bind each base once.
Status bind_once(const GraphIR& graph, ValueId v, const std::string& label, const DevicePlan& device,
                 std::set<ValueId>& bound, GroupKernel& kernel);
// A chain's input: a baked scalar literal, or a (possibly strided) view of a stored tensor.
Result<KernelInput> stage_input(const GraphIR& graph, ValueId v);
// A stored tensor a template reads whole from its first element (an element op's input, a vector
// stage's matrix): its binding's base, contiguous; an error naming `label` where v is a strided view.
Result<KernelInput> whole_input(const GraphIR& graph, ValueId v, const std::string& label);
// Where group output v's elements go (its slice of another value: FusionGroup::stored_in; else its own
// order), and the value its binding holds (that other value, or v).
ElementPlacement output_placement(const FusionGroup& group, ValueId v);
ValueId output_binding(const FusionGroup& group, ValueId v);

// The stored value a view chain reads, and the chain's layout over it. For a stored value: itself and
// its contiguous layout.
struct ResolvedView {
  ValueId base;
  StridedLayout layout;
};
Result<ResolvedView> resolve_view(const GraphIR& graph, ValueId value);
// view_info for v's elements laid out by `view` (a layout that need not be v's own: OperandScale::view).
TensorInfo view_info_of(const GraphIR& graph, ValueId v, const ResolvedView& view);

// Operand scales: input k of kernel op `reader` (linear in it: OpDef::linear_inputs) read, directly or
// through views, from the result of an elementwise op that multiplies or divides its one other input
// by a scalar constant (linear in that input). The product may scale its result instead and read the
// scale's source in place: `view` lays input k's elements, unscaled, over the source's stored tensor.
struct OperandScale {
  NodeId scale = kNoNode;  // the Mul or Div
  ValueId source = 0;      // its input that the constant scales
  ResolvedView view;
};
std::optional<OperandScale> operand_scale(const GraphIR& graph, NodeId reader, std::size_t k);
// The operand scale `group` applies to input k of its kernel op `reader` (FusionGroup::scales holds
// the scale that computes that input): none where it applies none there; an error where the group
// holds the input's producer but reader cannot read through it.
Result<std::optional<OperandScale>> group_operand_scale(const GraphIR& graph, const FusionGroup& group, NodeId reader,
                                                        std::size_t k);

}  // namespace vkfuse
