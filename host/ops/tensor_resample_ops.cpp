// Pad and Resize: each output element reads the input at a coordinate computed per dimension. The
// templates loop over the dimensions through small const arrays that the launchers write as defines.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <string>

#include "codegen/glsl_types.h"
#include "host/checked_math.h"
#include "host/graph.h"
#include "host/ops/kernel_support.h"
#include "host/ops/tensor_support.h"

namespace vkfuse {
namespace {

// GLSL has no zero-length arrays: a scalar is handled as a tensor of shape [1].
Shape at_least_rank(Shape shape, std::size_t rank) {
  if (shape.size() < rank) shape.insert(shape.begin(), rank - shape.size(), 1);
  return shape;
}

// ---- Pad(x): list pads (ONNX order: every dim's begin, then every dim's end; negative crops);
// scalars mode (0 constant, 1 reflect, 2 edge), value.

constexpr std::size_t kPadMode = 0, kPadValue = 1;
constexpr const char* kPadModes = "0 constant, 1 reflect, 2 edge";

struct PadPlan {
  Shape out;
  std::vector<std::int64_t> begin;
  int mode = 0;
};

Result<PadPlan> pad_plan(const Shape& in, const OpAttrs& attrs) {
  PadPlan plan;
  VKFUSE_ASSIGN_OR_RETURN(plan.mode, int_attr(attrs, kPadMode, "mode", 0, 2, kPadModes));
  VKFUSE_ASSIGN_OR_RETURN(std::vector<std::int64_t> pads, required_list(attrs, "pads"));
  const std::size_t rank = in.size();
  if (pads.size() != 2 * rank)
    return make_error(ErrorCode::kInvalidArgument, "'pads' has " + std::to_string(pads.size()) +
                                                       " values; input 0 " + shape_to_string(in) + " needs " +
                                                       std::to_string(2 * rank) + " (every begin, then every end)");
  plan.out = in;
  plan.begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(rank));
  for (std::size_t d = 0; d < rank; ++d) {
    const std::string what = "output dim " + std::to_string(d);
    VKFUSE_ASSIGN_OR_RETURN(const std::int64_t begun, add_or_error(in[d], pads[d], what));
    VKFUSE_ASSIGN_OR_RETURN(plan.out[d], add_or_error(begun, pads[d + rank], what));
    if (plan.out[d] < 1)
      return make_error(ErrorCode::kInvalidArgument, "'pads' " + std::to_string(pads[d]) + " and " +
                                                         std::to_string(pads[d + rank]) + " leave dimension " +
                                                         std::to_string(d) + " of input 0 " + shape_to_string(in) +
                                                         " with " + std::to_string(plan.out[d]) + " elements");
  }
  return plan;
}

Result<TensorInfo> infer_pad(std::span<const TensorInfo> in, const OpAttrs& attrs) {
  VKFUSE_ASSIGN_OR_RETURN(PadPlan plan, pad_plan(in[0].shape, attrs));
  VKFUSE_TRY(require_32bit_indexing(plan.out, "the output"));
  return TensorInfo{plan.out, in[0].dtype};
}

Result<KernelLaunch> launch_pad(std::span<const TensorInfo> in, const TensorInfo& out, const OpAttrs& attrs,
                                const DevicePlan& device) {
  VKFUSE_ASSIGN_OR_RETURN(PadPlan plan, pad_plan(in[0].shape, attrs));
  const Shape in_shape = at_least_rank(in[0].shape, 1);
  const Shape out_shape = at_least_rank(plan.out, 1);
  std::vector<std::int64_t> begin = plan.begin;
  if (begin.empty()) begin.push_back(0);
  KernelLaunch launch;
  launch.root = "roots/pad.glsl";
  launch.workgroup_size = device.elementwise_workgroup;
  launch.defines = {{"VKF_NUMEL", glsl_uint(shape_numel(out.shape))},
                    {"VKF_RANK", std::to_string(in_shape.size())},
                    {"VKF_IN_SHAPE", glsl_int_array(in_shape)},
                    {"VKF_OUT_SHAPE", glsl_int_array(out_shape)},
                    {"VKF_PAD_BEGIN", glsl_int_array(begin)},
                    {"VKF_PAD_MODE", std::to_string(plan.mode)},
                    {"VKF_PAD_VALUE", glsl_literal(out.dtype, attrs.scalars[kPadValue])}};
  launch.workgroups = {grid_for(shape_numel(out.shape), launch.workgroup_size, device), 1, 1};
  return launch;
}

// The source of coordinate s along a dimension of extent n, s outside [0, n). Reflect mirrors about
// the first and last elements without repeating them (numpy's 'reflect'): a pattern of period
// 2(n - 1), symmetric about 0, which also covers pads wider than the dimension.
std::int64_t pad_source(std::int64_t s, std::int64_t n, int mode) {
  if (mode == 2 || n == 1) return std::clamp<std::int64_t>(s, 0, n - 1);
  const std::int64_t period = 2 * (n - 1);
  s = std::abs(s) % period;
  return s < n ? s : period - s;
}

Status reference_pad(std::span<const RefTensor> in, const OpAttrs& attrs, RefTensor& out) {
  VKFUSE_ASSIGN_OR_RETURN(PadPlan plan, pad_plan(in[0].shape, attrs));
  const Shape& shape = in[0].shape;
  for (std::int64_t o = 0; o < shape_numel(out.shape); ++o) {
    std::vector<std::int64_t> c = unravel_index(o, out.shape);
    bool inside = true;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      c[d] -= plan.begin[d];
      if (c[d] >= 0 && c[d] < shape[d]) continue;
      if (plan.mode == 0)
        inside = false;
      else
        c[d] = pad_source(c[d], shape[d], plan.mode);
    }
    out.data[static_cast<std::size_t>(o)] =
        inside ? in[0].data[static_cast<std::size_t>(ravel_index(c, shape))] : attrs.scalars[kPadValue];
  }
  return {};
}

