// Pass: BatchNormalization folded into the Conv, ConvTranspose (group 1) or Gemm that feeds it, on the
// ONNX nodes before they are mapped (an importer-level rewrite: the folded weights become new
// constants, so nothing of the BN is left to run):
//
//   x -> Conv(W, B) -> t -> BatchNormalization(scale, bias, mean, var, eps) -> y
//   x -> Conv(W * s, (B - mean) * s + bias) -> y            s = scale / sqrt(var + eps), per channel
//
// For Gemm the channel is the output column: B' scales the columns of B (transB picks the axis),
// C' = (beta * C - mean) * s + bias and beta becomes 1.
//
// It applies when the weights, the bias and the four statistics are constants, the conv's output has
// no other reader and is not a graph output, and the BN runs in inference mode. Anything else is left
// alone (the BN mapper then emits a per-channel multiply-add).
// Covered by "ONNX: a CNN with BatchNormalization folded into Conv and Gemm" (tests/unit/test_onnx_importer.cpp,
// which checks the rewrite, and tests/gpu/test_onnx_models.cpp) and the ConvTranspose test (model "conv_transpose").
#pragma once

#include <vector>

#include <vkfuse/status.hpp>

#include "host/onnx/onnx_import_state.h"

namespace onnx {
class NodeProto;
}

namespace vkfuse::onnx_import {

// Rewrites `nodes` in place (the BN nodes that fold are erased) and adds the folded constants to
// `state.values`. Returns how many BNs were folded.
Result<int> fold_batch_norms(std::vector<onnx::NodeProto>& nodes, ImportState& state);

}  // namespace vkfuse::onnx_import
