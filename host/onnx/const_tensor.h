// ConstTensor: a tensor whose value is known while a model is imported (initializers, Constant nodes
// and everything the CPU folder computes from them). It keeps the ONNX element type, and integer values
// in int64, so that the shape arithmetic torch emits folds exactly; only what a GPU op finally reads is
// converted to a vkfuse dtype (see to_host_tensor).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <vkfuse/status.hpp>
#include <vkfuse/vkfuse.hpp>

namespace onnx {
class TensorProto;
}

namespace vkfuse::onnx_import {

struct ConstTensor {
  Shape shape;
  int onnx_type = 1;               // onnx::TensorProto::DataType (1 = FLOAT)
  std::vector<float> floats;       // FLOAT, FLOAT16, BFLOAT16, DOUBLE: the values (row-major)
  std::vector<std::int64_t> ints;  // integer types and BOOL (0/1)

  bool is_float() const;
  std::int64_t numel() const { return shape_numel(shape); }
  // Element i as a double (both storages).
  double at(std::size_t i) const { return is_float() ? double{floats[i]} : static_cast<double>(ints[i]); }
};

// Makers for the folder and the node mappers.
ConstTensor make_int64_tensor(Shape shape, std::vector<std::int64_t> values);
ConstTensor make_float_tensor(Shape shape, std::vector<float> values, int onnx_type = 1);
// An empty tensor of the given type and shape, storage sized to numel (zeros).
ConstTensor make_zero_tensor(Shape shape, int onnx_type);

// Decodes an initializer or Constant value (see tensor_proto.h for base_dir and errors).
Result<ConstTensor> const_from_proto(const onnx::TensorProto& proto, const std::string& base_dir, const std::string& what);

// The value for the GPU: FLOAT/DOUBLE/BFLOAT16 -> float_dtype (f32 or f16), FLOAT16 -> f16, integers -> i32 (values outside
// int32 are an error naming `what`), BOOL -> bool.
Result<HostTensor> to_host_tensor(const ConstTensor& tensor, const std::string& what, DType float_dtype = DType::kF32);

// Integer values of a tensor that must be an integer constant (axes, pads, shapes), or an error naming
// `what`.
Result<std::vector<std::int64_t>> integer_values(const ConstTensor& tensor, const std::string& what);

// Rounds `value` as the element type stores it (FLOAT16 to half, BFLOAT16 to bfloat16, else float).
float round_to_onnx_float(double value, int onnx_type);

}  // namespace vkfuse::onnx_import
