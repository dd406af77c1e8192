#include <vkfuse/types.hpp>

namespace vkfuse {

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "f32";
    case DType::kF16: return "f16";
    case DType::kI32: return "i32";
    case DType::kBool: return "bool";
    case DType::kU8: return "u8";
  }
  return "unknown";  // only reachable through a cast of an out-of-range value
}

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kF32: return 4;
    case DType::kF16: return 2;
    case DType::kI32: return 4;
    case DType::kBool: return 1;
    case DType::kU8: return 1;
  }
  return 0;
}

std::int64_t shape_numel(const Shape& shape) {
  std::int64_t numel = 1;
  for (std::int64_t dim : shape) numel *= dim;
  return numel;
}

std::string shape_to_string(const Shape& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ',';
    text += std::to_string(shape[i]);
  }
  text += ']';
  return text;
}

}  // namespace vkfuse
