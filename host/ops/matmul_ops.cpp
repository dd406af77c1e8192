// MatMul (numpy semantics: batched, batch dimensions broadcast, 1-D operands promoted and the added
// dimension removed). The GEMM roots (roots/gemm_tiled.glsl, roots/gemm_skinny.glsl) compute it; the
// blocking is chosen from the problem and the device (gemm_launch, host/ops/kernel_support.cpp).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "codegen/broadcast_map.h"
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

// An operand as the GEMM roots address it: its row and column strides, the GLSL of batch b's first
// element (`var` its batch index over out_batch), the gcd of its batches' offsets (0: whole matrices,
// so as aligned as the rows), and whether its batches' rows follow each other as one strided run of rows
// (so batches can stack into rows). From the layout of a view read in place
// (TensorInfo::strides, offset), else the contiguous one; a 1-D operand is one row (A) or column (B).
struct OperandLayout {
  std::int64_t stride_rows = 1, stride_cols = 1;
  std::string batch = "0u";
  std::int64_t batch_step = 0;
  bool batches_stack = true;
};

OperandLayout operand_layout(const TensorInfo& info, const Shape& out_batch, bool is_b) {
  const Shape& shape = info.shape;
  const std::size_t rank = shape.size();
  const std::size_t batch_rank = rank > 2 ? rank - 2 : 0;
  const Shape batch(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(batch_rank));
  OperandLayout l;
  if (info.strides.empty()) {  // contiguous: A [..., M, K], B [..., K, N]; a 1-D B is [K, 1]
    l.stride_rows = is_b && rank == 1 ? 1 : shape.back();
    const std::int64_t matrix = rank == 1 ? shape[0] : shape[rank - 2] * shape[rank - 1];
    l.batch = batch_offset_glsl(out_batch, batch, matrix, "(b)");
    return l;
  }
  const std::vector<std::int64_t>& st = info.strides;
  if (rank == 1) {  // A's one row of K (a row stride other than 1 keeps its loads along K) or B's one column
    l.stride_rows = is_b ? st[0] : std::max<std::int64_t>(2, shape[0] * st[0]);
    l.stride_cols = is_b ? 1 : st[0];
  } else {
    l.stride_rows = st[rank - 2];
    l.stride_cols = st[rank - 1];
  }
  const std::vector<std::int64_t> batch_strides(st.begin(), st.begin() + static_cast<std::ptrdiff_t>(batch_rank));
  l.batch = broadcast_index_glsl(broadcast_map(out_batch, batch, batch_strides), "(b)", info.offset);
  l.batch_step = info.offset;
  // Batches stack into rows where each batch dimension steps over the whole extent of the next, the rows
  // last. Dimensions of one element take no steps (a Slice leaves them any stride), and one row per
  // batch steps as the innermost batch dimension does.
  std::vector<std::pair<std::int64_t, std::int64_t>> steps;  // (extent, stride), outermost first
  for (std::size_t d = 0; d < batch_rank; ++d)
    if (batch[d] > 1) {
      steps.emplace_back(batch[d], batch_strides[d]);
      l.batch_step = std::gcd(l.batch_step, batch_strides[d]);
    }
  const std::int64_t rows = rank > 1 ? shape[rank - 2] : 1;
  if (rows == 1 && !steps.empty()) l.stride_rows = steps.back().second;
  steps.emplace_back(rows, l.stride_rows);
  for (std::size_t i = 0; i + 1 < steps.size(); ++i)
    if (steps[i].second != steps[i + 1].first * steps[i + 1].second) l.batches_stack = false;
  return l;
}

// MatMul reads every view in place but two: a reversed one, and an A whose batches cannot stack into the
// rows of one product with a shared B. Copied, they stack; read in place, each batch would be a product of its own that
// reads all of B again (vit_b_16 at batch 8: the QKV projection's input [197, 8, 768] is a transpose,
// 197 products of 8 rows; in place it ran 12.5 -> 24.5 ms, H100 fp32).
bool matmul_reads_in_place(std::span<const TensorInfo> in, std::size_t k) {
  auto s = matmul_shape(in[0].shape, in[1].shape);
  if (!s.ok()) return false;
  // The roots step through operands in unsigned arithmetic: a reversed view (a negative stride) is copied.
  for (std::int64_t stride : in[k].strides)
    if (stride < 0) return false;
  if (k != 0 || shape_numel(s->b_batch) != 1 || shape_numel(s->out_batch) <= 1) return true;
  return operand_layout(in[0], s->out_batch, false).batches_stack;
}

