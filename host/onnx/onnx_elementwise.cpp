#include "host/onnx/onnx_elementwise.h"

#include <algorithm>

#include "host/onnx/tensor_proto.h"
#include "onnx.pb.h"

namespace vkfuse::onnx_import {
namespace {

Result<float> clip_bound(const ConstTensor& bound, const NodeAttributes& attrs, const char* which) {
  if (bound.numel() != 1)
    return make_error(ErrorCode::kInvalidArgument, attrs.where() + ": Clip " + which + " has shape " +
                                                       shape_to_string(bound.shape) + "; a scalar was expected");
  return static_cast<float>(bound.at(0));
}

}  // namespace

Result<std::vector<float>> elementwise_attr_values(const OpDef& def, const NodeAttributes& attrs,
                                                   const ConstTensor* clip_min, const ConstTensor* clip_max) {
  std::vector<float> values;
  for (const AttrDef& a : def.attrs) values.push_back(a.default_value);
  auto slot = [&](std::string_view name) -> float* {
    for (std::size_t k = 0; k < def.attrs.size(); ++k)
      if (def.attrs[k].name == name) return &values[k];
    return nullptr;
  };
  std::vector<std::string_view> known = {"alpha", "beta", "gamma", "min", "max"};
  if (def.name == "Gelu") known.push_back("approximate");
  if (def.name == "Cast") known.insert(known.end(), {"to", "saturate"});
  VKFUSE_TRY(attrs.only(known));  // anything else would be silently ignored
  for (std::string_view name : {"alpha", "beta", "gamma", "min", "max"}) {
    if (!attrs.has(name)) continue;
    float* target = slot(name);
    if (!target) return attrs.unsupported(name, "vkfuse's " + std::string(def.name) + " has no such attribute");
    VKFUSE_ASSIGN_OR_RETURN(*target, attrs.real(name, *target));
  }
  if (def.name == "Gelu") {
    VKFUSE_ASSIGN_OR_RETURN(const std::string approximate, attrs.text("approximate", "none"));
    if (approximate != "none" && approximate != "tanh") return attrs.unsupported("approximate", "expected 'none' or 'tanh'");
    if (float* target = slot("approximate")) *target = approximate == "tanh" ? 1.0f : 0.0f;
  }
  if (def.name == "Cast") {
    VKFUSE_ASSIGN_OR_RETURN(const std::int64_t to, attrs.integer("to", onnx::TensorProto::FLOAT));
    VKFUSE_ASSIGN_OR_RETURN(const DType dtype, dtype_for_onnx_type(static_cast<int>(to), attrs.where() + ": Cast 'to'"));
    if (float* target = slot("to")) *target = static_cast<float>(dtype);
  }
  if (clip_min && slot("min")) {
    VKFUSE_ASSIGN_OR_RETURN(*slot("min"), clip_bound(*clip_min, attrs, "min"));
  }
  if (clip_max && slot("max")) {
    VKFUSE_ASSIGN_OR_RETURN(*slot("max"), clip_bound(*clip_max, attrs, "max"));
  }
  return values;
}

std::vector<Attr> as_builder_attrs(const OpDef& def, const std::vector<float>& values) {
  std::vector<Attr> out;
  for (std::size_t k = 0; k < def.attrs.size() && k < values.size(); ++k)
    out.emplace_back(std::string(def.attrs[k].name), values[k]);
  return out;
}

}  // namespace vkfuse::onnx_import
