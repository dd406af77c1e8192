// MatMul, Gemm, Softmax/LogSoftmax, LayerNormalization, BatchNormalization, Reduce*, ArgMax.
#include <algorithm>
#include <cmath>

#include "host/onnx/onnx_node_map.h"
#include "host/onnx/onnx_shapes.h"
#include "host/op_registry.h"

namespace vkfuse::onnx_import {
namespace {

bool has_scalar_attr(const OpDef& def, std::string_view name) {
  return std::any_of(def.attrs.begin(), def.attrs.end(), [&](const AttrDef& a) { return a.name == name; });
}

bool has_list_attr(const OpDef& def, std::string_view name) {
  return std::find(def.list_attrs.begin(), def.list_attrs.end(), name) != def.list_attrs.end();
}

}  // namespace

Status map_matmul(NodeMapping& m) {
  VKFUSE_TRY(m.attrs().only({}));
  VKFUSE_ASSIGN_OR_RETURN(Tensor a, m.tensor(0));
  VKFUSE_ASSIGN_OR_RETURN(Tensor b, m.tensor(1));
  m.set_output(0, m.op("MatMul", {a, b}));
  return {};
}

Status map_gemm(NodeMapping& m) {
  VKFUSE_TRY(m.attrs().only({"alpha", "beta", "transA", "transB"}));
  VKFUSE_ASSIGN_OR_RETURN(const float alpha, m.attrs().real("alpha", 1.0f));
  VKFUSE_ASSIGN_OR_RETURN(const float beta, m.attrs().real("beta", 1.0f));
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t trans_a, m.attrs().integer("transA", 0));
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t trans_b, m.attrs().integer("transB", 0));
  std::vector<Tensor> inputs;
  VKFUSE_TRY(two_inputs_and_optional_third(m, inputs));
  m.set_output(0, m.op("Gemm", inputs,
                       {Attr{"alpha", alpha}, Attr{"beta", beta}, Attr{"transA", static_cast<float>(trans_a)},
                        Attr{"transB", static_cast<float>(trans_b)}}));
  return {};
}

Status map_softmax(NodeMapping& m) {
  VKFUSE_TRY(m.attrs().only({"axis"}));
  VKFUSE_ASSIGN_OR_RETURN(Tensor x, m.tensor(0));
  const Shape in = m.shape_of(x);
  const auto rank = static_cast<std::int64_t>(in.size());
  // Opset 13 made Softmax act on one axis (default -1). Before, the input was coerced to 2-D at `axis`
  // (default 1) and normalized over everything after it: Flatten, softmax the rows, reshape back.
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t axis_attr, m.attrs().integer("axis", m.opset() < 13 ? 1 : -1));
  auto axis = normalize_axis(axis_attr, std::max<std::int64_t>(rank, 1), "Softmax axis");
  if (!axis.ok()) return m.invalid(axis.status().message());
  const std::string& type = m.op_type();
  if (m.opset() >= 13 || *axis >= rank - 1) {
    m.set_output(0, m.op(type, {x}, {Attr{"axis", static_cast<float>(*axis)}}));
    return {};
  }
  VKFUSE_TRY(m.require("Reshape"));
  const auto split = static_cast<std::size_t>(*axis);
  const Shape rows{dims_product(in, 0, split), dims_product(in, split, in.size())};
  Tensor flat = m.op("Reshape", {x}, {Attr{"shape", rows}}, "coerce_2d");
  Tensor soft = m.op(type, {flat}, {Attr{"axis", 1.0f}});
  m.set_output(0, m.op("Reshape", {soft}, {Attr{"shape", in}}, "restore_shape"));
  return {};
}

Status map_layer_norm(NodeMapping& m) {
  VKFUSE_TRY(m.attrs().only({"axis", "epsilon", "stash_type"}));
  if (m.output_used(1) || m.output_used(2)) return m.unsupported("its Mean and InvStdDev outputs are used");
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t axis, m.attrs().integer("axis", -1));
  VKFUSE_ASSIGN_OR_RETURN(const float epsilon, m.attrs().real("epsilon", 1e-5f));
  std::vector<Tensor> inputs;
  VKFUSE_TRY(two_inputs_and_optional_third(m, inputs));
  m.set_output(0, m.op("LayerNormalization", inputs, {Attr{"axis", static_cast<float>(axis)}, Attr{"epsilon", epsilon}}));
  return {};
}

