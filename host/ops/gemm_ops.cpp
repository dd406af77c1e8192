// Gemm (ONNX): Y = alpha * A' * B' + beta * C, where A' = transA ? A^T : A (M x K), B' = transB ? B^T : B
// (K x N) and the optional C broadcasts one way to [M, N]. The GEMM roots of MatMul compute it, the
// transposes folded into the operands' strides and alpha, beta and C into the value each output
// element is stored with (VKF_GEMM_VALUE).
#include "host/graph.h"
#include "host/op_registry.h"
#include "host/ops/kernel_support.h"
#include "host/ops/nn_support.h"

namespace vkfuse {
namespace {

constexpr AttrDef kGemmAttrs[] = {{"alpha", 1.0f}, {"beta", 1.0f}, {"transA", 0.0f}, {"transB", 0.0f}};
enum GemmAttr : std::size_t { kAlpha, kBeta, kTransA, kTransB };

struct GemmShape {
  std::int64_t m = 1, k = 1, n = 1;
  bool trans_a = false, trans_b = false;
  bool has_c = false;
  std::int64_t c_rows = 1, c_cols = 1;  // C seen as [c_rows, c_cols], each 1 or the full extent
};

Result<GemmShape> gemm_shape(std::span<const TensorInfo> in, const OpAttrs& attrs) {
  GemmShape s;
  VKFUSE_ASSIGN_OR_RETURN(s.trans_a, nn_flag(attrs, kTransA, "transA"));
  VKFUSE_ASSIGN_OR_RETURN(s.trans_b, nn_flag(attrs, kTransB, "transB"));
  const Shape& a = in[0].shape;
  const Shape& b = in[1].shape;
  if (a.size() != 2) return make_error(ErrorCode::kInvalidArgument, "A must be 2-D, got " + shape_to_string(a));
  if (b.size() != 2) return make_error(ErrorCode::kInvalidArgument, "B must be 2-D, got " + shape_to_string(b));
  s.m = s.trans_a ? a[1] : a[0];
  s.k = s.trans_a ? a[0] : a[1];
  const std::int64_t kb = s.trans_b ? b[1] : b[0];
  s.n = s.trans_b ? b[0] : b[1];
  if (kb != s.k)
    return make_error(ErrorCode::kInvalidArgument,
                      "A " + shape_to_string(a) + " with transA " + std::to_string(s.trans_a) + " has K = " +
                          std::to_string(s.k) + " but B " + shape_to_string(b) + " with transB " +
                          std::to_string(s.trans_b) + " has K = " + std::to_string(kb));
  if (in.size() > 2) {
    const Shape& c = in[2].shape;
    s.has_c = true;
    const Shape out{s.m, s.n};
    bool ok = c.size() <= 2;
    for (std::size_t d = 0; ok && d < c.size(); ++d) {
      const std::int64_t target = out[2 - c.size() + d];
      ok = c[d] == 1 || c[d] == target;
    }
    if (!ok)
      return make_error(ErrorCode::kInvalidArgument, "C " + shape_to_string(c) + " does not broadcast to the output " +
                                                         shape_to_string(out));
    s.c_cols = c.empty() ? 1 : c.back();
    s.c_rows = c.size() == 2 ? c[0] : 1;
  }
  return s;
}

Result<TensorInfo> infer_gemm(std::span<const TensorInfo> in, const OpAttrs& attrs) {
  static constexpr const char* kRoles[] = {"A", "B", "C"};
  for (std::size_t k = 0; k < in.size(); ++k) VKFUSE_TRY(require_float(in, k, kRoles[k]));
  VKFUSE_TRY(require_same_dtype(in, kRoles));
  VKFUSE_ASSIGN_OR_RETURN(GemmShape s, gemm_shape(in, attrs));
  return TensorInfo{{s.m, s.n}, in[0].dtype};
}

Result<KernelLaunch> launch_gemm(std::span<const TensorInfo> in, const TensorInfo&, const OpAttrs& attrs,
                                 const DevicePlan& device) {
  VKFUSE_ASSIGN_OR_RETURN(GemmShape s, gemm_shape(in, attrs));
  GemmProblem p;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.a_dtype = in[0].dtype;
  p.b_dtype = in[1].dtype;
  p.a_computed = in[0].load_cost > 0.0f;
  p.b_computed = in[1].load_cost > 0.0f;
  p.a_stride_m = s.trans_a ? 1 : s.k;  // A is [K, M] when transposed, else [M, K]
  p.a_stride_k = s.trans_a ? s.m : 1;
  p.b_stride_k = s.trans_b ? 1 : s.n;  // B is [N, K] when transposed, else [K, N]
  p.b_stride_n = s.trans_b ? s.k : 1;
  // alpha and beta * C applied to each finished dot product, before its one store.
  std::string value = glsl_float(attrs.scalars[kAlpha]) + " * (acc)";
  if (s.has_c) {
    const std::string row = s.c_rows == 1 ? "0u" : "(m) * " + glsl_uint(s.c_cols);
    const std::string col = s.c_cols == 1 ? "0u" : "(n)";
    value = "fma(" + glsl_float(attrs.scalars[kBeta]) + ", VKF_IN2(" + row + " + " + col + "), " + value + ")";
  }
  p.value = "(" + value + ")";
  return gemm_launch(p, device);
}

Status reference_gemm(std::span<const RefTensor> in, const OpAttrs& attrs, RefTensor& out) {
  std::vector<TensorInfo> infos;
  for (const RefTensor& t : in) infos.push_back({t.shape, DType::kF32});
  VKFUSE_ASSIGN_OR_RETURN(GemmShape s, gemm_shape(infos, attrs));
  const Shape& a = in[0].shape;
  const Shape& b = in[1].shape;
  auto a_at = [&](std::int64_t i, std::int64_t j) {  // A'[i, j]
    return in[0].data[static_cast<std::size_t>(s.trans_a ? j * a[1] + i : i * a[1] + j)];
  };
  auto b_at = [&](std::int64_t i, std::int64_t j) {  // B'[i, j]
    return in[1].data[static_cast<std::size_t>(s.trans_b ? j * b[1] + i : i * b[1] + j)];
  };
  const double alpha = attrs.scalars[kAlpha], beta = attrs.scalars[kBeta];
  for (std::int64_t i = 0; i < s.m; ++i)
    for (std::int64_t j = 0; j < s.n; ++j) {
      double dot = 0.0;
      for (std::int64_t p = 0; p < s.k; ++p) dot += a_at(i, p) * b_at(p, j);
      double y = alpha * dot;
      if (s.has_c) {
        const std::int64_t ci = (s.c_rows == 1 ? 0 : i) * s.c_cols + (s.c_cols == 1 ? 0 : j);
        y += beta * in[2].data[static_cast<std::size_t>(ci)];
      }
      out.data[static_cast<std::size_t>(i * s.n + j)] = y;
    }
  return {};
}

// Without transA, with alpha 1 and C (if any) one row of N taken whole (beta 1): per row of A (an image),
// B' times the row, plus C.
Result<VectorProduct> gemm_vector_product(std::span<const TensorInfo> in, const TensorInfo&, const OpAttrs& attrs) {
  VKFUSE_ASSIGN_OR_RETURN(GemmShape s, gemm_shape(in, attrs));
  const bool plain_c = !s.has_c || (s.c_rows == 1 && s.c_cols == s.n && attrs.scalars[kBeta] == 1.0f);
  if (s.trans_a || attrs.scalars[kAlpha] != 1.0f || !plain_c)
    return make_error(ErrorCode::kUnsupported, "only a Gemm without transA, alpha 1 and C a row of N (beta 1) is a product per row");
  VectorProduct product{.weight = 1, .bias = s.has_c ? 2 : -1, .in = s.k, .out = s.n};
  product.row_stride = s.trans_b ? s.k : 1;  // B is [N, K] when transposed, else [K, N]
  product.k_stride = s.trans_b ? 1 : s.n;
  return product;
}

constexpr TestDomain kDomain{-2.0f, 2.0f, 0.0f, false};

const OpDef kGemmOps[] = {
    {.name = "Gemm", .kind = OpKind::kKernel, .arity = 3,
     .input_class = {InputClass::kFloat, InputClass::kFloat, InputClass::kFloat}, .type_rule = TypeRule::kSameAsFirst,
     .attrs = kGemmAttrs, .cost = 0.0f, .tolerance = Tolerance::kSmooth, .domain = kDomain, .min_arity = 2,
     .infer = infer_gemm, .launch = launch_gemm, .reference_kernel = reference_gemm, .scratch = 2,
     .vector_product = gemm_vector_product},
};

}  // namespace

std::span<const OpDef> gemm_ops() { return kGemmOps; }

}  // namespace vkfuse
