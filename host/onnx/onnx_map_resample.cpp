// Pad and Resize/Upsample: operands that ONNX passes as inputs (pads, value, scales, sizes) must be
// constants; they are resolved into the op table's attributes (full-rank pads, the full output size).
#include <cmath>

#include "host/onnx/onnx_node_map.h"
#include "host/onnx/onnx_shapes.h"

namespace vkfuse::onnx_import {
namespace {

// One of `names` -> its index, or an unsupported error naming the attribute.
Result<float> enum_value(const NodeMapping& m, std::string_view attr, const std::string& value,
                         std::initializer_list<std::string_view> names) {
  float index = 0.0f;
  for (std::string_view name : names) {
    if (name == value) return index;
    index += 1.0f;
  }
  return m.attrs().unsupported(attr, "");
}

// Full-rank values from values given for `axes` (opset 18 Pad and Resize), others `fill`.
template <class T>
Result<std::vector<T>> spread_over_axes(const NodeMapping& m, const std::vector<T>& given, const std::vector<std::int64_t>& axes,
                                        std::size_t rank, T fill, std::size_t per_axis) {
  if (axes.empty()) {
    if (given.size() != per_axis * rank)
      return m.invalid(std::to_string(given.size()) + " values for a rank-" + std::to_string(rank) + " input");
    return given;
  }
  auto normalized = normalize_axes(axes, static_cast<std::int64_t>(rank));
  if (!normalized.ok()) return m.invalid(normalized.status().message());
  if (given.size() != per_axis * axes.size())
    return m.invalid(std::to_string(given.size()) + " values for axes " + shape_to_string(axes));
  std::vector<T> out(per_axis * rank, fill);
  for (std::size_t k = 0; k < axes.size(); ++k)
    for (std::size_t p = 0; p < per_axis; ++p)
      out[p * rank + static_cast<std::size_t>((*normalized)[k])] = given[p * axes.size() + k];
  return out;
}

}  // namespace

Status map_pad(NodeMapping& m) {
  VKFUSE_TRY(m.attrs().only({"mode"}));
  VKFUSE_ASSIGN_OR_RETURN(Tensor x, m.tensor(0));
  const std::size_t rank = m.shape_of(x).size();
  VKFUSE_ASSIGN_OR_RETURN(const std::string mode, m.attrs().text("mode", "constant"));
  VKFUSE_ASSIGN_OR_RETURN(const float mode_value, enum_value(m, "mode", mode, {"constant", "reflect", "edge"}));
  VKFUSE_ASSIGN_OR_RETURN(const auto given, m.constant_ints(1, "pads"));
  float value = 0.0f;
  if (m.has_input(2)) {
    VKFUSE_ASSIGN_OR_RETURN(value, m.constant_scalar(2, "constant_value"));
  }
  std::vector<std::int64_t> axes;
  if (m.has_input(3)) {
    VKFUSE_ASSIGN_OR_RETURN(axes, m.constant_ints(3, "axes"));
  }
  VKFUSE_ASSIGN_OR_RETURN(const auto pads, spread_over_axes<std::int64_t>(m, given, axes, rank, 0, 2));
  bool any = false;
  for (std::int64_t p : pads) {  // negative pads crop
    if (p > (std::int64_t{1} << 24) || p < -(std::int64_t{1} << 24))
      return m.invalid("pads " + shape_to_string(pads) + " are larger than 2^24");
    any = any || p != 0;
  }
  if (!any) {
    m.forward_input(0, 0);
    return {};
  }
  m.set_output(0, m.op("Pad", {x}, {Attr{"pads", pads}, Attr{"mode", mode_value}, Attr{"value", value}}));
  return {};
}

Status map_resize(NodeMapping& m) {
  const bool upsample = m.op_type() == "Upsample";
  VKFUSE_ASSIGN_OR_RETURN(Tensor x, m.tensor(0));
  const Shape in = m.shape_of(x);
  VKFUSE_ASSIGN_OR_RETURN(std::string mode, m.attrs().text("mode", "nearest"));
  if (mode == "bilinear") mode = "linear";  // Upsample-7's spelling
  VKFUSE_ASSIGN_OR_RETURN(const float mode_value, enum_value(m, "mode", mode, {"nearest", "linear"}));
  float coordinate = 1.0f, nearest = 2.0f;  // Upsample: asymmetric coordinates, floor
  std::vector<float> scales;
  std::vector<std::int64_t> sizes, axes;
  if (upsample) {
    VKFUSE_TRY(m.attrs().only({"mode", "scales"}));
    if (m.has_input(1)) {
      const ConstTensor* s = m.constant(1);
      if (!s) return m.unsupported("scales are computed at run time");
      scales = s->floats;
    } else {
      VKFUSE_ASSIGN_OR_RETURN(scales, m.attrs().reals("scales"));
    }
  } else {
    VKFUSE_TRY(m.attrs().only({"mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside",
                               "extrapolation_value", "antialias", "axes", "keep_aspect_ratio_policy"}));
    VKFUSE_ASSIGN_OR_RETURN(const std::string ctm, m.attrs().text("coordinate_transformation_mode", m.opset() < 11 ? "asymmetric" : "half_pixel"));
    VKFUSE_ASSIGN_OR_RETURN(coordinate, enum_value(m, "coordinate_transformation_mode", ctm,
                                                   {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"}));
    VKFUSE_ASSIGN_OR_RETURN(const std::string nm, m.attrs().text("nearest_mode", m.opset() < 11 ? "floor" : "round_prefer_floor"));
    VKFUSE_ASSIGN_OR_RETURN(nearest, enum_value(m, "nearest_mode", nm, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}));
    VKFUSE_ASSIGN_OR_RETURN(const std::string policy, m.attrs().text("keep_aspect_ratio_policy", "stretch"));
    if (policy != "stretch") return m.attrs().unsupported("keep_aspect_ratio_policy", "");
    VKFUSE_ASSIGN_OR_RETURN(axes, m.attrs().integers("axes"));
    // Opset 10: (X, scales). Opset 11+: (X, roi, scales, sizes), scales or sizes given.
    const std::size_t scales_at = m.opset() < 11 ? 1 : 2;
    if (m.has_input(scales_at)) {
      const ConstTensor* s = m.constant(scales_at);
      if (!s) return m.unsupported("scales are computed at run time");
      scales = s->floats;
    }
    if (m.opset() >= 11 && m.has_input(3)) {
      VKFUSE_ASSIGN_OR_RETURN(sizes, m.constant_ints(3, "sizes"));
    }
  }
  Shape out = in;
  if (!sizes.empty()) {
    VKFUSE_ASSIGN_OR_RETURN(out, spread_over_axes<std::int64_t>(m, sizes, axes, in.size(), -1, 1));
    for (std::size_t d = 0; d < in.size(); ++d)
      if (out[d] < 0) out[d] = in[d];
  } else if (!scales.empty()) {
    VKFUSE_ASSIGN_OR_RETURN(const auto full, spread_over_axes<float>(m, scales, axes, in.size(), 1.0f, 1));
    for (std::size_t d = 0; d < in.size(); ++d) {
      // The kernels map coordinates with out / in; ONNX uses the given scale, which is the same only
      // when in * scale is a whole number.
      const double exact = static_cast<double>(in[d]) * full[d];
      if (!(exact >= 1.0 && exact <= 2147483647.0))
        return m.invalid("scale " + std::to_string(full[d]) + " of axis " + std::to_string(d) + " gives no valid size");
      out[d] = static_cast<std::int64_t>(std::floor(exact));
      if (static_cast<double>(out[d]) != exact)
        return m.unsupported("scale " + std::to_string(full[d]) + " of axis " + std::to_string(d) + " (size " +
                             std::to_string(in[d]) + ") gives a fractional size");
    }
  } else {
    return m.invalid("neither scales nor sizes are given");
  }
  if (!upsample) {
    VKFUSE_ASSIGN_OR_RETURN(const std::int64_t antialias, m.attrs().integer("antialias", 0));
    for (std::size_t d = 0; d < in.size(); ++d)
      if (antialias != 0 && mode_value != 0.0f && out[d] < in[d]) return m.attrs().unsupported("antialias", "downsampling with antialias");
  }
  if (mode_value == 1.0f)
    for (std::size_t d = 0; d + 2 < in.size(); ++d)
      if (out[d] != in[d]) return m.unsupported("linear resize of axis " + std::to_string(d) + "; vkfuse resizes the last two axes only");
  if (out == in) {
    m.forward_input(0, 0);
    return {};
  }
  m.set_output(0, m.op("Resize", {x},
                       {Attr{"sizes", out}, Attr{"mode", mode_value}, Attr{"coordinate_transformation_mode", coordinate},
                        Attr{"nearest_mode", nearest}}));
  return {};
}

}  // namespace vkfuse::onnx_import