// The GEMM problem of A = in[0] times B = in[1] (shapes checked by the caller).
GemmProblem matmul_problem(std::span<const TensorInfo> in) {
  const MatMulShape s = *matmul_shape(in[0].shape, in[1].shape);
  const OperandLayout a = operand_layout(in[0], s.out_batch, false), b = operand_layout(in[1], s.out_batch, true);
  GemmProblem p;
  p.batch = shape_numel(s.out_batch);
  p.m = s.m;
  // Products that all share one B are one product of A's rows stacked: A's [batch..., M, K] rows follow
  // each other in its logical order, and so do the output's, so batch x M rows of one problem address the
  // same elements. Tiles then cover the rows of many batches instead of M alone: vit_b_16's QKV
  // projection ([197, 1, 768] x [768, 2304]) was 197 products of one row, each re-reading all of B, and
  // convnext_tiny's last stages ([1, 7, 7, 3072] x [3072, 768]) were 7 products of 7 rows on 32-row tiles.
  // (A view of A stacks where its batches' rows are one strided run of rows.)
  const bool stacked = shape_numel(s.b_batch) == 1 && a.batches_stack;
  if (stacked) {
    p.m = p.batch * s.m;
    p.batch = 1;
  }
  p.n = s.n;
  p.k = s.k;
  p.a_dtype = in[0].dtype;
  p.b_dtype = in[1].dtype;
  p.a_computed = in[0].load_cost > 0.0f;
  p.b_computed = in[1].load_cost > 0.0f;
  p.a_stride_m = a.stride_rows;
  p.a_stride_k = a.stride_cols;
  p.b_stride_k = b.stride_rows;
  p.b_stride_n = b.stride_cols;
  p.a_batch_step = a.batch_step;
  p.b_batch_step = b.batch_step;
  if (p.batch > 1) {
    p.a_batch = a.batch;
    p.b_batch = b.batch;
  } else {  // one product: only a view's offset
    if (in[0].offset != 0) p.a_batch = glsl_uint(in[0].offset);
    if (in[1].offset != 0) p.b_batch = glsl_uint(in[1].offset);
  }
  return p;
}

Result<KernelLaunch> launch_matmul(std::span<const TensorInfo> in, const TensorInfo&, const OpAttrs&,
                                   const DevicePlan& device) {
  VKFUSE_TRY(matmul_shape(in[0].shape, in[1].shape).status());
  return gemm_launch(matmul_problem(in), device);
}

