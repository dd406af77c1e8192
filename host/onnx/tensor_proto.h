// ONNX TensorProto -> vkfuse tensors: initializers, Constant nodes and the .pb tensor files of ONNX's test
// data. Data comes from raw_data, the typed fields (float_data, int32_data, int64_data, double_data,
// uint64_data) or external data (a file named relative to the model's folder).
//
// Errors name the tensor (the `what` argument, e.g. "initializer 'conv1.weight'") and, for external
// data, the file. Nothing here throws.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <vkfuse/status.hpp>
#include <vkfuse/vkfuse.hpp>

namespace onnx {
class TensorProto;
}

namespace vkfuse {

// "FLOAT", "INT64", ... for an onnx::TensorProto::DataType value ("type 42" when unknown).
std::string onnx_data_type_name(int data_type);

// The vkfuse dtype that holds an ONNX element type on the GPU: FLOAT, DOUBLE, BFLOAT16 -> f32;
// FLOAT16 -> f16; INT8/16/32/64, UINT8/16/32/64 -> i32; BOOL -> bool. Other types (STRING, complex)
// are an error naming `what`.
Result<DType> dtype_for_onnx_type(int data_type, const std::string& what);

// True for the ONNX integer types and BOOL (whose values int64_values_from_proto returns).
bool is_onnx_integer_type(int data_type);

// The dims as a Shape. A negative dimension, or an element count whose bytes overflow, is an error.
// A zero dimension is allowed here (empty tensors exist in ONNX files); the graph builder refuses
// them where they would reach the GPU.
Result<Shape> shape_from_proto(const onnx::TensorProto& proto, const std::string& what);

// The tensor converted to its vkfuse dtype (see dtype_for_onnx_type). Integer values outside the int32
// range are an error naming the tensor; DOUBLE rounds to float.
//
// base_dir: the folder external data is read from (the model's folder). Empty: the tensor must hold
// its data itself; external data is an error. External data is read as read_external_data does
// (external_data.h): what is refused there is an error naming the tensor and the file.
Result<HostTensor> tensor_from_proto(const onnx::TensorProto& proto, const std::string& base_dir,
                                     const std::string& what);

// The raw_data of a tensor that keeps its values there (not external, not in the typed fields),
// checked against the bytes its shape and type need; an empty optional for a tensor stored otherwise.
// The view lives as long as `proto`.
Result<std::optional<std::string_view>> raw_data_bytes(const onnx::TensorProto& proto, const std::string& what);

// The values of an integer or BOOL tensor as int64, losslessly (shape arithmetic is done in int64).
// UINT64 values past INT64_MAX are an error; float tensors are an error.
Result<std::vector<std::int64_t>> int64_values_from_proto(const onnx::TensorProto& proto, const std::string& base_dir,
                                                          const std::string& what);

// A serialized TensorProto file (the input_0.pb / output_0.pb files of ONNX's test data sets): the tensor,
// converted as tensor_from_proto does, and the name it carries (may be empty). External data is read
// relative to the file's folder. A truncated or non-protobuf file is an error naming the file.
struct TensorFile {
  std::string name;
  HostTensor tensor;
};
Result<TensorFile> read_tensor_pb_file(const std::string& path);

}  // namespace vkfuse
