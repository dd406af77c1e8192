// Elementwise ONNX ops: the vkfuse op of the same name, with attributes converted; Clip's bounds and
// Cast's target type; variadic Sum/Mean/Max/Min as chains; Identity and Dropout removed.
#include "host/onnx/onnx_elementwise.h"
#include "host/onnx/onnx_node_map.h"
#include "host/onnx/tensor_proto.h"
#include "host/op_registry.h"
#include "onnx.pb.h"

namespace vkfuse::onnx_import {

Status map_elementwise(NodeMapping& m) {
  const OpDef* def = find_op(m.op_type());
  if (!def) return m.require(m.op_type());
  const int fewest = def->min_arity < 0 ? def->arity : def->min_arity;
  const auto given = static_cast<int>(m.input_count());
  if (given < fewest || given > def->arity)
    return m.invalid("takes " + std::to_string(fewest) + " to " + std::to_string(def->arity) + " inputs, got " + std::to_string(given));
  VKFUSE_ASSIGN_OR_RETURN(const std::vector<float> values, elementwise_attr_values(*def, m.attrs(), nullptr, nullptr));
  std::vector<Tensor> inputs;
  for (std::size_t i = 0; i < m.input_count(); ++i) {
    VKFUSE_ASSIGN_OR_RETURN(Tensor t, m.tensor(i));
    inputs.push_back(t);
  }
  m.set_output(0, m.op(def->name, inputs, as_builder_attrs(*def, values)));
  return {};
}

Status map_clip(NodeMapping& m) {
  const OpDef* def = find_op("Clip");
  VKFUSE_TRY(m.require("Clip"));
  // Opset 11 moved min and max from attributes to optional inputs; vkfuse needs them as numbers.
  for (std::size_t i = 1; i <= 2; ++i)
    if (m.has_input(i) && !m.constant(i))
      return m.unsupported(std::string(i == 1 ? "min" : "max") + " is computed at run time; vkfuse needs it known when the model is loaded");
  VKFUSE_ASSIGN_OR_RETURN(const std::vector<float> values, elementwise_attr_values(*def, m.attrs(), m.constant(1), m.constant(2)));
  VKFUSE_ASSIGN_OR_RETURN(Tensor x, m.tensor(0));
  m.set_output(0, m.op("Clip", {x}, as_builder_attrs(*def, values)));
  return {};
}

Status map_cast(NodeMapping& m) {
  VKFUSE_ASSIGN_OR_RETURN(Tensor x, m.tensor(0));
  DType to = DType::kF32;
  if (m.op_type() == "CastLike") {
    if (!m.has_input(1)) return m.invalid("CastLike needs its target_type input");
    if (const ConstTensor* like = m.constant(1)) {
      VKFUSE_ASSIGN_OR_RETURN(to, m.graph_dtype(like->onnx_type, m.where() + ": target_type"));
    } else {
      VKFUSE_ASSIGN_OR_RETURN(Tensor like_tensor, m.tensor(1));
      to = m.dtype_of(like_tensor);
    }
  } else {
    VKFUSE_TRY(m.attrs().only({"to", "saturate"}));
    VKFUSE_ASSIGN_OR_RETURN(const std::int64_t onnx_to, m.attrs().integer("to", onnx::TensorProto::FLOAT));
    VKFUSE_ASSIGN_OR_RETURN(to, m.graph_dtype(static_cast<int>(onnx_to), m.where() + ": 'to'"));
  }
  if (m.dtype_of(x) == to) {  // INT64 -> INT32 and DOUBLE -> FLOAT are no-ops on the GPU
    m.forward_input(0, 0);
    return {};
  }
  m.set_output(0, m.op("Cast", {x}, {Attr{"to", static_cast<float>(to)}}));
  return {};
}

Status map_variadic(NodeMapping& m) {
  const std::string& type = m.op_type();
  const std::string combine = type == "Sum" || type == "Mean" ? "Add" : type;
  VKFUSE_TRY(m.attrs().only({}));
  std::vector<Tensor> inputs;
  for (std::size_t i = 0; i < m.input_count(); ++i)
    if (m.has_input(i)) {
      VKFUSE_ASSIGN_OR_RETURN(Tensor t, m.tensor(i));
      inputs.push_back(t);
    }
  if (inputs.empty()) return m.invalid("has no inputs");
  if (inputs.size() == 1 && type != "Mean") {
    m.forward_input(0, 0);
    return {};
  }
  Tensor acc = inputs[0];
  for (std::size_t k = 1; k < inputs.size(); ++k) {
    const bool last = k + 1 == inputs.size() && type != "Mean";
    acc = m.op(combine, {acc, inputs[k]}, {}, last ? "" : combine + std::to_string(k));
  }
  if (type == "Mean") {
    const float scale = 1.0f / static_cast<float>(inputs.size());
    acc = m.op("Mul", {acc, m.builder().scalar(scale, m.dtype_of(inputs[0]))});
  }
  m.set_output(0, acc);
  return {};
}

Status map_identity(NodeMapping& m) {
  if (m.op_type() == "Dropout") {
    if (m.output_used(1)) return m.unsupported("its mask output is used; vkfuse runs inference only");
    if (m.has_input(2)) {  // training_mode (opset 12+)
      const ConstTensor* training = m.constant(2);
      if (!training || training->at(0) != 0.0) return m.unsupported("training_mode is on; vkfuse runs inference only");
    }
  }
  m.forward_input(0, 0);
  return {};
}

Status map_fold_only(NodeMapping& m) {
  return m.unsupported("its inputs are computed at run time; vkfuse evaluates " + m.op_type() +
                       " only when they are known while loading the model");
}

}  // namespace vkfuse::onnx_import