// OpDef::matrix_product: operands of rank 2 or more, read as launch_matmul reads them (views in place,
// batches broadcast), none reversed.
Result<MatrixProduct> matmul_product(std::span<const TensorInfo> in) {
  VKFUSE_ASSIGN_OR_RETURN(MatMulShape s, matmul_shape(in[0].shape, in[1].shape));
  if (in[0].shape.size() < 2 || in[1].shape.size() < 2)
    return make_error(ErrorCode::kUnsupported, "a 1-D operand is no batched matrix");
  for (std::size_t k = 0; k < 2; ++k)
    for (std::int64_t stride : in[k].strides)
      if (stride < 0) return make_error(ErrorCode::kUnsupported, "a reversed view is read copied");
  const OperandLayout a = operand_layout(in[0], s.out_batch, false), b = operand_layout(in[1], s.out_batch, true);
  MatrixProduct p;
  p.batch = shape_numel(s.out_batch);
  p.m = s.m;
  p.k = s.k;
  p.n = s.n;
  p.a_stride_m = a.stride_rows;
  p.a_stride_k = a.stride_cols;
  p.b_stride_k = b.stride_rows;
  p.b_stride_n = b.stride_cols;
  p.a_batch = a.batch;
  p.b_batch = b.batch;
  return p;
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

// ---- LayerNormMatMul(X, W, C, Bias; epsilon): a LayerNormalization over X's last axis folded into the
// product that reads it (host/passes/fold_layer_norm.h makes it; no ONNX op). Per row x of X (K
// elements), shift s = x[0], mean u, variance v:
//   Y[row, n] = (sum_k (x[k] - s) * W[k, n] - (u - s) * C[n]) / sqrt(v + epsilon) + Bias[n]
// With C the column sums of W this is LayerNormalization(x) * W + Bias, the LayerNorm's scale folded
// into W's rows and its bias into Bias; the shift keeps the sums from cancelling where |u| is large
// against sqrt(v). The tiled GEMM root computes it (GemmProblem::row_norm). X [..., M, K] (views read as
// MatMul reads them), W [K, N], C and Bias [N]; Y [..., M, N].

constexpr AttrDef kLayerNormMatMulAttrs[] = {{"epsilon", 1e-5f}};

Result<MatMulShape> layer_norm_matmul_shape(std::span<const TensorInfo> in) {
  static constexpr const char* kRoles[] = {"X", "W", "C", "Bias"};
  for (std::size_t k = 0; k < in.size(); ++k) {
    VKFUSE_TRY(require_float(in, k, kRoles[k]));
    if (in[k].dtype != in[0].dtype)
      return make_error(ErrorCode::kInvalidArgument, std::string(kRoles[k]) + " is " + dtype_name(in[k].dtype) +
                                                         " and X is " + dtype_name(in[0].dtype));
  }
  if (in[0].shape.size() < 2 || in[1].shape.size() != 2)
    return make_error(ErrorCode::kInvalidArgument, "X must have rank >= 2 and W rank 2, got " +
                                                       shape_to_string(in[0].shape) + " and " + shape_to_string(in[1].shape));
  VKFUSE_ASSIGN_OR_RETURN(MatMulShape s, matmul_shape(in[0].shape, in[1].shape));
  for (std::size_t k = 2; k < 4; ++k)
    if (in[k].shape != Shape{s.n})
      return make_error(ErrorCode::kInvalidArgument, std::string(kRoles[k]) + " must be [" + std::to_string(s.n) +
                                                         "] (W's columns), got " + shape_to_string(in[k].shape));
  return s;
}

Result<TensorInfo> infer_layer_norm_matmul(std::span<const TensorInfo> in, const OpAttrs&) {
  VKFUSE_ASSIGN_OR_RETURN(MatMulShape s, layer_norm_matmul_shape(in));
  return TensorInfo{s.out, in[0].dtype};
}

Result<KernelLaunch> launch_layer_norm_matmul(std::span<const TensorInfo> in, const TensorInfo&, const OpAttrs& attrs,
                                              const DevicePlan& device) {
  VKFUSE_TRY(layer_norm_matmul_shape(in).status());
  GemmProblem p = matmul_problem(in);
  p.row_norm = true;
  p.row_norm_epsilon = attrs.scalars[0];
  return gemm_launch(p, device);
}

// X is read as MatMul reads its A; the vectors are contiguous.
bool layer_norm_matmul_reads_in_place(std::span<const TensorInfo> in, std::size_t k) {
  return k == 0 && matmul_reads_in_place(in.first(2), 0);
}

Status reference_layer_norm_matmul(std::span<const RefTensor> in, const OpAttrs& attrs, RefTensor& out) {
  VKFUSE_ASSIGN_OR_RETURN(MatMulShape s, matmul_shape(in[0].shape, in[1].shape));
  const std::int64_t rows = shape_numel(in[0].shape) / s.k;
  const double epsilon = attrs.scalars[0];
  for (std::int64_t r = 0; r < rows; ++r) {
    const double* x = in[0].data.data() + r * s.k;
    double mean = 0.0, variance = 0.0;
    for (std::int64_t k = 0; k < s.k; ++k) mean += x[k];
    mean /= static_cast<double>(s.k);
    for (std::int64_t k = 0; k < s.k; ++k) variance += (x[k] - mean) * (x[k] - mean);
    variance /= static_cast<double>(s.k);
    const double shift = x[0], scale = 1.0 / std::sqrt(variance + epsilon);
    for (std::int64_t n = 0; n < s.n; ++n) {
      double dot = 0.0;
      for (std::int64_t k = 0; k < s.k; ++k) dot += (x[k] - shift) * in[1].data[static_cast<std::size_t>(k * s.n + n)];
      out.data[static_cast<std::size_t>(r * s.n + n)] =
          (dot - (mean - shift) * in[2].data[static_cast<std::size_t>(n)]) * scale + in[3].data[static_cast<std::size_t>(n)];
    }
  }
  return {};
}

constexpr TestDomain kDomain{-2.0f, 2.0f, 0.0f, false};

const OpDef kMatMulOps[] = {
    {.name = "MatMul", .kind = OpKind::kKernel, .arity = 2, .input_class = {InputClass::kFloat, InputClass::kFloat},
     .type_rule = TypeRule::kSameAsFirst, .cost = 0.0f, .tolerance = Tolerance::kSmooth, .domain = kDomain,
     .infer = infer_matmul, .launch = launch_matmul, .reference_kernel = reference_matmul, .scratch = 2,
     .matrix_product = matmul_product, .reads_in_place = matmul_reads_in_place, .linear_inputs = 0b11},
    // (input_class covers X, W and C; layer_norm_matmul_shape checks Bias.)
    {.name = "LayerNormMatMul", .kind = OpKind::kKernel, .arity = 4,
     .input_class = {InputClass::kFloat, InputClass::kFloat, InputClass::kFloat}, .type_rule = TypeRule::kSameAsFirst,
     .attrs = kLayerNormMatMulAttrs, .cost = 0.0f, .tolerance = Tolerance::kSmooth, .domain = kDomain,
     .infer = infer_layer_norm_matmul, .launch = launch_layer_norm_matmul,
     .reference_kernel = reference_layer_norm_matmul, .reads_in_place = layer_norm_matmul_reads_in_place},
};

}  // namespace

std::span<const OpDef> matmul_ops() { return kMatMulOps; }

}  // namespace vkfuse
