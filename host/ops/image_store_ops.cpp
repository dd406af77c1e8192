// ImageColor and ImagePalette (host/ops/image_store_ops.h): one invocation per pixel reads the pixel's
// channels and stores one texel through VKF_OUT0_TEXEL (the group's output is a storage image).
#include "host/ops/image_store_ops.h"

#include <cmath>
#include <string>

#include "codegen/glsl_types.h"
#include "host/ops/kernel_support.h"
#include "host/ops/tensor_support.h"

namespace vkfuse {
namespace {

constexpr std::size_t kNhwc = 0, kSrc = 1, kMul = 5, kAdd = 9, kClamp = 13;

struct Pixels {
  std::int64_t channels = 0, height = 0, width = 0;
  bool nhwc = false;
  // Element of channel c at pixel p (row-major y * width + x).
  std::int64_t at(std::int64_t c, std::int64_t p) const { return nhwc ? p * channels + c : c * height * width + p; }
};

Result<Pixels> pixels_of(std::span<const TensorInfo> in, const OpAttrs& attrs) {
  const TensorInfo& x = in[0];
  if (x.dtype != DType::kF32 && x.dtype != DType::kF16)
    return make_error(ErrorCode::kInvalidArgument, describe_input(in, 0) + " is " + dtype_name(x.dtype) + "; an image output is float");
  if (x.shape.size() != 4 || x.shape[0] != 1)
    return make_error(ErrorCode::kInvalidArgument, describe_input(in, 0) + " is " + shape_to_string(x.shape) +
                                                       "; an image output is [1, C, H, W] (or [1, H, W, C] with nhwc)");
  Pixels p;
  p.nhwc = attrs.scalars[kNhwc] != 0.0f;
  p.channels = p.nhwc ? x.shape[3] : x.shape[1];
  p.height = p.nhwc ? x.shape[1] : x.shape[2];
  p.width = p.nhwc ? x.shape[2] : x.shape[3];
  return p;
}

TensorInfo texels(const Pixels& p) { return {{p.height, p.width, 4}, DType::kF32}; }

Result<TensorInfo> infer_color(std::span<const TensorInfo> in, const OpAttrs& attrs) {
  VKFUSE_ASSIGN_OR_RETURN(Pixels p, pixels_of(in, attrs));
  if (p.channels > 4)
    return make_error(ErrorCode::kInvalidArgument, describe_input(in, 0) + " has " + std::to_string(p.channels) +
                                                       " channels; a colour image output takes at most 4 (a palette takes any)");
  for (std::size_t i = 0; i < 4; ++i) {
    const float src = attrs.scalars[kSrc + i];
    if (src < -1.0f || src >= static_cast<float>(p.channels) || src != std::floor(src))
      return make_error(ErrorCode::kInvalidArgument, "texel component " + std::to_string(i) + " reads channel " +
                                                         std::to_string(static_cast<int>(src)) + "; the output has " +
                                                         std::to_string(p.channels) + " (-1: none)");
  }
  VKFUSE_TRY(require_32bit_indexing(in[0].shape, describe_input(in, 0)));
  return texels(p);
}

Result<TensorInfo> infer_palette(std::span<const TensorInfo> in, const OpAttrs& attrs) {
  VKFUSE_ASSIGN_OR_RETURN(Pixels p, pixels_of(in, attrs));
  const TensorInfo& palette = in[1];
  if (palette.dtype != DType::kF32 || palette.shape.size() != 2 || palette.shape[1] != 4 || palette.shape[0] < 1)
    return make_error(ErrorCode::kInvalidArgument, "the palette is " + std::string(dtype_name(palette.dtype)) +
                                                       shape_to_string(palette.shape) + "; expected f32[K, 4], K >= 1");
  VKFUSE_TRY(require_32bit_indexing(in[0].shape, describe_input(in, 0)));
  return texels(p);
}

std::vector<std::pair<std::string, std::string>> pixel_defines(const Pixels& p) {
  return {{"VKF_PIXELS", glsl_uint(p.height * p.width)},
          {"VKF_WIDTH", glsl_uint(p.width)},
          {"VKF_CHANNELS", glsl_uint(p.channels)},
          {"VKF_NHWC", p.nhwc ? "1" : "0"}};
}

Result<KernelLaunch> launch_color(std::span<const TensorInfo> in, const TensorInfo&, const OpAttrs& attrs,
                                  const DevicePlan& device) {
  VKFUSE_ASSIGN_OR_RETURN(Pixels p, pixels_of(in, attrs));
  KernelLaunch launch;
  launch.root = "roots/image_color.glsl";
  launch.workgroup_size = device.elementwise_workgroup;
  launch.loads_once = true;
  launch.input_reads = {1};
  launch.defines = pixel_defines(p);
  for (std::size_t i = 0; i < 4; ++i) {
    const std::string c = std::to_string(i);
    launch.defines.push_back({"VKF_SRC" + c, std::to_string(static_cast<int>(attrs.scalars[kSrc + i]))});
    launch.defines.push_back({"VKF_MUL" + c, glsl_float_literal(attrs.scalars[kMul + i])});
    launch.defines.push_back({"VKF_ADD" + c, glsl_float_literal(attrs.scalars[kAdd + i])});
  }
  launch.defines.push_back({"VKF_CLAMP", attrs.scalars[kClamp] != 0.0f ? "1" : "0"});
  launch.workgroups = {grid_for(p.height * p.width, launch.workgroup_size, device), 1, 1};
  return launch;
}

Result<KernelLaunch> launch_palette(std::span<const TensorInfo> in, const TensorInfo&, const OpAttrs& attrs,
                                    const DevicePlan& device) {
  VKFUSE_ASSIGN_OR_RETURN(Pixels p, pixels_of(in, attrs));
  KernelLaunch launch;
  launch.root = "roots/image_palette.glsl";
  launch.workgroup_size = device.elementwise_workgroup;
  launch.loads_once = true;
  launch.input_reads = {1, 0};
  launch.defines = pixel_defines(p);
  launch.defines.push_back({"VKF_PALETTE_SIZE", glsl_uint(in[1].shape[0])});
  launch.workgroups = {grid_for(p.height * p.width, launch.workgroup_size, device), 1, 1};
  return launch;
}

Pixels ref_pixels(std::span<const RefTensor> in, const OpAttrs& attrs) {
  const Shape& s = in[0].shape;
  const bool nhwc = attrs.scalars[kNhwc] != 0.0f;
  return {nhwc ? s[3] : s[1], nhwc ? s[1] : s[2], nhwc ? s[2] : s[3], nhwc};
}

Status reference_color(std::span<const RefTensor> in, const OpAttrs& attrs, RefTensor& out) {
  const Pixels p = ref_pixels(in, attrs);
  for (std::int64_t q = 0; q < p.height * p.width; ++q)
    for (std::size_t i = 0; i < 4; ++i) {
      const int src = static_cast<int>(attrs.scalars[kSrc + i]);
      const double x = src < 0 ? 0.0 : in[0].data[static_cast<std::size_t>(p.at(src, q))];
      double v = x * attrs.scalars[kMul + i] + attrs.scalars[kAdd + i];
      if (attrs.scalars[kClamp] != 0.0f) v = std::fmin(std::fmax(v, 0.0), 1.0);
      out.data[static_cast<std::size_t>(q * 4) + i] = v;
    }
  return {};
}

Status reference_palette(std::span<const RefTensor> in, const OpAttrs& attrs, RefTensor& out) {
  const Pixels p = ref_pixels(in, attrs);
  const auto size = static_cast<std::int64_t>(in[1].shape[0]);
  for (std::int64_t q = 0; q < p.height * p.width; ++q) {
    std::int64_t best = 0;
    for (std::int64_t c = 1; c < p.channels; ++c)
      if (in[0].data[static_cast<std::size_t>(p.at(c, q))] > in[0].data[static_cast<std::size_t>(p.at(best, q))]) best = c;
    for (std::size_t i = 0; i < 4; ++i)
      out.data[static_cast<std::size_t>(q * 4) + i] = in[1].data[static_cast<std::size_t>((best % size) * 4) + i];
  }
  return {};
}

constexpr AttrDef kColorAttrs[] = {{"nhwc", 0.0f}, {"src0", 0.0f}, {"src1", 1.0f}, {"src2", 2.0f}, {"src3", -1.0f},
                                   {"mul0", 1.0f}, {"mul1", 1.0f}, {"mul2", 1.0f}, {"mul3", 0.0f},
                                   {"add0", 0.0f}, {"add1", 0.0f}, {"add2", 0.0f}, {"add3", 1.0f}, {"clamp", 1.0f}};
constexpr AttrDef kPaletteAttrs[] = {{"nhwc", 0.0f}};
constexpr TestDomain kDomain{-4.0f, 4.0f, 0.0f, false};

const OpDef kColor{.name = "ImageColor", .kind = OpKind::kKernel, .arity = 1, .input_class = {InputClass::kFloat},
                   .type_rule = TypeRule::kSameAsFirst, .attrs = kColorAttrs, .cost = 0.0f,
                   .tolerance = Tolerance::kExact, .domain = kDomain, .infer = infer_color, .launch = launch_color,
                   .reference_kernel = reference_color};
const OpDef kPalette{.name = "ImagePalette", .kind = OpKind::kKernel, .arity = 2,
                     .input_class = {InputClass::kFloat, InputClass::kFloat}, .type_rule = TypeRule::kSameAsFirst,
                     .attrs = kPaletteAttrs, .cost = 0.0f, .tolerance = Tolerance::kExact, .domain = kDomain,
                     .infer = infer_palette, .launch = launch_palette, .reference_kernel = reference_palette};

}  // namespace

const OpDef& image_color_op() { return kColor; }
const OpDef& image_palette_op() { return kPalette; }

}  // namespace vkfuse
