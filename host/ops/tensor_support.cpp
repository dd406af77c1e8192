#include "host/ops/tensor_support.h"

#include <cmath>
#include <sstream>

#include "host/checked_math.h"

namespace vkfuse {

namespace {

// "3", "-1.5": attribute values as a user wrote them.
std::string format_number(float value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace

Result<int> int_attr(const OpAttrs& attrs, std::size_t index, const char* name, int lo, int hi, const char* meaning) {
  const float value = attrs.scalars[index];
  if (std::isfinite(value) && value == std::floor(value) && value >= static_cast<float>(lo) &&
      value <= static_cast<float>(hi))
    return static_cast<int>(value);
  std::string message = std::string("attribute '") + name + "' = " + format_number(value) + " is not ";
  message += lo == hi ? std::to_string(lo) : "one of " + std::to_string(lo) + ".." + std::to_string(hi);
  if (meaning) message += std::string(" (") + meaning + ")";
  return make_error(ErrorCode::kInvalidArgument, message);
}

Result<int> axis_attr(const OpAttrs& attrs, std::size_t index, const char* name, std::size_t rank,
                      const std::string& tensor) {
  const float value = attrs.scalars[index];
  const int r = static_cast<int>(rank);
  if (rank == 0)
    return make_error(ErrorCode::kInvalidArgument, std::string("attribute '") + name + "': " + tensor +
                                                       " is a scalar and has no axis");
  if (std::isfinite(value) && value == std::floor(value) && value >= static_cast<float>(-r) &&
      value < static_cast<float>(r)) {
    const int axis = static_cast<int>(value);
    return axis < 0 ? axis + r : axis;
  }
  return make_error(ErrorCode::kInvalidArgument, std::string("attribute '") + name + "' = " + format_number(value) +
                                                     " is out of range for " + tensor + ": expected " +
                                                     std::to_string(-r) + ".." + std::to_string(r - 1));
}

Result<std::vector<std::int64_t>> required_list(const OpAttrs& attrs, const char* name) {
  if (!attrs.has_list(name))
    return make_error(ErrorCode::kInvalidArgument, std::string("the list attribute '") + name + "' is required");
  return attrs.list(name);
}

std::string describe_input(std::span<const TensorInfo> inputs, std::size_t index) {
  return "input " + std::to_string(index) + " " + shape_to_string(inputs[index].shape);
}

std::int64_t dims_product(const Shape& shape, std::size_t begin, std::size_t end) {
  std::int64_t product = 1;
  for (std::size_t d = begin; d < end; ++d) product *= shape[d];
  return product;
}

std::vector<std::int64_t> row_major_strides(const Shape& shape) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  return strides;
}

std::vector<std::int64_t> unravel_index(std::int64_t index, const Shape& shape) {
  std::vector<std::int64_t> coords(shape.size(), 0);
  for (std::size_t d = shape.size(); d-- > 0;) {
    coords[d] = index % shape[d];
    index /= shape[d];
  }
  return coords;
}

std::int64_t ravel_index(std::span<const std::int64_t> coords, const Shape& shape) {
  std::int64_t index = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) index = index * shape[d] + coords[d];
  return index;
}

namespace {

std::string glsl_array(std::span<const std::int64_t> values, bool is_unsigned) {
  std::string out = is_unsigned ? "uint[](" : "int[](";
  for (std::size_t k = 0; k < values.size(); ++k)
    out += (k ? ", " : "") + std::to_string(values[k]) + (is_unsigned ? "u" : "");
  return out + ")";
}

}  // namespace

std::string glsl_uint_array(std::span<const std::int64_t> values) { return glsl_array(values, true); }
std::string glsl_int_array(std::span<const std::int64_t> values) { return glsl_array(values, false); }

Status require_32bit_indexing(const Shape& shape, const std::string& tensor) {
  constexpr std::int64_t kLimit = std::int64_t{1} << 31;
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t numel, numel_or_error(shape, tensor));
  if (numel < kLimit) return {};
  return make_error(ErrorCode::kUnsupported, tensor + " " + shape_to_string(shape) + " has " + std::to_string(numel) +
                                                 " elements; kernel ops index below 2^31");
}

}  // namespace vkfuse
