// Typed access to an ONNX node's attributes. Every getter checks the attribute's type and returns an
// error that names the node, its op type and the attribute; a missing attribute takes the fallback.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <vkfuse/status.hpp>

namespace onnx {
class AttributeProto;
class NodeProto;
class TensorProto;
}  // namespace onnx

namespace vkfuse::onnx_import {

// The attribute's type; for files that leave `type` unset (old exporters), inferred from the field
// that holds a value.
int attribute_type(const onnx::AttributeProto& attr);

// "INT", "FLOATS", "GRAPH", ... for every AttributeProto type.
std::string attribute_type_name(int type);

// A short rendering of any attribute for messages: "kernel_shape=[3,3]", "mode='linear'",
// "body=<graph 'loop_body'>".
std::string describe_attribute(const onnx::AttributeProto& attr);

class NodeAttributes {
 public:
  // `where` prefixes errors: "node 'conv1' (Conv)".
  NodeAttributes(const onnx::NodeProto& node, std::string where);

  const onnx::AttributeProto* find(std::string_view name) const;
  bool has(std::string_view name) const { return find(name) != nullptr; }

  Result<std::int64_t> integer(std::string_view name, std::int64_t fallback) const;
  Result<float> real(std::string_view name, float fallback) const;  // an INT is accepted too
  Result<std::string> text(std::string_view name, std::string fallback) const;
  Result<std::vector<std::int64_t>> integers(std::string_view name, std::vector<std::int64_t> fallback = {}) const;
  Result<std::vector<float>> reals(std::string_view name) const;
  // nullptr when absent; an error when present with another type.
  Result<const onnx::TensorProto*> tensor(std::string_view name) const;

  // An error for an attribute this importer does not handle (names it, with its value).
  Status unsupported(std::string_view name, const std::string& why) const;
  // Errors on the first attribute not in `known` (an attribute we would silently ignore).
  Status only(const std::vector<std::string_view>& known) const;

  const std::string& where() const { return where_; }

 private:
  Status wrong_type(const onnx::AttributeProto& attr, const char* expected) const;
  const onnx::NodeProto& node_;
  std::string where_;
};

}  // namespace vkfuse::onnx_import
