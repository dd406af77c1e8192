// Pass (fused plans only): a LayerNormalization over the last axis whose result only a MatMul by a
// constant matrix reads, with a constant bias Add after that MatMul if there is one, becomes one
// LayerNormMatMul (host/ops/matmul_ops.cpp), which the tiled GEMM root computes: it sums each row's
// statistics from the values it stages anyway and normalizes in its stores, so the LayerNorm's own
// dispatch (and its result's round trip through memory) goes.
//
//   x -> [ReduceMean -> Sub -> Mul -> ReduceMean -> Add(eps) -> Sqrt -> Div -> Mul(gamma) -> Add(beta)]
//     -> MatMul(W) -> Add(bias) -> y                        (LayerNormalization's expansion, composite_ops.cpp)
//   x -> LayerNormMatMul(W' = diag(gamma) W, C = column sums of W', Bias' = beta W + bias; eps) -> y
//
// Exact in real arithmetic: LN(x) W + bias = r (x W' - u C) + Bias' (u, r = 1 / sqrt(v + eps): x's row
// statistics). In fp32, x W' - u C cancels where |u| is large against the row's spread; the root
// computes (x - s) W' - (u - s) C with s = x[row, 0] instead, which does not (numpy, K = N = 768,
// against float64: 3e-6 at row means of 0 to 1000 times the spread, where the unshifted form's error
// grows to 1.7e-3; bench/results/h100_2026-11-27_small_gemms_vs_torch.md, section 10).
//
// The shift is a row's first element: where that element alone lies far from its row's mean (an outlier
// channel), the sums cancel as the unshifted ones would, by that distance against the row's spread.
// The session keeps the folded weights beside the graph's own (vit_b_16: about 200 MB of host memory).
//
// Applies where x is f32 (fp16 graphs keep their LayerNorms: the f16 products run on cooperative
// matrices), the LayerNorm's scale and bias, W and the bias are constants, no intermediate value is
// read elsewhere or is a graph output, and LayerNormMatMul reads x as it lies (a view in place).
// Unfused plans keep the imported graph: they are the baseline fusion is measured against.
// Covered by tests/unit/test_fold_layer_norm.cpp (the rewrite) and tests/gpu/test_layer_norm_fold.cpp
// ("a LayerNorm folded into the product ...": fused against unfused against the CPU reference).
#pragma once

#include <optional>

#include "host/fusion_planner.h"
#include "host/graph.h"

namespace vkfuse {

struct FoldedLayerNorms {
  GraphIR graph;
  int folded = 0;  // LayerNorms folded
};

// The graph with every foldable LayerNorm folded; nullopt where there is none (the graph stays as it is).
std::optional<FoldedLayerNorms> fold_layer_norms(const GraphIR& graph);

// The graph a plan in `mode` runs (sessions and `vkfuse plan` alike): fused, `graph` folded (kept in
// `holder`) where anything folds; otherwise `graph`.
const GraphIR& graph_to_plan(const GraphIR& graph, FusionMode mode, std::optional<FoldedLayerNorms>& holder);

}  // namespace vkfuse