Status map_batch_norm(NodeMapping& m) {
  VKFUSE_TRY(m.attrs().only({"epsilon", "momentum", "training_mode", "spatial"}));
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t training, m.attrs().integer("training_mode", 0));
  if (training != 0 || m.output_used(1) || m.output_used(2))
    return m.unsupported("training mode (running statistics as outputs); vkfuse runs inference only");
  VKFUSE_ASSIGN_OR_RETURN(const float epsilon, m.attrs().real("epsilon", 1e-5f));
  VKFUSE_ASSIGN_OR_RETURN(Tensor x, m.tensor(0));
  const Shape in = m.shape_of(x);
  if (in.size() < 2) return m.invalid("input " + shape_to_string(in) + " has no channel dimension");
  const std::int64_t channels = in[1];
  const ConstTensor* scale = m.constant(1);
  const ConstTensor* bias = m.constant(2);
  const ConstTensor* mean = m.constant(3);
  const ConstTensor* var = m.constant(4);
  if (!(scale && bias && mean && var)) {  // statistics computed at run time: the op table's composite
    VKFUSE_TRY(m.require("BatchNormalization"));
    std::vector<Tensor> inputs{x};
    for (std::size_t i = 1; i <= 4; ++i) {
      VKFUSE_ASSIGN_OR_RETURN(Tensor t, m.tensor(i));
      inputs.push_back(t);
    }
    m.set_output(0, m.op("BatchNormalization", inputs, {Attr{"epsilon", epsilon}}));
    return {};
  }
  // Inference BN is an affine map per channel: y = x * a + b, a = scale / sqrt(var + eps),
  // b = bias - mean * a. Two elementwise ops that fuse with whatever precedes or follows.
  for (const ConstTensor* p : {scale, bias, mean, var})
    if (p->numel() != channels)
      return m.invalid("parameter of shape " + shape_to_string(p->shape) + " for " + std::to_string(channels) + " channels");
  std::vector<float> a(static_cast<std::size_t>(channels)), b(a.size());
  for (std::size_t c = 0; c < a.size(); ++c) {
    const double s = scale->at(c) / std::sqrt(var->at(c) + static_cast<double>(epsilon));
    a[c] = static_cast<float>(s);
    b[c] = static_cast<float>(bias->at(c) - mean->at(c) * s);
  }
  Shape per_channel(in.size() - 1, 1);
  per_channel[0] = channels;
  const DType dtype = m.dtype_of(x);
  Tensor scaled = m.op("Mul", {x, m.builder().constant(HostTensor::from_floats(per_channel, a, dtype), m.name() + "/scale")}, {}, "scale");
  m.set_output(0, m.op("Add", {scaled, m.builder().constant(HostTensor::from_floats(per_channel, b, dtype), m.name() + "/shift")}));
  return {};
}

Status map_reduce(NodeMapping& m) {
  VKFUSE_TRY(m.attrs().only({"axes", "keepdims", "noop_with_empty_axes"}));
  const std::string& type = m.op_type();
  const OpDef* def = find_op(type);
  if (!def) return m.require(type);
  VKFUSE_ASSIGN_OR_RETURN(Tensor x, m.tensor(0));
  const auto rank = static_cast<std::int64_t>(m.shape_of(x).size());
  // Axes became an input in opset 13 for ReduceSum and in opset 18 for the others.
  const bool axes_as_input = m.opset() >= (type == "ReduceSum" ? 13 : 18);
  std::vector<std::int64_t> axes;
  if (axes_as_input) {
    if (m.has_input(1)) {
      VKFUSE_ASSIGN_OR_RETURN(axes, m.constant_ints(1, "axes"));
    }
  } else {
    VKFUSE_ASSIGN_OR_RETURN(axes, m.attrs().integers("axes"));
  }
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t keepdims, m.attrs().integer("keepdims", 1));
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t noop, m.attrs().integer("noop_with_empty_axes", 0));
  if (axes.empty() && noop != 0) {
    m.forward_input(0, 0);
    return {};
  }
  auto normalized = normalize_axes(axes, rank, "Reduce axis");
  if (!normalized.ok()) return m.invalid(normalized.status().message());
  std::vector<Attr> attrs{Attr{"keepdims", static_cast<float>(keepdims)}};
  if (has_list_attr(*def, "axes")) {
    if (!axes.empty()) attrs.emplace_back("axes", *normalized);
    if (has_scalar_attr(*def, "noop_with_empty_axes")) attrs.emplace_back("noop_with_empty_axes", 0.0f);
  } else {
    // The reduce root reduces the trailing axes [axis, rank): other axis sets need the list form.
    std::vector<std::int64_t> sorted = *normalized;
    std::sort(sorted.begin(), sorted.end());
    std::int64_t first = 0;
    if (!sorted.empty()) {
      first = sorted.front();
      for (std::size_t k = 0; k < sorted.size(); ++k)
        if (sorted[k] != first + static_cast<std::int64_t>(k) || sorted.back() != rank - 1)
          return m.unsupported("axes " + shape_to_string(axes) + " of a rank-" + std::to_string(rank) +
                               " input; vkfuse's " + type + " reduces trailing axes only");
    }
    attrs.emplace_back("axis", static_cast<float>(first));
  }
  m.set_output(0, m.op(type, {x}, attrs));
  return {};
}

Status map_argmax(NodeMapping& m) {
  VKFUSE_TRY(m.attrs().only({"axis", "keepdims", "select_last_index"}));
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t axis, m.attrs().integer("axis", 0));
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t keepdims, m.attrs().integer("keepdims", 1));
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t last, m.attrs().integer("select_last_index", 0));
  VKFUSE_ASSIGN_OR_RETURN(Tensor x, m.tensor(0));
  m.set_output(0, m.op("ArgMax", {x},
                       {Attr{"axis", static_cast<float>(axis)}, Attr{"keepdims", static_cast<float>(keepdims)},
                        Attr{"select_last_index", static_cast<float>(last)}}));
  return {};
}

}  // namespace vkfuse::onnx_import
