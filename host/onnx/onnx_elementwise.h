// ONNX elementwise nodes -> the attribute values of the vkfuse op of the same name. Shared by the
// mapper (which emits the op) and the folder (which evaluates the op's scalar reference on constants),
// so both read attributes the same way.
#pragma once

#include <vector>

#include <vkfuse/status.hpp>

#include "host/onnx/const_tensor.h"
#include "host/onnx/onnx_attributes.h"
#include "host/op_def.h"

namespace vkfuse::onnx_import {

// Attribute values in the op table's order, defaults filled in:
//   - float/int ONNX attributes whose name is an attribute of the op are copied;
//   - Gelu: approximate 'none' -> 0, 'tanh' -> 1;
//   - Clip: min/max from the inputs `clip_min`/`clip_max` (opset 11+, nullptr when omitted) or the
//     attributes (older opsets);
//   - Cast: 'to' (an ONNX element type) -> the vkfuse DType number.
// An ONNX attribute the op does not have is kUnsupported (never silently dropped).
Result<std::vector<float>> elementwise_attr_values(const OpDef& def, const NodeAttributes& attrs,
                                                   const ConstTensor* clip_min, const ConstTensor* clip_max);

// The same values as builder attributes.
std::vector<Attr> as_builder_attrs(const OpDef& def, const std::vector<float>& values);

}  // namespace vkfuse::onnx_import
