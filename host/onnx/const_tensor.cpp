#include "host/onnx/const_tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "host/half.h"
#include "host/onnx/tensor_proto.h"
#include "onnx.pb.h"

namespace vkfuse::onnx_import {

using onnx::TensorProto;

bool ConstTensor::is_float() const {
  return onnx_type == TensorProto::FLOAT || onnx_type == TensorProto::FLOAT16 || onnx_type == TensorProto::DOUBLE ||
         onnx_type == TensorProto::BFLOAT16;
}

ConstTensor make_int64_tensor(Shape shape, std::vector<std::int64_t> values) {
  ConstTensor t;
  t.shape = std::move(shape);
  t.onnx_type = TensorProto::INT64;
  t.ints = std::move(values);
  return t;
}

ConstTensor make_float_tensor(Shape shape, std::vector<float> values, int onnx_type) {
  ConstTensor t;
  t.shape = std::move(shape);
  t.onnx_type = onnx_type;
  t.floats = std::move(values);
  return t;
}

ConstTensor make_zero_tensor(Shape shape, int onnx_type) {
  ConstTensor t;
  t.onnx_type = onnx_type;
  const auto n = static_cast<std::size_t>(shape_numel(shape));
  t.shape = std::move(shape);
  if (t.is_float()) t.floats.assign(n, 0.0f);
  else t.ints.assign(n, 0);
  return t;
}

float round_to_onnx_float(double value, int onnx_type) {
  const auto f = static_cast<float>(value);
  if (onnx_type == TensorProto::FLOAT16) return half_to_float(float_to_half(f));
  if (onnx_type == TensorProto::BFLOAT16 && std::isfinite(f)) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &f, 4);
    bits = (bits + 0x7FFFu + ((bits >> 16) & 1u)) & 0xFFFF0000u;  // nearest, ties to even
    float out = 0.0f;
    std::memcpy(&out, &bits, 4);
    return out;
  }
  return f;
}

Result<ConstTensor> const_from_proto(const TensorProto& proto, const std::string& base_dir, const std::string& what) {
  ConstTensor out;
  out.onnx_type = proto.data_type();
  if (is_onnx_integer_type(proto.data_type())) {
    VKFUSE_ASSIGN_OR_RETURN(out.shape, shape_from_proto(proto, what));
    VKFUSE_ASSIGN_OR_RETURN(out.ints, int64_values_from_proto(proto, base_dir, what));
    return out;
  }
  if (proto.data_type() == TensorProto::FLOAT) {  // the common case, and the big one: raw floats, copied once
    VKFUSE_ASSIGN_OR_RETURN(const std::optional<std::string_view> raw, raw_data_bytes(proto, what));
    if (raw) {
      VKFUSE_ASSIGN_OR_RETURN(out.shape, shape_from_proto(proto, what));
      out.floats.resize(raw->size() / 4);
      if (!raw->empty()) std::memcpy(out.floats.data(), raw->data(), raw->size());
      return out;
    }
  }
  VKFUSE_ASSIGN_OR_RETURN(HostTensor host, tensor_from_proto(proto, base_dir, what));
  out.shape = host.shape;
  if (host.dtype == DType::kF32) {
    out.floats.resize(host.bytes.size() / 4);
    if (!out.floats.empty()) std::memcpy(out.floats.data(), host.bytes.data(), host.bytes.size());
  } else {
    out.floats = host.to_floats();
  }
  return out;
}

Result<HostTensor> to_host_tensor(const ConstTensor& tensor, const std::string& what, DType float_dtype) {
  VKFUSE_ASSIGN_OR_RETURN(DType dtype, dtype_for_onnx_type(tensor.onnx_type, what));
  if (dtype == DType::kF32) dtype = float_dtype;
  if (dtype == DType::kF32) {
    const auto* first = reinterpret_cast<const std::byte*>(tensor.floats.data());
    return HostTensor{tensor.shape, dtype, std::vector<std::byte>(first, first + tensor.floats.size() * 4)};
  }
  if (tensor.is_float()) return HostTensor::from_floats(tensor.shape, tensor.floats, dtype);
  HostTensor out{tensor.shape, dtype, {}};
  out.bytes.resize(tensor.ints.size() * dtype_size(dtype));
  for (std::size_t i = 0; i < tensor.ints.size(); ++i) {
    const std::int64_t v = tensor.ints[i];
    if (dtype == DType::kBool) {
      out.bytes[i] = v != 0 ? std::byte{1} : std::byte{0};
      continue;
    }
    if (v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max())
      return make_error(ErrorCode::kUnsupported, what + ": element " + std::to_string(i) + " (" + std::to_string(v) +
                                                     ") does not fit in int32, which vkfuse uses on the GPU for " +
                                                     onnx_data_type_name(tensor.onnx_type));
    const auto narrow = static_cast<std::int32_t>(v);
    std::memcpy(out.bytes.data() + 4 * i, &narrow, 4);
  }
  return out;
}

Result<std::vector<std::int64_t>> integer_values(const ConstTensor& tensor, const std::string& what) {
  if (tensor.is_float() || tensor.onnx_type == TensorProto::BOOL)
    return make_error(ErrorCode::kInvalidArgument,
                      what + " is " + onnx_data_type_name(tensor.onnx_type) + "; an integer tensor was expected");
  return tensor.ints;
}

}  // namespace vkfuse::onnx_import
