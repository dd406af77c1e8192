// Concat, Gather and ArgMax: kernels that pick elements (or their positions) along one axis. Each is
// one invocation per output element over the tensor viewed as [outer, axis, inner].
#include <string>

#include "codegen/glsl_types.h"
#include "host/checked_math.h"
#include "host/graph.h"
#include "host/ops/kernel_support.h"
#include "host/ops/tensor_support.h"

namespace vkfuse {
namespace {

// ---- Concat(x0..x15): scalar axis.
// Every input has the output's rank and dtype and its dims except along the axis.

Result<TensorInfo> infer_concat(std::span<const TensorInfo> in, const OpAttrs& attrs) {
  const TensorInfo& first = in[0];
  VKFUSE_ASSIGN_OR_RETURN(int axis, axis_attr(attrs, 0, "axis", first.shape.size(), describe_input(in, 0)));
  TensorInfo out = first;
  for (std::size_t k = 1; k < in.size(); ++k) {
    if (in[k].dtype != first.dtype)
      return make_error(ErrorCode::kInvalidArgument, "input " + std::to_string(k) + " is " + dtype_name(in[k].dtype) +
                                                         " and input 0 is " + dtype_name(first.dtype));
    if (in[k].shape.size() != first.shape.size())
      return make_error(ErrorCode::kInvalidArgument, describe_input(in, k) + " and " + describe_input(in, 0) +
                                                         " differ in rank");
    for (std::size_t d = 0; d < first.shape.size(); ++d)
      if (static_cast<int>(d) != axis && in[k].shape[d] != first.shape[d])
        return make_error(ErrorCode::kInvalidArgument, describe_input(in, k) + " and " + describe_input(in, 0) +
                                                           " differ in dimension " + std::to_string(d) +
                                                           "; only the axis " + std::to_string(axis) + " may differ");
    std::int64_t& extent = out.shape[static_cast<std::size_t>(axis)];
    VKFUSE_ASSIGN_OR_RETURN(extent, add_or_error(extent, in[k].shape[static_cast<std::size_t>(axis)],
                                                 "output dim " + std::to_string(axis)));
  }
  VKFUSE_TRY(require_32bit_indexing(out.shape, "the output"));
  return out;
}

// Input k is the output's [outer, begin_k .. begin_k + extent_k, inner] block: runs of extent_k * inner
// elements, axis * inner apart, from begin_k * inner on (one run when outer is 1).
std::optional<std::vector<ElementPlacement>> place_concat_inputs(std::span<const TensorInfo> in, const TensorInfo& out,
                                                                 const OpAttrs& attrs) {
  auto axis = axis_attr(attrs, 0, "axis", out.shape.size(), "the output");
  if (!axis.ok()) return std::nullopt;
  const auto a = static_cast<std::size_t>(*axis);
  const std::int64_t outer = dims_product(out.shape, 0, a), inner = dims_product(out.shape, a + 1, out.shape.size());
  std::vector<ElementPlacement> places;
  std::int64_t begin = 0;
  for (const TensorInfo& t : in) {
    const std::int64_t extent = t.shape[a];
    places.push_back({.offset = begin * inner, .slice = outer == 1 ? 0 : extent * inner, .stride = out.shape[a] * inner});
    begin += extent;
  }
  return places;
}

// The template tests the output's axis coordinate against each input's end in turn: VKF_TAKE_ALL
// expands to VKF_TAKE(0) VKF_TAKE(1) ..., one per input, with the input's VKF_BEGIN<k>, VKF_END<k> and
// VKF_SIZE<k> (its extent along the axis).
Result<KernelLaunch> launch_concat(std::span<const TensorInfo> in, const TensorInfo& out, const OpAttrs& attrs,
                                   const DevicePlan& device) {
  VKFUSE_ASSIGN_OR_RETURN(int axis, axis_attr(attrs, 0, "axis", out.shape.size(), "the output"));
  const auto a = static_cast<std::size_t>(axis);
  KernelLaunch launch;
  launch.root = "roots/concat.glsl";
  launch.workgroup_size = device.elementwise_workgroup;
  launch.defines = {{"VKF_NUMEL", glsl_uint(shape_numel(out.shape))},
                    {"VKF_INNER", glsl_uint(dims_product(out.shape, a + 1, out.shape.size()))},
                    {"VKF_AXIS", glsl_uint(out.shape[a])}};
  std::string take_all;
  std::int64_t begin = 0;
  for (std::size_t k = 0; k < in.size(); ++k) {
    const std::string n = std::to_string(k);
    const std::int64_t size = in[k].shape[a];
    launch.defines.push_back({"VKF_BEGIN" + n, glsl_uint(begin)});
    launch.defines.push_back({"VKF_END" + n, glsl_uint(begin + size)});
    launch.defines.push_back({"VKF_SIZE" + n, glsl_uint(size)});
    take_all += (k ? " " : "") + std::string("VKF_TAKE(") + n + ")";
    begin += size;
  }
  launch.defines.push_back({"VKF_TAKE_ALL", take_all});
  launch.workgroups = {grid_for(shape_numel(out.shape), launch.workgroup_size, device), 1, 1};
  return launch;
}

Status reference_concat(std::span<const RefTensor> in, const OpAttrs& attrs, RefTensor& out) {
  VKFUSE_ASSIGN_OR_RETURN(int axis, axis_attr(attrs, 0, "axis", out.shape.size(), "the output"));
  const auto a = static_cast<std::size_t>(axis);
  const std::int64_t outer = dims_product(out.shape, 0, a);
  const std::int64_t inner = dims_product(out.shape, a + 1, out.shape.size());
  std::size_t o = 0;
  for (std::int64_t i = 0; i < outer; ++i)
    for (const RefTensor& x : in) {
      const std::int64_t block = x.shape[a] * inner;  // one contiguous run of x per outer index
      for (std::int64_t j = 0; j < block; ++j) out.data[o++] = x.data[static_cast<std::size_t>(i * block + j)];
    }
  return {};
}

// ---- Gather(data, indices[i32]): scalar axis.
// out[a.., i.., b..] = data[a.., indices[i..], b..]; negative indices count from the end.

Result<TensorInfo> infer_gather(std::span<const TensorInfo> in, const OpAttrs& attrs) {
  VKFUSE_ASSIGN_OR_RETURN(int axis, axis_attr(attrs, 0, "axis", in[0].shape.size(), "data (" + describe_input(in, 0) + ")"));
  if (in[1].dtype != DType::kI32)
    return make_error(ErrorCode::kInvalidArgument, "indices (input 1) are " + std::string(dtype_name(in[1].dtype)) +
                                                       ", expected i32");
  TensorInfo out{{}, in[0].dtype};
  const Shape& data = in[0].shape;
  out.shape.assign(data.begin(), data.begin() + axis);
  out.shape.insert(out.shape.end(), in[1].shape.begin(), in[1].shape.end());
  out.shape.insert(out.shape.end(), data.begin() + axis + 1, data.end());
  VKFUSE_TRY(require_32bit_indexing(in[0].shape, "data"));
  VKFUSE_TRY(require_32bit_indexing(out.shape, "the output"));
  return out;
}

// An index outside [-n, n) is an error in ONNX; the kernel clamps it so that it never reads outside
// the data, and the reference reports it.
Result<KernelLaunch> launch_gather(std::span<const TensorInfo> in, const TensorInfo& out, const OpAttrs& attrs,
                                   const DevicePlan& device) {
  VKFUSE_ASSIGN_OR_RETURN(int axis, axis_attr(attrs, 0, "axis", in[0].shape.size(), "data"));
  const Shape& data = in[0].shape;
  const auto a = static_cast<std::size_t>(axis);
  KernelLaunch launch;
  launch.root = "roots/gather.glsl";
  launch.workgroup_size = device.elementwise_workgroup;
  launch.defines = {{"VKF_NUMEL", glsl_uint(shape_numel(out.shape))},
                    {"VKF_INNER", glsl_uint(dims_product(data, a + 1, data.size()))},
                    {"VKF_COUNT", glsl_uint(shape_numel(in[1].shape))},
                    {"VKF_AXIS_SIZE", std::to_string(data[a])}};
  launch.workgroups = {grid_for(shape_numel(out.shape), launch.workgroup_size, device), 1, 1};
  return launch;
}

Status reference_gather(std::span<const RefTensor> in, const OpAttrs& attrs, RefTensor& out) {
  const Shape& data = in[0].shape;
  VKFUSE_ASSIGN_OR_RETURN(int axis, axis_attr(attrs, 0, "axis", data.size(), "data"));
  const auto a = static_cast<std::size_t>(axis);
  const std::int64_t outer = dims_product(data, 0, a), n = data[a];
  const std::int64_t inner = dims_product(data, a + 1, data.size());
  const std::int64_t count = shape_numel(in[1].shape);
  std::size_t o = 0;
  for (std::int64_t i = 0; i < outer; ++i)
    for (std::int64_t j = 0; j < count; ++j) {
      auto index = static_cast<std::int64_t>(in[1].data[static_cast<std::size_t>(j)]);
      if (index < -n || index >= n)
        return make_error(ErrorCode::kInvalidArgument, "index " + std::to_string(index) + " (element " +
                                                           std::to_string(j) + " of the indices) is outside [" +
                                                           std::to_string(-n) + ", " + std::to_string(n) + ")");
      if (index < 0) index += n;
      for (std::int64_t r = 0; r < inner; ++r)
        out.data[o++] = in[0].data[static_cast<std::size_t>((i * n + index) * inner + r)];
    }
  return {};
}

// ---- ArgMax(x): scalars axis=0, keepdims=1, select_last_index=0; i32 output.
// Ties go to the first index, or the last with select_last_index. (NaN inputs: unspecified.)

constexpr std::size_t kArgAxis = 0, kArgKeepdims = 1, kArgSelectLast = 2;

Result<TensorInfo> infer_argmax(std::span<const TensorInfo> in, const OpAttrs& attrs) {
  if (in[0].dtype == DType::kBool)
    return make_error(ErrorCode::kInvalidArgument, "input 0 is bool, expected f32, f16 or i32");
  VKFUSE_ASSIGN_OR_RETURN(int axis, axis_attr(attrs, kArgAxis, "axis", in[0].shape.size(), describe_input(in, 0)));
  VKFUSE_ASSIGN_OR_RETURN(int keepdims, int_attr(attrs, kArgKeepdims, "keepdims", 0, 1));
  VKFUSE_TRY(int_attr(attrs, kArgSelectLast, "select_last_index", 0, 1).status());
  TensorInfo out{in[0].shape, DType::kI32};
  if (keepdims)
    out.shape[static_cast<std::size_t>(axis)] = 1;
  else
    out.shape.erase(out.shape.begin() + axis);
  VKFUSE_TRY(require_32bit_indexing(in[0].shape, describe_input(in, 0)));
  return out;
}

Result<KernelLaunch> launch_argmax(std::span<const TensorInfo> in, const TensorInfo& out, const OpAttrs& attrs,
                                   const DevicePlan& device) {
  const Shape& x = in[0].shape;
  VKFUSE_ASSIGN_OR_RETURN(int axis, axis_attr(attrs, kArgAxis, "axis", x.size(), "input 0"));
  VKFUSE_ASSIGN_OR_RETURN(int last, int_attr(attrs, kArgSelectLast, "select_last_index", 0, 1));
  const auto a = static_cast<std::size_t>(axis);
  KernelLaunch launch;
  launch.root = "roots/argmax.glsl";
  launch.workgroup_size = device.elementwise_workgroup;
  launch.defines = {{"VKF_NUMEL", glsl_uint(shape_numel(out.shape))},
                    {"VKF_INNER", glsl_uint(dims_product(x, a + 1, x.size()))},
                    {"VKF_AXIS_SIZE", glsl_uint(x[a])},
                    {"VKF_SELECT_LAST", std::to_string(last)},
                    {"VKF_VALUE_T", glsl_register_type(in[0].dtype)}};
  launch.workgroups = {grid_for(shape_numel(out.shape), launch.workgroup_size, device), 1, 1};
  return launch;
}

Status reference_argmax(std::span<const RefTensor> in, const OpAttrs& attrs, RefTensor& out) {
  const Shape& x = in[0].shape;
  VKFUSE_ASSIGN_OR_RETURN(int axis, axis_attr(attrs, kArgAxis, "axis", x.size(), "input 0"));
  VKFUSE_ASSIGN_OR_RETURN(int last, int_attr(attrs, kArgSelectLast, "select_last_index", 0, 1));
  const auto a = static_cast<std::size_t>(axis);
  const std::int64_t outer = dims_product(x, 0, a), n = x[a], inner = dims_product(x, a + 1, x.size());
  for (std::int64_t i = 0; i < outer; ++i)
    for (std::int64_t r = 0; r < inner; ++r) {
      std::int64_t best = 0;
      for (std::int64_t k = 1; k < n; ++k) {
        const double v = in[0].data[static_cast<std::size_t>((i * n + k) * inner + r)];
        const double b = in[0].data[static_cast<std::size_t>((i * n + best) * inner + r)];
        if (v > b || (last && v == b)) best = k;
      }
      out.data[static_cast<std::size_t>(i * inner + r)] = static_cast<double>(best);
    }
  return {};
}

constexpr AttrDef kAxisAttrs[] = {{"axis", 0.0f}};
constexpr AttrDef kArgMaxAttrs[] = {{"axis", 0.0f}, {"keepdims", 1.0f}, {"select_last_index", 0.0f}};
constexpr TestDomain kDomain{-4.0f, 4.0f, 0.0f, false};

const OpDef kSelectOps[] = {
    {.name = "Concat", .kind = OpKind::kKernel, .arity = 16,
     .input_class = {InputClass::kAny, InputClass::kAny, InputClass::kAny}, .type_rule = TypeRule::kSameAsFirst,
     .attrs = kAxisAttrs, .cost = 0.0f, .tolerance = Tolerance::kExact, .domain = kDomain, .min_arity = 1,
     .infer = infer_concat, .launch = launch_concat, .reference_kernel = reference_concat,
     .place_inputs = place_concat_inputs},
    {.name = "Gather", .kind = OpKind::kKernel, .arity = 2, .input_class = {InputClass::kAny, InputClass::kAny},
     .type_rule = TypeRule::kSameAsFirst, .attrs = kAxisAttrs, .cost = 0.0f, .tolerance = Tolerance::kExact,
     .domain = kDomain, .infer = infer_gather, .launch = launch_gather, .reference_kernel = reference_gather},
    {.name = "ArgMax", .kind = OpKind::kKernel, .arity = 1, .input_class = {InputClass::kAny},
     .type_rule = TypeRule::kSameAsFirst, .attrs = kArgMaxAttrs, .cost = 0.0f, .tolerance = Tolerance::kExact,
     .domain = kDomain, .infer = infer_argmax, .launch = launch_argmax, .reference_kernel = reference_argmax},
};

}  // namespace

std::span<const OpDef> tensor_select_ops() { return kSelectOps; }

}  // namespace vkfuse
