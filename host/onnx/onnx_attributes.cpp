#include "host/onnx/onnx_attributes.h"

#include <algorithm>

#include "host/onnx/tensor_proto.h"
#include "onnx.pb.h"

namespace vkfuse::onnx_import {

using onnx::AttributeProto;

int attribute_type(const AttributeProto& attr) {
  if (attr.type() != AttributeProto::UNDEFINED) return attr.type();
  // IR version 1 files carry no type: the field in use says it.
  if (attr.has_f()) return AttributeProto::FLOAT;
  if (attr.has_i()) return AttributeProto::INT;
  if (attr.has_s()) return AttributeProto::STRING;
  if (attr.has_t()) return AttributeProto::TENSOR;
  if (attr.has_g()) return AttributeProto::GRAPH;
  if (attr.has_sparse_tensor()) return AttributeProto::SPARSE_TENSOR;
  if (attr.has_tp()) return AttributeProto::TYPE_PROTO;
  if (attr.floats_size() > 0) return AttributeProto::FLOATS;
  if (attr.ints_size() > 0) return AttributeProto::INTS;
  if (attr.strings_size() > 0) return AttributeProto::STRINGS;
  if (attr.tensors_size() > 0) return AttributeProto::TENSORS;
  if (attr.graphs_size() > 0) return AttributeProto::GRAPHS;
  if (attr.sparse_tensors_size() > 0) return AttributeProto::SPARSE_TENSORS;
  if (attr.type_protos_size() > 0) return AttributeProto::TYPE_PROTOS;
  return AttributeProto::UNDEFINED;
}

std::string attribute_type_name(int type) {
  if (AttributeProto::AttributeType_IsValid(type))
    return AttributeProto::AttributeType_Name(static_cast<AttributeProto::AttributeType>(type));
  return "type " + std::to_string(type);
}

namespace {

template <class List, class Render>
std::string render_list(const List& list, Render render) {
  std::string text = "[";
  int shown = 0;
  for (const auto& item : list) {
    if (shown > 0) text += ",";
    if (++shown > 16) {
      text += "...";
      break;
    }
    text += render(item);
  }
  return text + "]";
}

std::string render_float(float v) {
  std::string s = std::to_string(v);
  while (s.size() > 1 && s.back() == '0' && s[s.size() - 2] != '.') s.pop_back();
  return s;
}

std::string render_tensor(const onnx::TensorProto& t) {
  Shape dims(t.dims().begin(), t.dims().end());
  return "<tensor " + onnx_data_type_name(t.data_type()) + " " + shape_to_string(dims) + ">";
}

}  // namespace

std::string describe_attribute(const AttributeProto& attr) {
  std::string value;
  switch (attribute_type(attr)) {
    case AttributeProto::FLOAT: value = render_float(attr.f()); break;
    case AttributeProto::INT: value = std::to_string(attr.i()); break;
    case AttributeProto::STRING: value = "'" + attr.s() + "'"; break;
    case AttributeProto::TENSOR: value = render_tensor(attr.t()); break;
    case AttributeProto::GRAPH: value = "<graph '" + attr.g().name() + "'>"; break;
    case AttributeProto::SPARSE_TENSOR: value = "<sparse tensor>"; break;
    case AttributeProto::TYPE_PROTO: value = "<type>"; break;
    case AttributeProto::FLOATS: value = render_list(attr.floats(), render_float); break;
    case AttributeProto::INTS: value = render_list(attr.ints(), [](std::int64_t v) { return std::to_string(v); }); break;
    case AttributeProto::STRINGS: value = render_list(attr.strings(), [](const std::string& s) { return "'" + s + "'"; }); break;
    case AttributeProto::TENSORS: value = render_list(attr.tensors(), render_tensor); break;
    case AttributeProto::GRAPHS: value = render_list(attr.graphs(), [](const onnx::GraphProto& g) { return "<graph '" + g.name() + "'>"; }); break;
    case AttributeProto::SPARSE_TENSORS: value = "<" + std::to_string(attr.sparse_tensors_size()) + " sparse tensors>"; break;
    case AttributeProto::TYPE_PROTOS: value = "<" + std::to_string(attr.type_protos_size()) + " types>"; break;
    default: value = attr.has_ref_attr_name() ? "<ref '" + attr.ref_attr_name() + "'>" : "<no value>"; break;
  }
  return attr.name() + "=" + value;
}

NodeAttributes::NodeAttributes(const onnx::NodeProto& node, std::string where) : node_(node), where_(std::move(where)) {}

const AttributeProto* NodeAttributes::find(std::string_view name) const {
  for (const AttributeProto& attr : node_.attribute())
    if (attr.name() == name) return &attr;
  return nullptr;
}

Status NodeAttributes::wrong_type(const AttributeProto& attr, const char* expected) const {
  return make_error(ErrorCode::kInvalidArgument, where_ + ": attribute '" + attr.name() + "' is " +
                                                     attribute_type_name(attribute_type(attr)) + ", expected " + expected);
}

Result<std::int64_t> NodeAttributes::integer(std::string_view name, std::int64_t fallback) const {
  const AttributeProto* attr = find(name);
  if (!attr) return fallback;
  if (attribute_type(*attr) != AttributeProto::INT) return wrong_type(*attr, "INT");
  return attr->i();
}

Result<float> NodeAttributes::real(std::string_view name, float fallback) const {
  const AttributeProto* attr = find(name);
  if (!attr) return fallback;
  if (attribute_type(*attr) == AttributeProto::INT) return static_cast<float>(attr->i());
  if (attribute_type(*attr) != AttributeProto::FLOAT) return wrong_type(*attr, "FLOAT");
  return attr->f();
}

Result<std::string> NodeAttributes::text(std::string_view name, std::string fallback) const {
  const AttributeProto* attr = find(name);
  if (!attr) return fallback;
  if (attribute_type(*attr) != AttributeProto::STRING) return wrong_type(*attr, "STRING");
  return attr->s();
}

Result<std::vector<std::int64_t>> NodeAttributes::integers(std::string_view name, std::vector<std::int64_t> fallback) const {
  const AttributeProto* attr = find(name);
  if (!attr) return fallback;
  const int type = attribute_type(*attr);
  // An empty list is stored with no field set at all, and then has no inferable type.
  if (type == AttributeProto::UNDEFINED) return std::vector<std::int64_t>{};
  if (type != AttributeProto::INTS) return wrong_type(*attr, "INTS");
  return std::vector<std::int64_t>(attr->ints().begin(), attr->ints().end());
}

Result<std::vector<float>> NodeAttributes::reals(std::string_view name) const {
  const AttributeProto* attr = find(name);
  if (!attr) return std::vector<float>{};
  const int type = attribute_type(*attr);
  if (type == AttributeProto::UNDEFINED) return std::vector<float>{};
  if (type != AttributeProto::FLOATS) return wrong_type(*attr, "FLOATS");
  return std::vector<float>(attr->floats().begin(), attr->floats().end());
}

Result<const onnx::TensorProto*> NodeAttributes::tensor(std::string_view name) const {
  const AttributeProto* attr = find(name);
  if (!attr) return static_cast<const onnx::TensorProto*>(nullptr);
  if (attribute_type(*attr) != AttributeProto::TENSOR) return wrong_type(*attr, "TENSOR");
  return &attr->t();
}

Status NodeAttributes::unsupported(std::string_view name, const std::string& why) const {
  const AttributeProto* attr = find(name);
  const std::string shown = attr ? describe_attribute(*attr) : std::string(name);
  return make_error(ErrorCode::kUnsupported, where_ + ": " + shown + (why.empty() ? " is not supported" : ": " + why));
}

Status NodeAttributes::only(const std::vector<std::string_view>& known) const {
  for (const AttributeProto& attr : node_.attribute()) {
    if (attr.has_ref_attr_name())
      return make_error(ErrorCode::kUnsupported, where_ + ": attribute '" + attr.name() + "' refers to a function attribute");
    if (std::find(known.begin(), known.end(), attr.name()) == known.end())
      return make_error(ErrorCode::kUnsupported, where_ + ": attribute " + describe_attribute(attr) + " is not supported");
  }
  return {};
}

}  // namespace vkfuse::onnx_import