// ---- Resize(x): list sizes (the output shape); scalars mode (0 nearest, 1 linear),
// coordinate_transformation_mode (0 half_pixel, 1 asymmetric, 2 align_corners, 3 pytorch_half_pixel),
// nearest_mode (0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil).
// Nearest resamples every dimension; linear interpolates the last two (bilinear) and keeps the others.
// The scale of a dimension is out / in (what the importer's sizes imply).

constexpr std::size_t kResizeMode = 0, kResizeCoord = 1, kResizeNearest = 2;
constexpr const char* kResizeModes = "0 nearest, 1 linear";
constexpr const char* kCoordModes = "0 half_pixel, 1 asymmetric, 2 align_corners, 3 pytorch_half_pixel";
constexpr const char* kNearestModes = "0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil";

struct ResizeAttrs {
  Shape sizes;
  int mode = 0, coord = 0, nearest = 0;
};

Result<ResizeAttrs> resize_attrs(const TensorInfo& x, const OpAttrs& attrs) {
  ResizeAttrs r;
  VKFUSE_ASSIGN_OR_RETURN(r.mode, int_attr(attrs, kResizeMode, "mode", 0, 1, kResizeModes));
  VKFUSE_ASSIGN_OR_RETURN(r.coord, int_attr(attrs, kResizeCoord, "coordinate_transformation_mode", 0, 3, kCoordModes));
  VKFUSE_ASSIGN_OR_RETURN(r.nearest, int_attr(attrs, kResizeNearest, "nearest_mode", 0, 3, kNearestModes));
  VKFUSE_ASSIGN_OR_RETURN(r.sizes, required_list(attrs, "sizes"));
  const Shape& in = x.shape;
  if (in.empty()) return make_error(ErrorCode::kInvalidArgument, "input 0 is a scalar; Resize needs rank >= 1");
  if (r.sizes.size() != in.size())
    return make_error(ErrorCode::kInvalidArgument, "'sizes' " + shape_to_string(r.sizes) + " has " +
                                                       std::to_string(r.sizes.size()) + " values; input 0 " +
                                                       shape_to_string(in) + " has rank " + std::to_string(in.size()));
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (r.sizes[d] < 1)
      return make_error(ErrorCode::kInvalidArgument, "'sizes' " + shape_to_string(r.sizes) + ": dimension " +
                                                         std::to_string(d) + " is " + std::to_string(r.sizes[d]) +
                                                         ", expected >= 1");
    // The kernel computes source coordinates as exact fractions in 32-bit ints: x * 2 in + in.
    const auto range = checked_mul(2 * in[d], r.sizes[d]);
    const auto end = range ? checked_add(*range, in[d]) : std::nullopt;
    if (!end || *end >= (std::int64_t{1} << 31))
      return make_error(ErrorCode::kUnsupported, "resizing dimension " + std::to_string(d) + " from " +
                                                     std::to_string(in[d]) + " to " + std::to_string(r.sizes[d]) +
                                                     " exceeds the kernel's coordinate range (2*in*out < 2^31)");
  }
  if (r.mode == 1) {
    if (x.dtype != DType::kF32 && x.dtype != DType::kF16)
      return make_error(ErrorCode::kInvalidArgument, std::string("linear mode interpolates; input 0 is ") +
                                                         dtype_name(x.dtype) + ", expected f32 or f16");
    for (std::size_t d = 0; d + 2 < in.size(); ++d)
      if (r.sizes[d] != in[d])
        return make_error(ErrorCode::kInvalidArgument,
                          "linear mode resizes the last two dimensions only; 'sizes' " + shape_to_string(r.sizes) +
                              " changes dimension " + std::to_string(d) + " of input 0 " + shape_to_string(in));
  }
  return r;
}

