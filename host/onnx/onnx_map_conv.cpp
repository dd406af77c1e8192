// Conv, ConvTranspose and pooling: auto_pad and ConvTranspose's output_shape are resolved here into
// explicit pads ([top, left, bottom, right]), which is all the vkfuse ops take. 2-D (NCHW) only.
#include "host/onnx/onnx_node_map.h"

namespace vkfuse::onnx_import {
namespace {

struct Window {
  std::vector<std::int64_t> kernel, strides, dilations, pads;  // pads: begins then ends
};

// Window parameters come from the file: keep them where the arithmetic below cannot overflow.
constexpr std::int64_t kMaxWindowValue = std::int64_t{1} << 24;

Status check_range(const NodeMapping& m, const char* what, const std::vector<std::int64_t>& values, std::int64_t lo) {
  for (std::int64_t v : values)
    if (v < lo || v > kMaxWindowValue)
      return m.invalid(std::string(what) + " " + shape_to_string(values) + " must be in [" + std::to_string(lo) + ", 2^24]");
  return {};
}

// SAME_UPPER / SAME_LOWER: the output is ceil(in / stride) and the padding is split evenly, the odd
// one at the end (UPPER) or the beginning (LOWER). VALID: no padding. NOTSET: the `pads` attribute.
Result<std::vector<std::int64_t>> resolve_auto_pad(const NodeMapping& m, const Shape& in, const Window& w) {
  VKFUSE_ASSIGN_OR_RETURN(const std::string auto_pad, m.attrs().text("auto_pad", "NOTSET"));
  const std::size_t spatial = w.kernel.size();
  if (auto_pad == "NOTSET") {
    VKFUSE_ASSIGN_OR_RETURN(std::vector<std::int64_t> pads, m.attrs().integers("pads", std::vector<std::int64_t>(2 * spatial, 0)));
    if (pads.size() != 2 * spatial) return m.invalid("pads " + shape_to_string(pads) + " for " + std::to_string(spatial) + " spatial dims");
    return pads;
  }
  if (auto_pad == "VALID") return std::vector<std::int64_t>(2 * spatial, 0);
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") return m.attrs().unsupported("auto_pad", "");
  std::vector<std::int64_t> pads(2 * spatial, 0);
  for (std::size_t i = 0; i < spatial; ++i) {
    const std::int64_t size = in[2 + i];
    const std::int64_t out = (size + w.strides[i] - 1) / w.strides[i];
    const std::int64_t total =
        std::max<std::int64_t>(0, (out - 1) * w.strides[i] + (w.kernel[i] - 1) * w.dilations[i] + 1 - size);
    const std::int64_t small = total / 2, large = total - total / 2;
    pads[i] = auto_pad == "SAME_UPPER" ? small : large;
    pads[spatial + i] = auto_pad == "SAME_UPPER" ? large : small;
  }
  return pads;
}

// kernel_shape (default: the weight's spatial dims), strides, dilations, pads of a 2-D window.
Result<Window> read_window(const NodeMapping& m, const Shape& in, const Shape& weight) {
  if (in.size() != 4) return m.unsupported("input " + shape_to_string(in) + ": vkfuse runs 2-D (NCHW) windows only");
  Window w;
  const std::vector<std::int64_t> fallback = weight.size() == 4 ? std::vector<std::int64_t>{weight[2], weight[3]}
                                                                : std::vector<std::int64_t>{};
  VKFUSE_ASSIGN_OR_RETURN(w.kernel, m.attrs().integers("kernel_shape", fallback));
  if (w.kernel.size() != 2) return m.invalid("kernel_shape " + shape_to_string(w.kernel) + " is not 2-D");
  VKFUSE_ASSIGN_OR_RETURN(w.strides, m.attrs().integers("strides", {1, 1}));
  VKFUSE_ASSIGN_OR_RETURN(w.dilations, m.attrs().integers("dilations", {1, 1}));
  if (w.strides.size() != 2 || w.dilations.size() != 2) return m.invalid("strides and dilations must have 2 values");
  VKFUSE_TRY(check_range(m, "kernel_shape", w.kernel, 1));
  VKFUSE_TRY(check_range(m, "strides", w.strides, 1));
  VKFUSE_TRY(check_range(m, "dilations", w.dilations, 1));
  VKFUSE_ASSIGN_OR_RETURN(w.pads, resolve_auto_pad(m, in, w));
  VKFUSE_TRY(check_range(m, "pads", w.pads, 0));
  return w;
}

}  // namespace

Status map_conv(NodeMapping& m) {
  VKFUSE_TRY(m.attrs().only({"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}));
  VKFUSE_ASSIGN_OR_RETURN(const Window w, read_window(m, m.shape(0), m.shape(1)));
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t group, m.attrs().integer("group", 1));
  std::vector<Tensor> inputs;
  VKFUSE_TRY(two_inputs_and_optional_third(m, inputs));
  m.set_output(0, m.op("Conv", inputs,
                       {Attr{"group", static_cast<float>(group)}, Attr{"pads", w.pads}, Attr{"strides", w.strides},
                        Attr{"dilations", w.dilations}}));
  return {};
}

Status map_conv_transpose(NodeMapping& m) {
  VKFUSE_TRY(m.attrs().only({"auto_pad", "dilations", "group", "kernel_shape", "output_padding", "output_shape", "pads", "strides"}));
  const Shape in = m.shape(0);
  Window w;
  {
    // auto_pad means something else here (output = input * stride): read the window without it.
    if (in.size() != 4) return m.unsupported("input " + shape_to_string(in) + ": vkfuse runs 2-D (NCHW) windows only");
    const Shape weight = m.shape(1);
    const std::vector<std::int64_t> fallback = weight.size() == 4 ? std::vector<std::int64_t>{weight[2], weight[3]}
                                                                  : std::vector<std::int64_t>{};
    VKFUSE_ASSIGN_OR_RETURN(w.kernel, m.attrs().integers("kernel_shape", fallback));
    VKFUSE_ASSIGN_OR_RETURN(w.strides, m.attrs().integers("strides", {1, 1}));
    VKFUSE_ASSIGN_OR_RETURN(w.dilations, m.attrs().integers("dilations", {1, 1}));
    VKFUSE_ASSIGN_OR_RETURN(w.pads, m.attrs().integers("pads", {0, 0, 0, 0}));
    if (w.kernel.size() != 2 || w.strides.size() != 2 || w.dilations.size() != 2 || w.pads.size() != 4)
      return m.invalid("kernel_shape, strides, dilations and pads must describe 2 spatial dims");
    VKFUSE_TRY(check_range(m, "kernel_shape", w.kernel, 1));
    VKFUSE_TRY(check_range(m, "strides", w.strides, 1));
    VKFUSE_TRY(check_range(m, "dilations", w.dilations, 1));
    VKFUSE_TRY(check_range(m, "pads", w.pads, 0));
  }
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t group, m.attrs().integer("group", 1));
  VKFUSE_ASSIGN_OR_RETURN(std::vector<std::int64_t> output_padding, m.attrs().integers("output_padding", {0, 0}));
  VKFUSE_ASSIGN_OR_RETURN(std::vector<std::int64_t> output_shape, m.attrs().integers("output_shape"));
  VKFUSE_ASSIGN_OR_RETURN(const std::string auto_pad, m.attrs().text("auto_pad", "NOTSET"));
  if (output_padding.size() != 2) return m.invalid("output_padding must have 2 values");
  VKFUSE_TRY(check_range(m, "output_padding", output_padding, 0));
  VKFUSE_TRY(check_range(m, "output_shape", output_shape, 1));
  if (output_shape.size() > 2) output_shape.erase(output_shape.begin(), output_shape.end() - 2);  // N, C given too
  if (output_shape.empty() && (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER"))
    output_shape = {in[2] * w.strides[0], in[3] * w.strides[1]};
  else if (auto_pad == "VALID")
    w.pads = {0, 0, 0, 0};
  else if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    return m.attrs().unsupported("auto_pad", "");
  if (output_shape.size() == 2) {
    // total = stride (in - 1) + output_padding + (k - 1) dilation + 1 - out, split like Conv's SAME.
    for (std::size_t i = 0; i < 2; ++i) {
      const std::int64_t total = w.strides[i] * (in[2 + i] - 1) + output_padding[i] +
                                 (w.kernel[i] - 1) * w.dilations[i] + 1 - output_shape[i];
      if (total < 0) return m.unsupported("output_shape " + shape_to_string(output_shape) + " needs negative padding");
      const std::int64_t small = total / 2, large = total - total / 2;
      w.pads[i] = auto_pad == "SAME_UPPER" ? small : large;
      w.pads[2 + i] = auto_pad == "SAME_UPPER" ? large : small;
    }
  } else if (!output_shape.empty()) {
    return m.invalid("output_shape " + shape_to_string(output_shape) + " is not 2-D");
  }
  std::vector<Tensor> inputs;
  VKFUSE_TRY(two_inputs_and_optional_third(m, inputs));
  m.set_output(0, m.op("ConvTranspose", inputs,
                       {Attr{"group", static_cast<float>(group)}, Attr{"pads", w.pads}, Attr{"strides", w.strides},
                        Attr{"dilations", w.dilations}, Attr{"output_padding", output_padding}}));
  return {};
}

Status map_pool(NodeMapping& m) {
  const bool max = m.op_type() == "MaxPool";
  if (max) {
    VKFUSE_TRY(m.attrs().only({"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"}));
    if (m.output_used(1)) return m.unsupported("its Indices output is used");
  } else {
    VKFUSE_TRY(m.attrs().only({"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape", "pads", "strides"}));
  }
  if (!m.attrs().has("kernel_shape")) return m.invalid("kernel_shape is required");
  VKFUSE_ASSIGN_OR_RETURN(const Window w, read_window(m, m.shape(0), {}));
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t ceil_mode, m.attrs().integer("ceil_mode", 0));
  VKFUSE_ASSIGN_OR_RETURN(Tensor x, m.tensor(0));
  std::vector<Attr> attrs{Attr{"ceil_mode", static_cast<float>(ceil_mode)}, Attr{"kernel_shape", w.kernel},
                          Attr{"pads", w.pads}, Attr{"strides", w.strides}};
  if (max) {
    attrs.emplace_back("dilations", w.dilations);
  } else {
    if (w.dilations != std::vector<std::int64_t>{1, 1}) return m.attrs().unsupported("dilations", "AveragePool without dilation only");
    VKFUSE_ASSIGN_OR_RETURN(const std::int64_t include_pad, m.attrs().integer("count_include_pad", 0));
    attrs.emplace_back("count_include_pad", static_cast<float>(include_pad));
  }
  m.set_output(0, m.op(m.op_type(), {x}, attrs));
  return {};
}

Status map_global_pool(NodeMapping& m) {
  VKFUSE_TRY(m.attrs().only({}));
  VKFUSE_ASSIGN_OR_RETURN(Tensor x, m.tensor(0));
  if (m.shape_of(x).size() != 4) return m.unsupported("input " + shape_to_string(m.shape_of(x)) + ": 2-D (NCHW) only");
  m.set_output(0, m.op(m.op_type(), {x}));
  return {};
}

}  // namespace vkfuse::onnx_import
