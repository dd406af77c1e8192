// The table of ONNX op types the importer maps, and what each needs from the op table.
#include "host/onnx/onnx_node_map.h"

#include "host/op_registry.h"

namespace vkfuse::onnx_import {
namespace {

const OnnxOpMapping kMappings[] = {
    {"Clip", map_clip, {"Clip"}},
    {"Cast", map_cast, {"Cast"}},
    {"CastLike", map_cast, {"Cast"}},
    {"Sum", map_variadic, {"Add"}},
    {"Mean", map_variadic, {"Add", "Mul"}},
    {"Max", map_variadic, {"Max"}},
    {"Min", map_variadic, {"Min"}},
    {"Identity", map_identity, {}},
    {"Dropout", map_identity, {}},
    {"Shape", map_fold_only, {}},
    {"Size", map_fold_only, {}},
    {"Range", map_fold_only, {}},
    {"ConstantOfShape", map_fold_only, {}},
    {"Constant", map_fold_only, {}},
    {"Reshape", map_reshape, {"Reshape"}},
    {"Flatten", map_reshape, {"Reshape"}},
    {"Squeeze", map_reshape, {"Reshape"}},
    {"Unsqueeze", map_reshape, {"Reshape"}},
    {"Transpose", map_transpose, {"Transpose"}},
    {"Slice", map_slice, {"Slice"}},
    {"Split", map_split, {"Slice"}},
    {"Concat", map_concat, {"Concat"}},
    {"Gather", map_gather, {"Gather"}},
    {"Expand", map_expand, {"Expand"}},
    {"Tile", map_tile, {"Tile"}},
    {"DepthToSpace", map_depth_to_space, {"DepthToSpace"}},
    {"Pad", map_pad, {"Pad"}},
    {"Resize", map_resize, {"Resize"}},
    {"Upsample", map_resize, {"Resize"}},
    {"MatMul", map_matmul, {"MatMul"}},
    {"Gemm", map_gemm, {"Gemm"}},
    {"Softmax", map_softmax, {"Softmax"}},
    {"LogSoftmax", map_softmax, {"LogSoftmax"}},
    {"LayerNormalization", map_layer_norm, {"LayerNormalization"}},
    {"BatchNormalization", map_batch_norm, {"Mul", "Add"}},
    {"ReduceSum", map_reduce, {"ReduceSum"}},
    {"ReduceMean", map_reduce, {"ReduceMean"}},
    {"ReduceMax", map_reduce, {"ReduceMax"}},
    {"ReduceMin", map_reduce, {"ReduceMin"}},
    {"ReduceProd", map_reduce, {"ReduceProd"}},
    {"ReduceL1", map_reduce, {"ReduceL1"}},
    {"ReduceL2", map_reduce, {"ReduceL2"}},
    {"ReduceSumSquare", map_reduce, {"ReduceSumSquare"}},
    {"ReduceLogSum", map_reduce, {"ReduceLogSum"}},
    {"ReduceLogSumExp", map_reduce, {"ReduceLogSumExp"}},
    {"ArgMax", map_argmax, {"ArgMax"}},
    {"Conv", map_conv, {"Conv"}},
    {"ConvTranspose", map_conv_transpose, {"ConvTranspose"}},
    {"MaxPool", map_pool, {"MaxPool"}},
    {"AveragePool", map_pool, {"AveragePool"}},
    {"GlobalAveragePool", map_global_pool, {"GlobalAveragePool"}},
    {"GlobalMaxPool", map_global_pool, {"GlobalMaxPool"}},
};

const OnnxOpMapping kGenericElementwise{"", map_elementwise, {}};

}  // namespace

const OnnxOpMapping* find_onnx_mapping(std::string_view op_type) {
  for (const OnnxOpMapping& m : kMappings)
    if (m.onnx_op == op_type) return &m;
  const OpDef* def = find_op(op_type);
  if (def && def->kind == OpKind::kElementwise) return &kGenericElementwise;
  return nullptr;
}

Status onnx_op_available(std::string_view op_type) {
  const OnnxOpMapping* mapping = find_onnx_mapping(op_type);
  if (!mapping) return make_error(ErrorCode::kUnsupported, "no vkfuse mapping");
  for (std::string_view need : mapping->needs)
    if (!need.empty() && !find_op(need))
      return make_error(ErrorCode::kUnsupported, "needs vkfuse op '" + std::string(need) + "', which is not in the op table yet");
  return {};
}

Status two_inputs_and_optional_third(NodeMapping& m, std::vector<Tensor>& inputs) {
  for (std::size_t i = 0; i < 3; ++i) {
    if (!m.has_input(i)) {
      if (i < 2) return m.invalid("input " + std::to_string(i) + " is missing");
      continue;
    }
    VKFUSE_ASSIGN_OR_RETURN(Tensor t, m.tensor(i));
    inputs.push_back(t);
  }
  return {};
}

}  // namespace vkfuse::onnx_import