Result<TensorInfo> infer_resize(std::span<const TensorInfo> in, const OpAttrs& attrs) {
  VKFUSE_ASSIGN_OR_RETURN(ResizeAttrs r, resize_attrs(in[0], attrs));
  VKFUSE_TRY(require_32bit_indexing(in[0].shape, describe_input(in, 0)));
  VKFUSE_TRY(require_32bit_indexing(r.sizes, "the output"));
  return TensorInfo{r.sizes, in[0].dtype};
}

// The source coordinate of output coordinate x as the exact fraction (x * num + offset) / den, so
// that the kernel decides rounding ties (x.5) exactly; ONNX's formulas with scale = out / in:
//   half_pixel          (x + 0.5) / scale - 0.5        = (2 in x + in - out) / (2 out)
//   asymmetric          x / scale                      = in x / out
//   align_corners       x (in - 1) / (out - 1)          (0 when out == 1)
//   pytorch_half_pixel  half_pixel when out > 1, else 0
struct CoordFraction {
  std::int64_t num = 0, offset = 0, den = 1;
};

CoordFraction coord_fraction(int mode, std::int64_t in, std::int64_t out) {
  CoordFraction f;
  if (mode == 1) {
    f = {in, 0, out};
  } else if (mode == 2) {
    if (out > 1) f = {in - 1, 0, out - 1};
  } else if (mode == 0 || out > 1) {
    f = {2 * in, in - out, 2 * out};
  }
  const std::int64_t g = std::gcd(std::gcd(f.num, f.offset), f.den);
  if (g > 1) f = {f.num / g, f.offset / g, f.den / g};
  return f;
}

// Every dimension's source-coordinate fraction, as the kernels' arrays.
struct Fractions {
  std::vector<std::int64_t> num, offset, den;
};

Fractions fractions(int coord, const Shape& in, const Shape& out) {
  Fractions all;
  for (std::size_t d = 0; d < in.size(); ++d) {
    const CoordFraction f = coord_fraction(coord, in[d], out[d]);
    all.num.push_back(f.num);
    all.offset.push_back(f.offset);
    all.den.push_back(f.den);
  }
  return all;
}

// The linear element's constants (elements/resize_linear.glsl): the last two dimensions' sizes and
// source-coordinate fractions.
std::vector<std::pair<std::string, std::string>> linear_element_defines(const Shape& in, const Shape& out, const Fractions& f) {
  const auto& num = f.num;
  const auto& offset = f.offset;
  const auto& den = f.den;
  const std::size_t h = in.size() - 2, w = in.size() - 1;
  return {{"VKF_E_OUT_H", glsl_uint(out[h])}, {"VKF_E_OUT_W", glsl_uint(out[w])},
          {"VKF_E_IN_H", std::to_string(in[h])}, {"VKF_E_IN_W", std::to_string(in[w])},
          {"VKF_E_NUM_H", std::to_string(num[h])}, {"VKF_E_OFF_H", std::to_string(offset[h])},
          {"VKF_E_DEN_H", std::to_string(den[h])}, {"VKF_E_NUM_W", std::to_string(num[w])},
          {"VKF_E_OFF_W", std::to_string(offset[w])}, {"VKF_E_DEN_W", std::to_string(den[w])}};
}

