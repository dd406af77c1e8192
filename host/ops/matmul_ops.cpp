// MatMul (numpy semantics: batched, batch dimensions broadcast, 1-D operands promoted and the added
// dimension removed). The GEMM roots (roots/gemm_tiled.glsl, roots/gemm_skinny.glsl) compute it; the
// blocking is chosen from the problem and the device (gemm_launch, host/ops/kernel_support.cpp).
#include <algorithm>

#include "host/graph.h"
#include "host/op_registry.h"
#include "host/ops/kernel_support.h"

namespace vkfuse {
namespace {

// The operands as batched matrices: batch shapes, M, K, N, and the output shape.
struct MatMulShape {
  Shape a_batch, b_batch, out_batch, out;
  std::int64_t m = 1, k = 1, n = 1;
};

Result<MatMulShape> matmul_shape(const Shape& a, const Shape& b) {
  if (a.empty() || b.empty()) return make_error(ErrorCode::kInvalidArgument, "MatMul operands must have rank >= 1");
  MatMulShape s;
  const Shape a2 = a.size() == 1 ? Shape{1, a[0]} : a;
  const Shape b2 = b.size() == 1 ? Shape{b[0], 1} : b;
  s.m = a2[a2.size() - 2];
  s.k = a2.back();
  s.n = b2.back();
  if (b2[b2.size() - 2] != s.k)
    return make_error(ErrorCode::kInvalidArgument, "MatMul inner dimensions differ: " + shape_to_string(a) + " x " +
                                                       shape_to_string(b));
  s.a_batch.assign(a2.begin(), a2.end() - 2);
  s.b_batch.assign(b2.begin(), b2.end() - 2);
  auto batch = broadcast_shapes(s.a_batch, s.b_batch);
  if (!batch)
    return make_error(ErrorCode::kInvalidArgument, "MatMul batch dimensions of " + shape_to_string(a) + " and " +
                                                       shape_to_string(b) + " do not broadcast");
  s.out_batch = *batch;
  s.out = s.out_batch;
  if (a.size() > 1) s.out.push_back(s.m);
  if (b.size() > 1) s.out.push_back(s.n);
  return s;
}

Result<TensorInfo> infer_matmul(std::span<const TensorInfo> in, const OpAttrs&) {
  VKFUSE_TRY(require_float(in, 0, "A"));
  VKFUSE_TRY(require_float(in, 1, "B"));
  if (in[0].dtype != in[1].dtype)
    return make_error(ErrorCode::kInvalidArgument, std::string("A is ") + dtype_name(in[0].dtype) + " and B is " +
                                                       dtype_name(in[1].dtype));
  VKFUSE_ASSIGN_OR_RETURN(MatMulShape s, matmul_shape(in[0].shape, in[1].shape));
  return TensorInfo{s.out, in[0].dtype};
}

Result<KernelLaunch> launch_matmul(std::span<const TensorInfo> in, const TensorInfo&, const OpAttrs&,
                                   const DevicePlan& device) {
  VKFUSE_ASSIGN_OR_RETURN(MatMulShape s, matmul_shape(in[0].shape, in[1].shape));
  GemmProblem p;
  p.batch = shape_numel(s.out_batch);
  p.m = s.m;
  // Products that all share one B are one product of A's rows stacked: A's [batch..., M, K] rows follow
  // each other in its logical order, and so do the output's, so batch x M rows of one problem address the
  // same elements. Tiles then cover the rows of many batches instead of M alone: vit_b_16's QKV
  // projection ([197, 1, 768] x [768, 2304]) was 197 products of one row, each re-reading all of B, and
  // convnext_tiny's last stages ([1, 7, 7, 3072] x [3072, 768]) were 7 products of 7 rows on 32-row tiles.
  if (shape_numel(s.b_batch) == 1) {
    p.m = p.batch * s.m;
    p.batch = 1;
  }
  p.n = s.n;
  p.k = s.k;
  p.a_dtype = in[0].dtype;
  p.b_dtype = in[1].dtype;
  p.a_computed = in[0].load_cost > 0.0f;
  p.b_computed = in[1].load_cost > 0.0f;
  p.a_stride_m = s.k;
  p.a_stride_k = 1;
  p.b_stride_k = s.n;
  p.b_stride_n = 1;
  if (p.batch > 1) {
    p.a_batch = batch_offset_glsl(s.out_batch, s.a_batch, s.m * s.k, "(b)");
    p.b_batch = batch_offset_glsl(s.out_batch, s.b_batch, s.k * s.n, "(b)");
  }
  return gemm_launch(p, device);
}

Status reference_matmul(std::span<const RefTensor> in, const OpAttrs&, RefTensor& out) {
  VKFUSE_ASSIGN_OR_RETURN(MatMulShape s, matmul_shape(in[0].shape, in[1].shape));
  const std::int64_t batch = shape_numel(s.out_batch);
  for (std::int64_t b = 0; b < batch; ++b) {
    const std::int64_t a0 = batch_offset(s.out_batch, s.a_batch, s.m * s.k, b);
    const std::int64_t b0 = batch_offset(s.out_batch, s.b_batch, s.k * s.n, b);
    for (std::int64_t m = 0; m < s.m; ++m)
      for (std::int64_t n = 0; n < s.n; ++n) {
        double acc = 0.0;
        for (std::int64_t k = 0; k < s.k; ++k)
          acc += in[0].data[static_cast<std::size_t>(a0 + m * s.k + k)] * in[1].data[static_cast<std::size_t>(b0 + k * s.n + n)];
        out.data[static_cast<std::size_t>((b * s.m + m) * s.n + n)] = acc;
      }
  }
  return {};
}

constexpr TestDomain kDomain{-2.0f, 2.0f, 0.0f, false};

const OpDef kMatMulOps[] = {
    {.name = "MatMul", .kind = OpKind::kKernel, .arity = 2, .input_class = {InputClass::kFloat, InputClass::kFloat},
     .type_rule = TypeRule::kSameAsFirst, .cost = 0.0f, .tolerance = Tolerance::kSmooth, .domain = kDomain,
     .infer = infer_matmul, .launch = launch_matmul, .reference_kernel = reference_matmul, .scratch = 2},
};

}  // namespace

std::span<const OpDef> matmul_ops() { return kMatMulOps; }

}  // namespace vkfuse
