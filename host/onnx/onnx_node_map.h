// ONNX op types -> vkfuse ops. One mapper per ONNX op (or family); each reads the node's attributes and
// constant inputs, resolves them into the attributes of the op table's contract (docs: the op rows under
// host/ops/), and emits the ops through NodeMapping::op.
//
// A mapper returns kUnsupported for what vkfuse cannot run (a missing op, a mode it lacks); the
// importer lists every such node in one error. Any other error stops the import.
#pragma once

#include <array>
#include <string_view>

#include <vkfuse/status.hpp>

#include "host/onnx/onnx_import_state.h"

namespace vkfuse::onnx_import {

using NodeMapper = Status (*)(NodeMapping& m);

struct OnnxOpMapping {
  std::string_view onnx_op;
  NodeMapper map;
  // The vkfuse ops the mapping always emits: the op counts as unsupported while one is missing from
  // the op table. (Ops emitted only in some cases are checked by the mapper with require().)
  std::array<std::string_view, 2> needs{};
};

// The mapping for an ONNX op type, or nullptr. Elementwise ONNX ops that have a vkfuse op of the same
// name map generically (so new elementwise rows in the op table are importable at once).
const OnnxOpMapping* find_onnx_mapping(std::string_view op_type);

// Ok when the op can be mapped with the current op table; otherwise kUnsupported saying why.
Status onnx_op_available(std::string_view op_type);

// The mapper families (one file each).
Status map_elementwise(NodeMapping& m);  // onnx_map_elementwise.cpp
Status map_clip(NodeMapping& m);
Status map_cast(NodeMapping& m);
Status map_variadic(NodeMapping& m);     // Sum, Mean, Max, Min with 1 or 3+ inputs
Status map_identity(NodeMapping& m);     // Identity, Dropout
Status map_fold_only(NodeMapping& m);    // Shape, Size, Range, ConstantOfShape with run-time inputs

Status map_reshape(NodeMapping& m);      // onnx_map_layout.cpp: Reshape, Flatten, Squeeze, Unsqueeze
Status map_transpose(NodeMapping& m);
Status map_slice(NodeMapping& m);
Status map_split(NodeMapping& m);
Status map_concat(NodeMapping& m);
Status map_gather(NodeMapping& m);
Status map_expand(NodeMapping& m);
Status map_tile(NodeMapping& m);
Status map_depth_to_space(NodeMapping& m);

Status map_pad(NodeMapping& m);          // onnx_map_resample.cpp
Status map_resize(NodeMapping& m);       // Resize, Upsample

Status map_matmul(NodeMapping& m);       // onnx_map_nn.cpp
Status map_gemm(NodeMapping& m);
Status map_softmax(NodeMapping& m);      // Softmax, LogSoftmax
Status map_layer_norm(NodeMapping& m);
Status map_batch_norm(NodeMapping& m);
Status map_reduce(NodeMapping& m);       // Reduce*
Status map_argmax(NodeMapping& m);

// Inputs 0 and 1 (required) and 2 (optional: a bias, C or B) of Conv, ConvTranspose, Gemm and
// LayerNormalization, appended to `inputs`.
Status two_inputs_and_optional_third(NodeMapping& m, std::vector<Tensor>& inputs);

Status map_conv(NodeMapping& m);         // onnx_map_conv.cpp
Status map_conv_transpose(NodeMapping& m);
Status map_pool(NodeMapping& m);         // MaxPool, AveragePool
Status map_global_pool(NodeMapping& m);  // GlobalAveragePool, GlobalMaxPool

}  // namespace vkfuse::onnx_import
