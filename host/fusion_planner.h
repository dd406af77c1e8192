// FusionPlanner: Graph + DevicePlan -> FusionPlan. Pure: no GPU, testable with fake limits.
//
// Rules (on op kinds, never on op names):
//
//   elementwise chain / DAG        a ─ Sub ─ Mul ─┐
//   of one shape: one group        b ─────────────Add ─ y      => [Sub -> Mul -> Add]
//     (tests/unit/test_fusion_planner.cpp "elementwise chain fuses into one group")
//
//   several consumers: the value stays in registers when all of them join the group; it is stored
//   (a second output of the group) only when a consumer lands elsewhere
//     (tests/unit "multi-consumer value inside one group is not stored")
//
//   reduction as root: the chain over its input fuses into its loads, reductions of the same input
//   shape and axes share the group, and elementwise ops on the reduced values fuse after it
//     x ─ f ─ g ─ ReduceSum ─ h ─ y   => [f -> g -> ReduceSum -> h]
//     (tests/unit "reduction takes the chains on both sides")
//
//   row passes: where a reduce group's rows are short (fusion_planner.cpp kRowPassMaxInner) and its
//   reductions keep their dims, an op over the domain may read the reduced values, broadcast along the
//   row: the workgroup that folded a row walks it again. A reduction of such values folds in that later
//   walk, so Softmax and LayerNormalization are one dispatch of three walks instead of three dispatches
//     x ─ ReduceMax ─ m ─ Sub(x, m) ─ Exp ─ e ─ ReduceSum ─ s ─ Div(e, s) ─ y
//       => [ReduceMax -> Sub -> Exp -> ReduceSum -> Div]   (walk 1: m; walk 2: s; walk 3: y)
//     (tests/unit "reductions that read each other's results share a group in row passes")
//
//   views (Slice, Reshape, Transpose, Squeeze, Unsqueeze, Flatten) never dispatch: consumers read the
//   stored tensor through an index map
//
//   kernel ops (MatMul, Conv, pooling, ...) anchor their own group, one per group, with their own
//   template; an elementwise chain on the anchor's float result fuses into its stores (post-fusion:
//   bias, activations, a residual Add that reads another tensor)
//     x ─ Conv ─ Add(bias) ─ Relu ─ Add(skip) ─ y   => [Conv -> Add -> Relu -> Add]
//     (tests/unit "post-fusion: an elementwise chain joins a kernel op's stores")
//   and so does one that reads the result (or its chain's) through one reordering view: the view is an
//   index map in the anchor's stores (host/view_reorder.h)
//     y ─ MatMul ─ Add(bias) ─ Transpose ─ Mul(s) ─ Add(r) ─ z   => [MatMul -> Add -> Mul -> Add]
//     (tests/unit "post-fusion through a view: the chain after a Transpose of a kernel's result joins its stores")
//
//   operand scales: a product's operand scaled by a constant (Mul, Div), read by it alone, is read
//   unscaled in place and the product scales its result instead
//     q ─ Mul(s) ─ MatMul(k^T) ─ y   => [Mul -> MatMul]
//     (tests/unit "operand scales: a product scales its result instead of its operands")
//
//   elements in loads: a kernel op whose elements can be computed alone (a depthwise Conv), with its
//   post chain, runs inside the loads of the one kernel op that reads it, where those loads are few
//     x ─ Conv(depthwise) ─ Clip ─ Conv(1x1) ─ y   => [Conv -> Clip -> Conv]
//     (tests/unit "elements in loads: a depthwise Conv runs in the pointwise Conv's loads")
//
//   vector chains: products per image (a 1x1 Conv over 1x1 images, a Gemm) that read a small vector
//   another group computes for them alone (a reduction, or such a product) join that group: one
//   workgroup per image runs the stages, their vectors in shared memory
//     x ─ ReduceMean ─ Conv(1x1) ─ Relu ─ Conv(1x1) ─ Sigmoid ─ s   => [ReduceMean -> Conv -> ... -> Sigmoid]
//     (tests/unit "vector chains: the products of a small squeeze-and-excitation block are one dispatch")
//
//   plane sums: a ReduceMean or ReduceSum over the planes of a depthwise Conv's result (or its post
//   chain's) joins the Conv, whose workgroups then take whole planes and fold them as they store; so
//   does a network's final pooling of a one-image implicit-GEMM Conv whose result nothing else reads
//     x ─ Conv(depthwise) ─ Sigmoid ─ Mul ─ ReduceMean(2, 3) ─ s   => [Conv -> Sigmoid -> Mul -> ReduceMean]
//     (tests/unit "plane sums: a squeeze-and-excitation block's pooling joins the depthwise Conv",
//     "plane sums: a network's final pooling joins the implicit-GEMM Conv")
//
//   attention: a batched product whose rows a reduce group walks (a Softmax, scaled or masked), and the
//   product that reads the chain's result as its left operand, are one dispatch: each workgroup keeps a
//   block of the first product's rows in shared memory through the chain into the second
//     q, k ─ MatMul ─ Softmax ─ MatMul(v) ─ y   => [MatMul -> ReduceMax -> ... -> Div -> MatMul]
//     (tests/unit "attention: a product, the Softmax of its rows and the product that reads it are one dispatch")
//
//   copies in place: a result read only through a copy of a view that reorders it (a channel shuffle,
//   heads merged back) is stored where the copy puts it, and the copy does not run; so are a Concat's
//   inputs, where the Concat is written in place and then copied so
//     (tests/unit "copies in place: a channel shuffle is stored by the Concat's inputs")
//
// A group ends where shapes differ (a broadcast to a larger shape starts a new group that reads the
// smaller tensor), where merging would create a cycle between groups, where the group would bind
// more storage buffers than the DevicePlan allows, and at kMaxGroupNodes nodes
//   (tests/unit "a chain longer than a group's limit is split into groups of the limit").
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "backend/device_plan.h"
#include "codegen/kernel_spec.h"
#include "host/graph.h"

