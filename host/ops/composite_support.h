// Helpers the composite expansions share (host/ops/composite_ops.cpp, host/ops/reduce_ops.cpp).
#pragma once

#include <string>

#include "host/op_def.h"

namespace vkfuse {

// `t`, or the builder's first error when an expansion step failed (the failing step's node names it).
Result<Tensor> expanded(GraphBuilder& b, Tensor t);

// Composites compute in f32: f16 inputs are cast up (a Cast named `name`) and the result cast back to
// the input's dtype; the casts fuse into the neighbouring groups. f32 tensors pass through untouched.
Tensor cast_to_f32(GraphBuilder& b, Tensor t, const std::string& name);
Tensor cast_back(GraphBuilder& b, Tensor t, DType dtype, const std::string& name);

}  // namespace vkfuse
