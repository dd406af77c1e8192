// Output shape and dtype of one node from its inputs, by op kind. Errors name the node, the op and
// the offending shapes or dtypes.
#pragma once

#include <vkfuse/status.hpp>

#include "host/graph.h"

namespace vkfuse {

Result<TensorInfo> infer_node(const GraphIR& graph, const Node& node);

// The input count against the row's arity and the first three inputs' dtypes against its input
// classes (infer_node starts with this; composites are checked with it before they expand).
Status check_inputs(const GraphIR& graph, const Node& node);

// kReduce ops reduce the trailing axes [first, rank): attribute "axis" (negative counts from the end),
// "keepdims" keeps them as ones.
int reduce_first_axis(const Node& node, std::size_t rank);
bool reduce_keepdims(const Node& node);

// An ONNX-style reduction (list "axes", keepdims, noop_with_empty_axes) as the reduce root runs it:
// permute the input so that the reduced axes trail (only where a reduced dim > 1 comes before a kept
// dim > 1), reduce the trailing axes from `first_axis`, and view the result as `out_shape`.
struct ReduceAxes {
  std::vector<bool> reduced;           // per input axis (empty axes: all of them)
  std::vector<std::int64_t> perm;      // empty: no permutation needed
  Shape permuted;                      // the input's shape after `perm`
  int first_axis = 0;                  // of `permuted`; == its rank when no dim > 1 is reduced
  Shape out_shape;                     // ONNX: keepdims ? ones at the reduced axes : them dropped
  bool noop = false;                   // empty axes with noop_with_empty_axes (or a rank-0 input)
};
// Errors: an axis out of [-rank, rank), or one named twice.
Result<ReduceAxes> resolve_reduce_axes(const Shape& input, const std::vector<std::int64_t>& axes, bool keepdims,
                                       bool noop_with_empty_axes);

// The contiguous row-major layout of `shape`.
StridedLayout contiguous_layout(const Shape& shape);

}  // namespace vkfuse
