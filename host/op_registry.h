// The op table: every op vkfuse knows, looked up by ONNX op type.
#pragma once

#include <span>
#include <string_view>

#include "host/op_def.h"

namespace vkfuse {

// All ops, in a stable order (the tables under host/ops/, concatenated).
std::span<const OpDef> all_ops();
// nullptr when the op is unknown.
const OpDef* find_op(std::string_view name);

// The tables, one per op kind (host/ops/*_ops.cpp).
std::span<const OpDef> elementwise_ops();
std::span<const OpDef> reduce_ops();
std::span<const OpDef> view_ops();
std::span<const OpDef> matmul_ops();
std::span<const OpDef> nn_ops();         // Gemm, Conv, ConvTranspose, pooling
std::span<const OpDef> tensor_ops();     // Concat, Gather, Pad, Resize, DepthToSpace, ArgMax, Tile, Expand
std::span<const OpDef> composite_ops();  // Softmax, LayerNormalization, ... expanded into primitives

}  // namespace vkfuse
