// The CPU constant folder. Nodes whose inputs are all known while importing (the int64 shape chains
// torch emits: Shape -> Gather -> Unsqueeze -> Concat -> Reshape, Range, ConstantOfShape, Where over
// shapes, casts and arithmetic of constants) are evaluated here and never reach the GPU.
//
// Integers are folded in int64 (exact); floats in double, rounded to the element type after every op.
// Elementwise float ops are evaluated with the op table's scalar references, the same functions the
// GPU kernels are tested against.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <vkfuse/status.hpp>

#include "host/onnx/const_tensor.h"
#include "host/onnx/onnx_attributes.h"

namespace onnx {
class NodeProto;
}

namespace vkfuse::onnx_import {

// Host memory the folder may create while importing one model, in elements (a small file can ask
// for huge constants: Expand, Tile, Range, broadcasting, Concat of one input many times). A fold over
// a limit is declined: an op the GPU can run runs there; an op that only folds (map_fold_only in the
// node map: Constant, ConstantOfShape, Range) fails naming the node and the size.
struct FoldBudget {
  static constexpr std::int64_t kMaxTensorElements = std::int64_t{1} << 24;  // 64 MiB of floats
  static constexpr std::int64_t kMaxModelElements = std::int64_t{1} << 26;   // all folded outputs
  std::int64_t elements_left = kMaxModelElements;
};

struct FoldContext {
  const onnx::NodeProto& node;
  const NodeAttributes& attrs;
  int opset;
  std::string base_dir;          // external data of Constant values
  FoldBudget* budget = nullptr;  // nullptr: only the per-tensor limit applies
};

// The node's outputs, or nullopt when the folder does not evaluate this op type (the node then runs on
// the GPU with constant inputs). `inputs[i]` is nullptr for an omitted optional input. Errors name the
// node (attrs.where()).
Result<std::optional<std::vector<ConstTensor>>> fold_node(const FoldContext& context,
                                                          std::span<const ConstTensor* const> inputs);

// OK when a folded result of `shape` fits the per-tensor limit and what is left of the budget; else
// kOutOfMemory naming the node (fold_node turns it into "declined" or, for fold-only ops, kUnsupported).
// Call it before allocating the result.
Status check_fold_size(const FoldContext& context, const Shape& shape);

// Shape(x) and Size(x) need only x's shape, which is static: they fold whether or not x is a constant.
Result<ConstTensor> fold_shape_of(const Shape& shape, const NodeAttributes& attrs);
ConstTensor fold_size_of(const Shape& shape);

// Elementwise ops over constants (numpy broadcasting). nullopt when the op is not an elementwise one
// the folder knows for these input types.
Result<std::optional<ConstTensor>> fold_elementwise(const FoldContext& context, std::span<const ConstTensor* const> inputs);

// Cast a constant to an ONNX element type (float -> int truncates toward zero, as ONNX does).
Result<ConstTensor> cast_constant(const ConstTensor& input, int onnx_type, const std::string& where);

}  // namespace vkfuse::onnx_import
