// DepthToSpace, Tile and Expand: pure index maps, each output element a copy of one input element.
// Tile and Expand share roots/index_copy.glsl with a generated VKF_SOURCE(o) expression (like
// MatMul's VKF_A_BATCH); DepthToSpace has its own template.
#include <string>

#include "codegen/broadcast_map.h"
#include "host/checked_math.h"
#include "host/graph.h"
#include "host/ops/kernel_support.h"
#include "host/ops/tensor_support.h"

namespace vkfuse {
namespace {

KernelLaunch index_copy_launch(const TensorInfo& out, std::string source, const DevicePlan& device) {
  KernelLaunch launch;
  launch.root = "roots/index_copy.glsl";
  launch.workgroup_size = device.elementwise_workgroup;
  launch.defines = {{"VKF_NUMEL", glsl_uint(shape_numel(out.shape))}, {"VKF_SOURCE(o)", std::move(source)}};
  launch.workgroups = {grid_for(shape_numel(out.shape), launch.workgroup_size, device), 1, 1};
  return launch;
}

// ---- DepthToSpace(x[N,C,H,W]): scalars blocksize (required), mode (0 DCR, 1 CRD).
// DCR: out[n, c, h b + i, w b + j] = x[n, (i b + j) C' + c, h, w]; CRD: x[n, c b b + i b + j, h, w],
// with C' = C / b^2 (ONNX's reshape/transpose definitions written per element).

constexpr std::size_t kBlocksize = 0, kD2sMode = 1;

Result<TensorInfo> infer_depth_to_space(std::span<const TensorInfo> in, const OpAttrs& attrs) {
  const Shape& x = in[0].shape;
  if (x.size() != 4)
    return make_error(ErrorCode::kInvalidArgument, describe_input(in, 0) + " has rank " + std::to_string(x.size()) +
                                                       ", expected 4 (N, C, H, W)");
  VKFUSE_ASSIGN_OR_RETURN(int b, int_attr(attrs, kBlocksize, "blocksize", 1, 1 << 15));
  VKFUSE_TRY(int_attr(attrs, kD2sMode, "mode", 0, 1, "0 DCR, 1 CRD").status());
  if (x[1] % (std::int64_t{b} * b) != 0)
    return make_error(ErrorCode::kInvalidArgument, "channels " + std::to_string(x[1]) + " of " + describe_input(in, 0) +
                                                       " are not a multiple of blocksize^2 = " + std::to_string(b * b));
  TensorInfo out{{x[0], x[1] / (b * b), x[2] * b, x[3] * b}, in[0].dtype};
  VKFUSE_TRY(require_32bit_indexing(out.shape, "the output"));
  return out;
}

Result<KernelLaunch> launch_depth_to_space(std::span<const TensorInfo> in, const TensorInfo& out, const OpAttrs& attrs,
                                           const DevicePlan& device) {
  const Shape& x = in[0].shape;
  VKFUSE_ASSIGN_OR_RETURN(int b, int_attr(attrs, kBlocksize, "blocksize", 1, 1 << 15));
  VKFUSE_ASSIGN_OR_RETURN(int mode, int_attr(attrs, kD2sMode, "mode", 0, 1, "0 DCR, 1 CRD"));
  KernelLaunch launch;
  launch.root = "roots/depth_to_space.glsl";
  launch.workgroup_size = device.elementwise_workgroup;
  launch.defines = {{"VKF_NUMEL", glsl_uint(shape_numel(out.shape))},
                    {"VKF_C", glsl_uint(x[1])},
                    {"VKF_C_OUT", glsl_uint(out.shape[1])},
                    {"VKF_H", glsl_uint(x[2])},
                    {"VKF_W", glsl_uint(x[3])},
                    {"VKF_BLOCK", glsl_uint(b)},
                    {"VKF_CRD", std::to_string(mode)}};
  launch.workgroups = {grid_for(shape_numel(out.shape), launch.workgroup_size, device), 1, 1};
  return launch;
}

Status reference_depth_to_space(std::span<const RefTensor> in, const OpAttrs& attrs, RefTensor& out) {
  const Shape& x = in[0].shape;
  const auto b = static_cast<std::int64_t>(attrs.scalars[kBlocksize]);
  const bool crd = attrs.scalars[kD2sMode] != 0.0f;
  const std::int64_t c_out = out.shape[1];
  for (std::int64_t o = 0; o < shape_numel(out.shape); ++o) {
    const std::vector<std::int64_t> p = unravel_index(o, out.shape);  // n, c, y, x
    const std::int64_t i = p[2] % b, j = p[3] % b;
    const std::int64_t channel = crd ? (p[1] * b + i) * b + j : (i * b + j) * c_out + p[1];
    const std::int64_t source[4] = {p[0], channel, p[2] / b, p[3] / b};
    out.data[static_cast<std::size_t>(o)] = in[0].data[static_cast<std::size_t>(ravel_index(source, x))];
  }
  return {};
}

// ---- Tile(x): list repeats (one per dim, each >= 1). out[c] = x[c mod shape].

Result<TensorInfo> infer_tile(std::span<const TensorInfo> in, const OpAttrs& attrs) {
  VKFUSE_ASSIGN_OR_RETURN(std::vector<std::int64_t> repeats, required_list(attrs, "repeats"));
  const Shape& x = in[0].shape;
  if (repeats.size() != x.size())
    return make_error(ErrorCode::kInvalidArgument, "'repeats' has " + std::to_string(repeats.size()) +
                                                       " values; " + describe_input(in, 0) + " has rank " +
                                                       std::to_string(x.size()));
  TensorInfo out{x, in[0].dtype};
  for (std::size_t d = 0; d < x.size(); ++d) {
    if (repeats[d] < 1)
      return make_error(ErrorCode::kInvalidArgument, "'repeats' " + shape_to_string(repeats) + ": dimension " +
                                                         std::to_string(d) + " repeats " + std::to_string(repeats[d]) +
                                                         " times, expected >= 1");
    VKFUSE_ASSIGN_OR_RETURN(out.shape[d], mul_or_error(x[d], repeats[d], "output dim " + std::to_string(d)));
  }
  VKFUSE_TRY(require_32bit_indexing(out.shape, "the output"));
  return out;
}

// sum_d ((o / out_inner_d) % in_d) * in_stride_d: (c mod out_d) mod in_d = c mod in_d, as in_d | out_d.
Result<KernelLaunch> launch_tile(std::span<const TensorInfo> in, const TensorInfo& out, const OpAttrs&,
                                 const DevicePlan& device) {
  const Shape& x = in[0].shape;
  std::string source;
  std::int64_t out_inner = 1, in_stride = 1;
  for (std::size_t d = x.size(); d-- > 0;) {
    if (x[d] != 1) {
      std::string coord = out_inner == 1 ? "(o)" : "((o) / " + glsl_uint(out_inner) + ")";
      if (!(d == 0 && out.shape[d] == x[d])) coord = "(" + coord + " % " + glsl_uint(x[d]) + ")";
      if (in_stride != 1) coord += " * " + glsl_uint(in_stride);
      source += (source.empty() ? "" : " + ") + coord;
    }
    out_inner *= out.shape[d];
    in_stride *= x[d];
  }
  return index_copy_launch(out, source.empty() ? "0u" : "(" + source + ")", device);
}

Status reference_tile(std::span<const RefTensor> in, const OpAttrs&, RefTensor& out) {
  const Shape& x = in[0].shape;
  for (std::int64_t o = 0; o < shape_numel(out.shape); ++o) {
    std::vector<std::int64_t> c = unravel_index(o, out.shape);
    for (std::size_t d = 0; d < x.size(); ++d) c[d] %= x[d];
    out.data[static_cast<std::size_t>(o)] = in[0].data[static_cast<std::size_t>(ravel_index(c, x))];
  }
  return {};
}

// ---- Expand(x): list shape. The output is numpy's broadcast of x's shape and `shape` (a 1 in
// `shape` keeps x's dimension; `shape` may have more dimensions than x).

Result<TensorInfo> infer_expand(std::span<const TensorInfo> in, const OpAttrs& attrs) {
  VKFUSE_ASSIGN_OR_RETURN(std::vector<std::int64_t> shape, required_list(attrs, "shape"));
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (shape[d] < 1)
      return make_error(ErrorCode::kInvalidArgument, "'shape' " + shape_to_string(shape) + ": dimension " +
                                                         std::to_string(d) + " is " + std::to_string(shape[d]) +
                                                         ", expected >= 1");
  auto out = broadcast_shapes(in[0].shape, shape);
  if (!out)
    return make_error(ErrorCode::kInvalidArgument, describe_input(in, 0) + " does not broadcast with 'shape' " +
                                                       shape_to_string(shape));
  VKFUSE_TRY(require_32bit_indexing(*out, "the output"));
  return TensorInfo{*out, in[0].dtype};
}

Result<KernelLaunch> launch_expand(std::span<const TensorInfo> in, const TensorInfo& out, const OpAttrs&,
                                   const DevicePlan& device) {
  return index_copy_launch(out, "(" + broadcast_index_glsl(broadcast_map(out.shape, in[0].shape), "(o)") + ")", device);
}

Status reference_expand(std::span<const RefTensor> in, const OpAttrs&, RefTensor& out) {
  const Shape& x = in[0].shape;
  const std::size_t lead = out.shape.size() - x.size();
  for (std::int64_t o = 0; o < shape_numel(out.shape); ++o) {
    const std::vector<std::int64_t> c = unravel_index(o, out.shape);
    std::vector<std::int64_t> source(c.begin() + static_cast<std::ptrdiff_t>(lead), c.end());
    for (std::size_t d = 0; d < x.size(); ++d)
      if (x[d] == 1) source[d] = 0;
    out.data[static_cast<std::size_t>(o)] = in[0].data[static_cast<std::size_t>(ravel_index(source, x))];
  }
  return {};
}

constexpr std::string_view kTileLists[] = {"repeats"};
constexpr std::string_view kExpandLists[] = {"shape"};
constexpr AttrDef kDepthToSpaceAttrs[] = {{"blocksize", 0.0f}, {"mode", 0.0f}};
constexpr TestDomain kDomain{-4.0f, 4.0f, 0.0f, false};

const OpDef kLayoutOps[] = {
    {.name = "DepthToSpace", .kind = OpKind::kKernel, .arity = 1, .input_class = {InputClass::kAny},
     .type_rule = TypeRule::kSameAsFirst, .attrs = kDepthToSpaceAttrs, .cost = 0.0f, .tolerance = Tolerance::kExact,
     .domain = kDomain, .infer = infer_depth_to_space, .launch = launch_depth_to_space,
     .reference_kernel = reference_depth_to_space},
    {.name = "Tile", .kind = OpKind::kKernel, .arity = 1, .input_class = {InputClass::kAny},
     .type_rule = TypeRule::kSameAsFirst, .cost = 0.0f, .tolerance = Tolerance::kExact, .domain = kDomain,
     .list_attrs = kTileLists, .infer = infer_tile, .launch = launch_tile, .reference_kernel = reference_tile},
    {.name = "Expand", .kind = OpKind::kKernel, .arity = 1, .input_class = {InputClass::kAny},
     .type_rule = TypeRule::kSameAsFirst, .cost = 0.0f, .tolerance = Tolerance::kExact, .domain = kDomain,
     .list_attrs = kExpandLists, .infer = infer_expand, .launch = launch_expand, .reference_kernel = reference_expand},
};

}  // namespace

std::span<const OpDef> tensor_layout_ops() { return kLayoutOps; }

}  // namespace vkfuse
