#include "host/onnx/onnx_import_state.h"

#include "host/onnx/tensor_proto.h"
#include "host/op_registry.h"
#include "onnx.pb.h"

namespace vkfuse::onnx_import {

std::string ImportState::unique_node_name(const std::string& base) {
  std::string name = base;
  for (int k = 1; node_names.count(name); ++k) name = base + "_" + std::to_string(k);
  node_names.insert(name);
  return name;
}

Result<DType> ImportState::graph_dtype(int onnx_type, const std::string& what) const {
  VKFUSE_ASSIGN_OR_RETURN(const DType dtype, dtype_for_onnx_type(onnx_type, what));
  return dtype == DType::kF32 ? float_dtype : dtype;
}

Result<Tensor> ImportState::graph_tensor(const std::string& name) {
  auto it = values.find(name);
  if (it == values.end()) return make_error(ErrorCode::kInternal, "value '" + name + "' is not defined");
  OnnxValue& value = it->second;
  if (value.tensor.valid()) return value.tensor;
  if (!value.constant) return make_error(ErrorCode::kInternal, "value '" + name + "' has neither data nor a tensor");
  VKFUSE_ASSIGN_OR_RETURN(HostTensor host, to_host_tensor(*value.constant, "constant '" + name + "'", float_dtype));
  value.tensor = builder.constant(std::move(host), name);
  if (!value.tensor.valid()) return builder.status();
  return value.tensor;
}

NodeMapping::NodeMapping(ImportState& state, const onnx::NodeProto& node, std::string name)
    : state_(state), node_(node), name_(std::move(name)),
      attrs_(node, "node '" + name_ + "' (" + node.op_type() + ")") {}

const std::string& NodeMapping::op_type() const { return node_.op_type(); }

std::size_t NodeMapping::input_count() const { return static_cast<std::size_t>(node_.input_size()); }

bool NodeMapping::has_input(std::size_t i) const { return i < input_count() && !input_name(i).empty(); }

const std::string& NodeMapping::input_name(std::size_t i) const { return node_.input(static_cast<int>(i)); }

const ConstTensor* NodeMapping::constant(std::size_t i) const {
  if (!has_input(i)) return nullptr;
  auto it = state_.values.find(input_name(i));
  return it == state_.values.end() ? nullptr : it->second.constant.get();
}

Result<Tensor> NodeMapping::tensor(std::size_t i) {
  if (!has_input(i)) return invalid("input " + std::to_string(i) + " is missing");
  auto result = state_.graph_tensor(input_name(i));
  if (!result.ok()) return result.status().with_context(where());
  return result;
}

Shape NodeMapping::shape(std::size_t i) const {
  if (!has_input(i)) return {};
  auto it = state_.values.find(input_name(i));
  if (it == state_.values.end()) return {};
  if (it->second.constant) return it->second.constant->shape;
  return state_.builder.shape(it->second.tensor);
}

Result<std::vector<std::int64_t>> NodeMapping::constant_ints(std::size_t i, const std::string& what) const {
  const ConstTensor* value = constant(i);
  if (!value)
    return unsupported(what + " (input " + std::to_string(i) + ", '" + (has_input(i) ? input_name(i) : "") +
                       "') is computed at run time; vkfuse needs it known when the model is loaded");
  auto ints = integer_values(*value, where() + ": " + what);
  return ints;
}

Result<float> NodeMapping::constant_scalar(std::size_t i, const std::string& what) const {
  const ConstTensor* value = constant(i);
  if (!value)
    return unsupported(what + " (input " + std::to_string(i) + ") is computed at run time; vkfuse needs it known when the model is loaded");
  if (value->numel() != 1)
    return invalid(what + " has shape " + shape_to_string(value->shape) + "; a single value was expected");
  return static_cast<float>(value->at(0));
}

std::size_t NodeMapping::output_count() const { return static_cast<std::size_t>(node_.output_size()); }

bool NodeMapping::output_used(std::size_t k) const {
  if (k >= output_count() || node_.output(static_cast<int>(k)).empty()) return false;
  auto it = state_.uses.find(node_.output(static_cast<int>(k)));
  return it != state_.uses.end() && it->second > 0;
}

void NodeMapping::set_output(std::size_t k, Tensor tensor) {
  if (k >= output_count() || node_.output(static_cast<int>(k)).empty()) return;
  state_.values[node_.output(static_cast<int>(k))] = OnnxValue{nullptr, tensor, false};
}

void NodeMapping::set_output(std::size_t k, ConstTensor value) {
  if (k >= output_count() || node_.output(static_cast<int>(k)).empty()) return;
  state_.values[node_.output(static_cast<int>(k))] =
      OnnxValue{std::make_shared<const ConstTensor>(std::move(value)), Tensor{}, false};
}

void NodeMapping::forward_input(std::size_t k, std::size_t i) {
  if (k >= output_count() || node_.output(static_cast<int>(k)).empty() || !has_input(i)) return;
  const OnnxValue value = state_.values.at(input_name(i));
  state_.values[node_.output(static_cast<int>(k))] = value;
}

Tensor NodeMapping::op(std::string_view type, const std::vector<Tensor>& inputs, const std::vector<Attr>& attrs,
                       std::string_view suffix) {
  // The importer reserved name_ for this node; helpers and any second op get fresh names.
  std::string name;
  if (suffix.empty() && !own_name_taken_) {
    own_name_taken_ = true;
    name = name_;
  } else {
    name = state_.unique_node_name(name_ + "/" + (suffix.empty() ? std::string(type) : std::string(suffix)));
  }
  return state_.builder.op(type, inputs, attrs, std::move(name));
}

Status NodeMapping::require(std::string_view vkfuse_op) const {
  if (find_op(vkfuse_op)) return {};
  return make_error(ErrorCode::kUnsupported, "needs vkfuse op '" + std::string(vkfuse_op) + "', which is not in the op table yet");
}

Status NodeMapping::invalid(const std::string& message) const {
  return make_error(ErrorCode::kInvalidArgument, where() + ": " + message);
}

Status NodeMapping::unsupported(const std::string& message) const {
  return make_error(ErrorCode::kUnsupported, where() + ": " + message);
}

}  // namespace vkfuse::onnx_import
