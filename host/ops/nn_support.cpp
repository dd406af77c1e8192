#include "host/ops/nn_support.h"

#include <bit>
#include <cmath>
#include <cstdio>

#include "host/checked_math.h"
#include "host/graph.h"

namespace vkfuse {

namespace {

std::string list_to_string(const std::vector<std::int64_t>& values) {
  std::string text = "[";
  for (std::size_t i = 0; i < values.size(); ++i) text += (i ? "," : "") + std::to_string(values[i]);
  return text + "]";
}

// Division rounding toward -inf / +inf (the window arithmetic can go negative with large kernels).
std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return -floor_div(-a, b); }

}  // namespace

Result<std::vector<std::int64_t>> nn_list(const OpAttrs& attrs, std::string_view name, std::size_t count,
                                          std::int64_t min_value, std::vector<std::int64_t> fallback) {
  if (!attrs.has_list(name) && fallback.empty())
    return make_error(ErrorCode::kInvalidArgument, std::string(name) + " is required (" + std::to_string(count) + " values)");
  std::vector<std::int64_t> values = attrs.list(name, std::move(fallback));
  if (values.size() != count)
    return make_error(ErrorCode::kInvalidArgument, std::string(name) + " " + list_to_string(values) + " has " +
                                                       std::to_string(values.size()) + " values, expected " +
                                                       std::to_string(count));
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i] < min_value)
      return make_error(ErrorCode::kInvalidArgument, std::string(name) + "[" + std::to_string(i) + "] = " +
                                                         std::to_string(values[i]) + ", expected >= " +
                                                         std::to_string(min_value));
  return values;
}

Result<std::int64_t> nn_int(const OpAttrs& attrs, std::size_t index, std::string_view name, std::int64_t min_value) {
  const float value = attrs.scalars[index];
  if (!(value >= static_cast<float>(min_value)) || value != std::floor(value) || value > 2147483647.0f) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", static_cast<double>(value));
    return make_error(ErrorCode::kInvalidArgument, std::string(name) + " = " + text + ", expected a whole number >= " +
                                                       std::to_string(min_value));
  }
  return static_cast<std::int64_t>(value);
}

Result<bool> nn_flag(const OpAttrs& attrs, std::size_t index, std::string_view name) {
  VKFUSE_ASSIGN_OR_RETURN(std::int64_t value, nn_int(attrs, index, name, 0));
  if (value > 1)
    return make_error(ErrorCode::kInvalidArgument, std::string(name) + " = " + std::to_string(value) + ", expected 0 or 1");
  return value == 1;
}

Status require_nchw(const TensorInfo& info, const char* role, const char* what) {
  if (info.shape.size() == 4) return {};
  return make_error(ErrorCode::kUnsupported, std::string(role) + " must be 4-D [N, C, H, W] (" + what + "), got " +
                                                 shape_to_string(info.shape));
}

Status require_same_dtype(std::span<const TensorInfo> inputs, std::span<const char* const> roles) {
  for (std::size_t k = 1; k < inputs.size(); ++k)
    if (inputs[k].dtype != inputs[0].dtype)
      return make_error(ErrorCode::kInvalidArgument, std::string(roles[k]) + " is " + dtype_name(inputs[k].dtype) +
                                                         " but " + roles[0] + " is " + dtype_name(inputs[0].dtype));
  return {};
}

Result<std::array<WindowAxis, 2>> read_window(const OpAttrs& attrs, std::array<std::int64_t, 2> kernel, bool dilations) {
  VKFUSE_ASSIGN_OR_RETURN(auto pads, nn_list(attrs, "pads", 4, 0, {0, 0, 0, 0}));
  VKFUSE_ASSIGN_OR_RETURN(auto strides, nn_list(attrs, "strides", 2, 1, {1, 1}));
  std::vector<std::int64_t> dil{1, 1};
  if (dilations) {
    VKFUSE_ASSIGN_OR_RETURN(dil, nn_list(attrs, "dilations", 2, 1, {1, 1}));
  }
  std::array<WindowAxis, 2> axes;
  for (std::size_t d = 0; d < 2; ++d) {
    axes[d] = {kernel[d], strides[d], dil[d], pads[d], pads[d + 2]};
    // WindowAxis::span() and the window arithmetic below stay in int64 once the span does.
    VKFUSE_TRY(mul_or_error(kernel[d] - 1, dil[d], "the dilated window (kernel - 1) * dilation").status());
  }
  return axes;
}

Result<std::int64_t> window_output(std::int64_t in, const WindowAxis& axis, bool ceil_mode, const char* axis_name) {
  const std::string what = std::string("the padded ") + axis_name;
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t begun, add_or_error(in, axis.pad_begin, what));
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t padded, add_or_error(begun, axis.pad_end, what));
  const std::int64_t room = padded - axis.span();
  std::int64_t out = (ceil_mode ? ceil_div(room, axis.stride) : floor_div(room, axis.stride)) + 1;
  // ceil_mode: the last window must start inside the input or its begin pad, never in the end pad.
  if (ceil_mode && out > 0 && (out - 1) * axis.stride >= begun) --out;
  if (out >= 1) return out;
  return make_error(ErrorCode::kInvalidArgument,
                    std::string("the window spans ") + std::to_string(axis.span()) + " along the " + axis_name +
                        " (kernel " + std::to_string(axis.kernel) + ", dilation " + std::to_string(axis.dilation) +
                        ") but the padded input has " + std::to_string(padded) + " (" +
                        std::to_string(in) + " + pads " + std::to_string(axis.pad_begin) + " and " +
                        std::to_string(axis.pad_end) + "): the output would be empty");
}

std::string glsl_int(std::int64_t value) { return value < 0 ? "(" + std::to_string(value) + ")" : std::to_string(value); }

std::string glsl_float(float value) {
  char text[48];
  std::snprintf(text, sizeof text, "VKF_F32(0x%08xu)", std::bit_cast<std::uint32_t>(value));
  return text;
}

}  // namespace vkfuse
