#include "support/onnx_model.h"

#include <doctest/doctest.h>

#include <fstream>

namespace vkfuse::testing {
namespace {

void set_float_type(onnx::ValueInfoProto& value, const std::string& name, const Shape& shape) {
  value.set_name(name);
  auto* type = value.mutable_type()->mutable_tensor_type();
  type->set_elem_type(onnx::TensorProto::FLOAT);
  for (std::int64_t d : shape) type->mutable_shape()->add_dim()->set_dim_value(d);
}

onnx::TensorProto& add_tensor(onnx::GraphProto& graph, const std::string& name, int type, const Shape& shape) {
  onnx::TensorProto& t = *graph.add_initializer();
  t.set_name(name);
  t.set_data_type(type);
  for (std::int64_t d : shape) t.add_dims(d);
  return t;
}

}  // namespace

OnnxModel::OnnxModel(int opset) {
  proto_.set_ir_version(8);
  proto_.set_producer_name("vkfuse-tests");
  auto* entry = proto_.add_opset_import();
  entry->set_domain("");
  entry->set_version(opset);
  proto_.mutable_graph()->set_name("test");
}

OnnxModel& OnnxModel::input(const std::string& name, const Shape& shape) {
  set_float_type(*proto_.mutable_graph()->add_input(), name, shape);
  return *this;
}

OnnxModel& OnnxModel::output(const std::string& name, const Shape& shape) {
  set_float_type(*proto_.mutable_graph()->add_output(), name, shape);
  return *this;
}

OnnxModel& OnnxModel::node(const std::string& op, const std::vector<std::string>& inputs,
                           const std::vector<std::string>& outputs, const std::string& name) {
  onnx::NodeProto& n = *proto_.mutable_graph()->add_node();
  n.set_op_type(op);
  n.set_name(name);
  for (const std::string& in : inputs) n.add_input(in);
  for (const std::string& out : outputs) n.add_output(out);
  return *this;
}

OnnxModel& OnnxModel::floats(const std::string& name, const Shape& shape, const std::vector<float>& values) {
  add_tensor(*proto_.mutable_graph(), name, onnx::TensorProto::FLOAT, shape)
      .set_raw_data(std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)));
  return *this;
}

OnnxModel& OnnxModel::int64s(const std::string& name, const std::vector<std::int64_t>& values) {
  onnx::TensorProto& t = add_tensor(*proto_.mutable_graph(), name, onnx::TensorProto::INT64,
                                    {static_cast<std::int64_t>(values.size())});
  for (std::int64_t v : values) t.add_int64_data(v);
  return *this;
}

OnnxModel& OnnxModel::external(const std::string& name, const Shape& shape, const std::string& location,
                               std::uint64_t offset) {
  onnx::TensorProto& t = add_tensor(*proto_.mutable_graph(), name, onnx::TensorProto::FLOAT, shape);
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* key, const std::string& value) {
    auto* entry = t.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  };
  add("location", location);
  add("offset", std::to_string(offset));
  return *this;
}

std::string OnnxModel::bytes() const {
  std::string out;
  REQUIRE(proto_.SerializeToString(&out));
  return out;
}

void OnnxModel::save(const std::string& path) const {
  std::ofstream file(path, std::ios::binary);
  const std::string data = bytes();
  file.write(data.data(), static_cast<std::streamsize>(data.size()));
  REQUIRE(file.good());
}

}  // namespace vkfuse::testing