namespace vkfuse {

// kVector: a chain of per-image stages (a reduction, products) in one workgroup per image. kAttention:
// two batched products through a row chain (host/attention_kernel.cpp), `anchor` the second.
// kElementRows: a row chain over the result of an element op computed in the group
// (host/element_rows_kernel.cpp), `anchor` that op, `domain` the chain's.
enum class GroupRoot { kElementwise, kReduce, kKernel, kVector, kAttention, kElementRows };

// An output a group stores as part of a larger value (a Concat written in place): its elements go to
// `placement` in `into`, which the group binds instead.
struct StoredSlice {
  ValueId into = -1;
  ElementPlacement placement;
};

struct FusionGroup {
  GroupRoot root = GroupRoot::kElementwise;
  std::vector<NodeId> nodes;     // topological order
  std::vector<ValueId> inputs;   // values read from memory (graph inputs, constants, stored values, views)
  std::vector<ValueId> outputs;  // values written to memory
  Shape domain;                  // elementwise: the output shape; reduce: the reduced input's shape
  NodeId anchor = kNoNode;       // kernel groups: the kernel op whose template runs (vector groups: the
                                 // last product; in a kernel group, another kernel op in
                                 // `nodes` is an element computed in its loads)
  std::string label;             // "Sub -> Mul -> Add"
  std::size_t level = 0;         // dependency wave: 1 + the highest level of the groups it reads from
  std::map<ValueId, StoredSlice> stored_in;  // outputs stored into another value's slice
  // Kernel groups: operand scales (Mul / Div by a constant) of `nodes` that the anchor applies to its
  // result instead, reading their sources in place (make_group_kernel; planner: operand scales).
  std::vector<NodeId> scales;
};

struct FusionPlan {
  std::vector<FusionGroup> groups;  // execution order: by level, then by earliest node
  std::size_t op_count = 0;         // nodes that compute (views excluded)
  // Values with no memory of their own: each is the leading elements of another (a Concat of a family
  // written in place inside its root, or a root's first input), and is bound as that value's first bytes.
  std::map<ValueId, ValueId> prefix_of;
};

enum class FusionMode { kFused, kUnfused };

// The most nodes (views included) a graph may have: plan_fusion refuses a larger one with
// kInvalidArgument naming both counts. Planning is near-linear up to it (bench/results/planner_scaling.md).
inline constexpr std::size_t kMaxGraphNodes = 65536;
// The most nodes one fused group holds (recomputed copies included): a longer chain is split into
// several groups. A shader's compile time (spirv-opt) grows faster than linearly with its ops.
inline constexpr std::size_t kMaxGroupNodes = 256;

Result<FusionPlan> plan_fusion(const GraphIR& graph, const DevicePlan& device, FusionMode mode);

// Bindings a group needs: every non-scalar-constant input and every output; a kernel op's input larger
// than one binding (device.max_binding_bytes) counts once per chunk; and the scratch buffers its anchor's
// launch may add (scratch_bindings, host/op_def.h).
std::size_t count_group_bindings(const GraphIR& graph, const FusionGroup& group, const DevicePlan& device = {});

}  // namespace vkfuse
