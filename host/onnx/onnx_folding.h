// The CPU constant folder. Nodes whose inputs are all known while importing (the int64 shape chains
// torch emits: Shape -> Gather -> Unsqueeze -> Concat -> Reshape, Range, ConstantOfShape, Where over
// shapes, casts and arithmetic of constants) are evaluated here and never reach the GPU.
//
// Integers are folded in int64 (exact); floats in double, rounded to the element type after every op.
// Elementwise float ops are evaluated with the op table's scalar references, the same functions the
// GPU kernels are tested against.
#pragma once

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

struct FoldContext {
  const onnx::NodeProto& node;
  const NodeAttributes& attrs;
  int opset;
  std::string base_dir;  // external data of Constant values
};

// The node's outputs, or nullopt when the folder does not evaluate this op type (the node then runs on
// the GPU with constant inputs). `inputs[i]` is nullptr for an omitted optional input. Errors name the
// node (attrs.where()).
Result<std::optional<std::vector<ConstTensor>>> fold_node(const FoldContext& context,
                                                          std::span<const ConstTensor* const> inputs);

// Shape(x) and Size(x) need only x's shape, which is static: they fold whether or not x is a constant.
Result<ConstTensor> fold_shape_of(const Shape& shape, const NodeAttributes& attrs);
ConstTensor fold_size_of(const Shape& shape);

// Elementwise ops over constants (numpy broadcasting). nullopt when the op is not an elementwise one
// the folder knows for these input types.
Result<std::optional<ConstTensor>> fold_elementwise(const FoldContext& context, std::span<const ConstTensor* const> inputs);

// Cast a constant to an ONNX element type (float -> int truncates toward zero, as ONNX does).
Result<ConstTensor> cast_constant(const ConstTensor& input, int onnx_type, const std::string& where);

}  // namespace vkfuse::onnx_import
