// Output shape and dtype of one node from its inputs, by op kind. Errors name the node, the op and
// the offending shapes or dtypes.
#pragma once

#include <vkfuse/status.hpp>

#include "host/graph.h"

namespace vkfuse {

Result<TensorInfo> infer_node(const GraphIR& graph, const Node& node);

// kReduce ops reduce the trailing axes [first, rank): attribute "axis" (negative counts from the end),
// "keepdims" keeps them as ones.
int reduce_first_axis(const Node& node, std::size_t rank);
bool reduce_keepdims(const Node& node);

// The contiguous row-major layout of `shape`.
StridedLayout contiguous_layout(const Shape& shape);

}  // namespace vkfuse