Result<KernelLaunch> launch_resize(std::span<const TensorInfo> in, const TensorInfo& out, const OpAttrs& attrs,
                                   const DevicePlan& device) {
  VKFUSE_ASSIGN_OR_RETURN(ResizeAttrs r, resize_attrs(in[0], attrs));
  // Rank >= 2 so that the linear path always finds its two dimensions (a leading 1 resizes to 1).
  const Shape in_shape = at_least_rank(in[0].shape, 2);
  const Shape out_shape = at_least_rank(r.sizes, 2);
  const Fractions f = fractions(r.coord, in_shape, out_shape);
  KernelLaunch launch;
  launch.root = "roots/resize.glsl";
  if (r.mode == 1) {
    launch.element = "elements/resize_linear.glsl";
    launch.defines = linear_element_defines(in_shape, out_shape, f);
  }
  launch.workgroup_size = device.elementwise_workgroup;
  launch.defines.insert(launch.defines.end(), {{"VKF_NUMEL", glsl_uint(shape_numel(out.shape))},
                    {"VKF_RANK", std::to_string(in_shape.size())},
                    {"VKF_IN_SHAPE", glsl_int_array(in_shape)},
                    {"VKF_OUT_SHAPE", glsl_int_array(out_shape)},
                    {"VKF_COORD_NUM", glsl_int_array(f.num)},
                    {"VKF_COORD_OFFSET", glsl_int_array(f.offset)},
                    {"VKF_COORD_DEN", glsl_int_array(f.den)},
                    {"VKF_RESIZE_LINEAR", std::to_string(r.mode)},
                    {"VKF_NEAREST_MODE", std::to_string(r.nearest)}});
  launch.workgroups = {grid_for(shape_numel(out.shape), launch.workgroup_size, device), 1, 1};
  return launch;
}

// A linear Resize's elements, one at a time, for consumers that load each element once (ElementLaunch::
// loads_once_only): four taps and three interpolations.
Result<ElementLaunch> resize_element(std::span<const TensorInfo> in, const TensorInfo&, const OpAttrs& attrs) {
  VKFUSE_ASSIGN_OR_RETURN(ResizeAttrs r, resize_attrs(in[0], attrs));
  if (r.mode != 1) return make_error(ErrorCode::kUnsupported, "only a linear Resize's elements are computed alone");
  const Shape in_shape = at_least_rank(in[0].shape, 2);
  const Shape out_shape = at_least_rank(r.sizes, 2);
  const Fractions f = fractions(r.coord, in_shape, out_shape);
  ElementLaunch element;
  element.root = "elements/resize_linear.glsl";
  element.defines = linear_element_defines(in_shape, out_shape, f);
  element.cost = 4.0f;
  element.loads_once_only = true;
  return element;
}

// The reference follows ONNX's formulas in double. Each is written so that a coordinate whose exact
// value is a tie (k + 0.5) comes out exactly (the division's exact result is then representable).
double source_coordinate(int mode, std::int64_t x, std::int64_t in, std::int64_t out) {
  const auto xd = static_cast<double>(x), ind = static_cast<double>(in), outd = static_cast<double>(out);
  switch (mode) {
    case 1: return xd * ind / outd;
    case 2: return out == 1 ? 0.0 : xd * (ind - 1.0) / (outd - 1.0);
    case 3: if (out == 1) return 0.0; [[fallthrough]];
    default: return (xd + 0.5) * ind / outd - 0.5;
  }
}

std::int64_t nearest_index(double coord, int mode, std::int64_t in) {
  double rounded = 0.0;
  switch (mode) {
    case 0: rounded = std::ceil(coord - 0.5); break;   // round_prefer_floor: x.5 goes down
    case 1: rounded = std::floor(coord + 0.5); break;  // round_prefer_ceil: x.5 goes up
    case 2: rounded = std::floor(coord); break;
    default: rounded = std::ceil(coord); break;
  }
  return std::clamp<std::int64_t>(static_cast<std::int64_t>(rounded), 0, in - 1);
}

Status reference_resize(std::span<const RefTensor> in, const OpAttrs& attrs, RefTensor& out) {
  const Shape& shape = in[0].shape;
  const int mode = static_cast<int>(attrs.scalars[kResizeMode]);
  const int coord_mode = static_cast<int>(attrs.scalars[kResizeCoord]);
  const int nearest_mode = static_cast<int>(attrs.scalars[kResizeNearest]);
  const std::size_t rank = shape.size();
  for (std::int64_t o = 0; o < shape_numel(out.shape); ++o) {
    std::vector<std::int64_t> c = unravel_index(o, out.shape);
    if (mode == 0) {
      for (std::size_t d = 0; d < rank; ++d)
        c[d] = nearest_index(source_coordinate(coord_mode, c[d], shape[d], out.shape[d]), nearest_mode, shape[d]);
      out.data[static_cast<std::size_t>(o)] = in[0].data[static_cast<std::size_t>(ravel_index(c, shape))];
      continue;
    }
    // Linear: the two neighbours of each of the last (up to) two coordinates, clamped to the input
    // (the same as ONNX's edge padding), weighted by the fractional part.
    const std::size_t first = rank >= 2 ? rank - 2 : 0;
    std::int64_t lo[2] = {0, 0}, hi[2] = {0, 0};
    double frac[2] = {0.0, 0.0};
    for (std::size_t d = first; d < rank; ++d) {
      const double x = source_coordinate(coord_mode, c[d], shape[d], out.shape[d]);
      const double f = std::floor(x);
      lo[d - first] = std::clamp<std::int64_t>(static_cast<std::int64_t>(f), 0, shape[d] - 1);
      hi[d - first] = std::clamp<std::int64_t>(static_cast<std::int64_t>(f) + 1, 0, shape[d] - 1);
      frac[d - first] = x - f;
    }
    double sum = 0.0;
    const std::size_t dims = rank - first;
    for (int corner = 0; corner < (1 << dims); ++corner) {
      double weight = 1.0;
      for (std::size_t k = 0; k < dims; ++k) {
        const bool upper = (corner >> k) & 1;
        c[first + k] = upper ? hi[k] : lo[k];
        weight *= upper ? frac[k] : 1.0 - frac[k];
      }
      sum += weight * in[0].data[static_cast<std::size_t>(ravel_index(c, shape))];
    }
    out.data[static_cast<std::size_t>(o)] = sum;
  }
  return {};
}

constexpr std::string_view kPadLists[] = {"pads"};
constexpr std::string_view kResizeLists[] = {"sizes"};
constexpr AttrDef kPadAttrs[] = {{"mode", 0.0f}, {"value", 0.0f}};
constexpr AttrDef kResizeAttrs[] = {{"mode", 0.0f}, {"coordinate_transformation_mode", 0.0f}, {"nearest_mode", 0.0f}};
constexpr TestDomain kDomain{-4.0f, 4.0f, 0.0f, false};

const OpDef kResampleOps[] = {
    {.name = "Pad", .kind = OpKind::kKernel, .arity = 1, .input_class = {InputClass::kAny},
     .type_rule = TypeRule::kSameAsFirst, .attrs = kPadAttrs, .cost = 0.0f, .tolerance = Tolerance::kExact,
     .domain = kDomain, .list_attrs = kPadLists, .infer = infer_pad, .launch = launch_pad,
     .reference_kernel = reference_pad},
    {.name = "Resize", .kind = OpKind::kKernel, .arity = 1, .input_class = {InputClass::kAny},
     .type_rule = TypeRule::kSameAsFirst, .attrs = kResizeAttrs, .cost = 0.0f, .tolerance = Tolerance::kSmooth,
     .domain = kDomain, .list_attrs = kResizeLists, .infer = infer_resize, .launch = launch_resize,
     .reference_kernel = reference_resize, .element = resize_element},
};

}  // namespace

std::span<const OpDef> tensor_resample_ops() { return kResampleOps; }

}  // namespace vkfuse
