// TensorProto decoding. Every storage form is first brought to one representation, the packed
// little-endian bytes of the tensor's own element type, and one decoder turns those into vkfuse
// dtypes or int64 values. External data is bounds-checked against the file before anything is
// allocated, so a corrupt length cannot make us allocate gigabytes.
#include "host/onnx/tensor_proto.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <limits>

#include "host/checked_math.h"
#include "host/onnx/external_data.h"
#include "onnx.pb.h"

namespace vkfuse {
namespace {

static_assert(std::endian::native == std::endian::little, "TensorProto raw data is little-endian");

namespace fs = std::filesystem;
using onnx::TensorProto;

Status invalid(const std::string& what, const std::string& message) {
  return make_error(ErrorCode::kInvalidArgument, what + ": " + message);
}

// Bytes per element in raw_data (0: a type vkfuse cannot read).
std::size_t element_size(int type) {
  switch (type) {
    case TensorProto::FLOAT: case TensorProto::INT32: case TensorProto::UINT32: return 4;
    case TensorProto::DOUBLE: case TensorProto::INT64: case TensorProto::UINT64: return 8;
    case TensorProto::FLOAT16: case TensorProto::BFLOAT16: case TensorProto::INT16: case TensorProto::UINT16: return 2;
    case TensorProto::INT8: case TensorProto::UINT8: case TensorProto::BOOL: return 1;
    default: return 0;
  }
}

template <class T>
T load(const std::byte* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

template <class T>
void append(std::vector<std::byte>& bytes, T value) {
  const std::size_t at = bytes.size();
  bytes.resize(at + sizeof(T));
  std::memcpy(bytes.data() + at, &value, sizeof(T));
}

// The typed-field values packed as the element type's little-endian bytes.
Result<std::vector<std::byte>> typed_field_bytes(const TensorProto& proto, const std::string& what, std::uint64_t numel) {
  const int type = proto.data_type();
  std::size_t count = 0;
  std::vector<std::byte> bytes;
  switch (type) {
    case TensorProto::FLOAT:
      count = static_cast<std::size_t>(proto.float_data_size());
      if (count == numel) for (float v : proto.float_data()) append(bytes, v);
      break;
    case TensorProto::DOUBLE:
      count = static_cast<std::size_t>(proto.double_data_size());
      if (count == numel) for (double v : proto.double_data()) append(bytes, v);
      break;
    case TensorProto::INT64:
      count = static_cast<std::size_t>(proto.int64_data_size());
      if (count == numel) for (std::int64_t v : proto.int64_data()) append(bytes, v);
      break;
    case TensorProto::UINT32: case TensorProto::UINT64:
      count = static_cast<std::size_t>(proto.uint64_data_size());
      if (count == numel)
        for (std::uint64_t v : proto.uint64_data()) {
          if (type == TensorProto::UINT32) append(bytes, static_cast<std::uint32_t>(v));
          else append(bytes, v);
        }
      break;
    default:  // INT32, INT16, INT8, UINT16, UINT8, BOOL, FLOAT16, BFLOAT16: int32_data
      count = static_cast<std::size_t>(proto.int32_data_size());
      if (count == numel)
        for (std::int32_t v : proto.int32_data()) {
          switch (element_size(type)) {
            case 1: append(bytes, static_cast<std::uint8_t>(v)); break;
            case 2: append(bytes, static_cast<std::uint16_t>(v)); break;
            default: append(bytes, v); break;
          }
        }
      break;
  }
  if (count != numel)
    return invalid(what, "holds " + std::to_string(count) + " values for " + std::to_string(numel) + " elements");
  return bytes;
}

// The packed element bytes, whatever field holds them.
Result<std::vector<std::byte>> element_bytes(const TensorProto& proto, const std::string& base_dir, const std::string& what,
                                             std::uint64_t numel) {
  const std::uint64_t expected = numel * element_size(proto.data_type());  // shape_from_proto bounded it
  if (proto.data_location() == TensorProto::EXTERNAL) return read_external_data(proto, base_dir, what, expected);
  VKFUSE_ASSIGN_OR_RETURN(const std::optional<std::string_view> raw, raw_data_bytes(proto, what));
  if (raw) {
    const auto* first = reinterpret_cast<const std::byte*>(raw->data());
    return std::vector<std::byte>(first, first + raw->size());  // one pass: no zero-fill before the copy
  }
  return typed_field_bytes(proto, what, numel);
}

Result<std::int64_t> shape_numel_checked(const TensorProto& proto, const std::string& what) {
  VKFUSE_ASSIGN_OR_RETURN(const Shape shape, shape_from_proto(proto, what));
  return shape_numel(shape);
}

Status check_type(const TensorProto& proto, const std::string& what) {
  if (proto.data_type() == TensorProto::UNDEFINED) return invalid(what, "has no data_type");
  if (element_size(proto.data_type()) == 0)
    return make_error(ErrorCode::kUnsupported, what + " is " + onnx_data_type_name(proto.data_type()) +
                                                   "; vkfuse reads float, integer and bool tensors");
  return {};
}

// Element i of packed integer bytes as int64 (UINT64 past INT64_MAX fails).
bool integer_at(const std::byte* p, int type, std::int64_t& out) {
  switch (type) {
    case TensorProto::INT8: out = load<std::int8_t>(p); return true;
    case TensorProto::UINT8: out = load<std::uint8_t>(p); return true;
    case TensorProto::INT16: out = load<std::int16_t>(p); return true;
    case TensorProto::UINT16: out = load<std::uint16_t>(p); return true;
    case TensorProto::INT32: out = load<std::int32_t>(p); return true;
    case TensorProto::UINT32: out = load<std::uint32_t>(p); return true;
    case TensorProto::INT64: out = load<std::int64_t>(p); return true;
    case TensorProto::BOOL: out = load<std::uint8_t>(p) != 0 ? 1 : 0; return true;
    case TensorProto::UINT64: {
      const auto v = load<std::uint64_t>(p);
      out = static_cast<std::int64_t>(v);
      return v <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    }
    default: return false;
  }
}

}  // namespace

std::string onnx_data_type_name(int data_type) {
  if (TensorProto::DataType_IsValid(data_type))
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(data_type));
  return "type " + std::to_string(data_type);
}

bool is_onnx_integer_type(int data_type) {
  switch (data_type) {
    case TensorProto::INT8: case TensorProto::UINT8: case TensorProto::INT16: case TensorProto::UINT16:
    case TensorProto::INT32: case TensorProto::UINT32: case TensorProto::INT64: case TensorProto::UINT64:
    case TensorProto::BOOL: return true;
    default: return false;
  }
}

Result<DType> dtype_for_onnx_type(int data_type, const std::string& what) {
  switch (data_type) {
    case TensorProto::FLOAT: case TensorProto::DOUBLE: case TensorProto::BFLOAT16: return DType::kF32;
    case TensorProto::FLOAT16: return DType::kF16;
    case TensorProto::BOOL: return DType::kBool;
    default:
      if (is_onnx_integer_type(data_type)) return DType::kI32;
      return make_error(ErrorCode::kUnsupported, what + " is " + onnx_data_type_name(data_type) +
                                                     "; vkfuse supports float, float16, integer and bool tensors");
  }
}

Result<Shape> shape_from_proto(const TensorProto& proto, const std::string& what) {
  Shape shape(proto.dims().begin(), proto.dims().end());
  for (std::int64_t d : shape)
    if (d < 0) return invalid(what, "has a negative dimension in " + shape_to_string(shape));
  // Bytes are bounded well below 2^63 so that numel * size never overflows downstream.
  const std::optional<std::int64_t> numel = checked_numel(shape);
  const std::optional<std::uint64_t> bytes =
      numel ? checked_bytes(*numel, std::max<std::size_t>(element_size(proto.data_type()), 1)) : std::nullopt;
  if (!bytes || *bytes > (std::uint64_t{1} << 60))
    return invalid(what, "dimensions " + shape_to_string(shape) + " overflow the element count");
  return shape;
}

Result<std::optional<std::string_view>> raw_data_bytes(const TensorProto& proto, const std::string& what) {
  if (proto.data_location() == TensorProto::EXTERNAL || !proto.has_raw_data()) return std::optional<std::string_view>{};
  VKFUSE_ASSIGN_OR_RETURN(const Shape shape, shape_from_proto(proto, what));
  const std::uint64_t expected = static_cast<std::uint64_t>(shape_numel(shape)) * element_size(proto.data_type());  // bounded
  const std::string& raw = proto.raw_data();
  if (raw.size() != expected)
    return invalid(what, "raw_data has " + std::to_string(raw.size()) + " bytes; its shape and type need " + std::to_string(expected));
  return std::optional<std::string_view>{raw};
}

Result<HostTensor> tensor_from_proto(const TensorProto& proto, const std::string& base_dir, const std::string& what) {
  VKFUSE_TRY(check_type(proto, what));
  VKFUSE_ASSIGN_OR_RETURN(const DType dtype, dtype_for_onnx_type(proto.data_type(), what));
  VKFUSE_ASSIGN_OR_RETURN(Shape shape, shape_from_proto(proto, what));
  const auto numel = static_cast<std::uint64_t>(shape_numel(shape));
  VKFUSE_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, element_bytes(proto, base_dir, what, numel));
  HostTensor out{std::move(shape), dtype, {}};
  const int type = proto.data_type();
  if (type == TensorProto::FLOAT || type == TensorProto::FLOAT16) {
    out.bytes = std::move(bytes);  // already f32 / f16 little-endian
    return out;
  }
  out.bytes.resize(static_cast<std::size_t>(numel) * dtype_size(dtype));
  const std::size_t in_size = element_size(type);
  for (std::size_t i = 0; i < numel; ++i) {
    const std::byte* p = bytes.data() + i * in_size;
    std::byte* q = out.bytes.data() + i * dtype_size(dtype);
    if (type == TensorProto::DOUBLE) {
      const auto v = static_cast<float>(load<double>(p));
      std::memcpy(q, &v, 4);
    } else if (type == TensorProto::BFLOAT16) {
      const std::uint32_t bits = std::uint32_t{load<std::uint16_t>(p)} << 16;
      std::memcpy(q, &bits, 4);
    } else if (type == TensorProto::BOOL) {
      *q = load<std::uint8_t>(p) != 0 ? std::byte{1} : std::byte{0};
    } else {
      std::int64_t v = 0;
      const bool fits = integer_at(p, type, v);
      if (!fits || v < std::numeric_limits<std::int32_t>::min() || v > std::numeric_limits<std::int32_t>::max())
        return invalid(what, "element " + std::to_string(i) + " (" +
                                 (fits ? std::to_string(v) : std::to_string(load<std::uint64_t>(p))) +
                                 ") does not fit in int32, which vkfuse uses for " + onnx_data_type_name(type));
      const auto narrow = static_cast<std::int32_t>(v);
      std::memcpy(q, &narrow, 4);
    }
  }
  return out;
}

Result<std::vector<std::int64_t>> int64_values_from_proto(const TensorProto& proto, const std::string& base_dir,
                                                          const std::string& what) {
  VKFUSE_TRY(check_type(proto, what));
  if (!is_onnx_integer_type(proto.data_type()))
    return invalid(what, "is " + onnx_data_type_name(proto.data_type()) + "; an integer tensor was expected");
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t numel, shape_numel_checked(proto, what));
  VKFUSE_ASSIGN_OR_RETURN(const std::vector<std::byte> bytes,
                          element_bytes(proto, base_dir, what, static_cast<std::uint64_t>(numel)));
  std::vector<std::int64_t> values(static_cast<std::size_t>(numel));
  const std::size_t size = element_size(proto.data_type());
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!integer_at(bytes.data() + i * size, proto.data_type(), values[i]))
      return invalid(what, "element " + std::to_string(i) + " (" + std::to_string(load<std::uint64_t>(bytes.data() + i * size)) +
                               ") does not fit in int64");
  return values;
}

Result<TensorFile> read_tensor_pb_file(const std::string& path) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) return make_error(ErrorCode::kNotFound, "tensor file '" + path + "' cannot be opened: " + ec.message());
  if (size > static_cast<std::uintmax_t>(std::numeric_limits<int>::max()))
    return make_error(ErrorCode::kUnsupported, "tensor file '" + path + "' is larger than protobuf's 2 GiB limit");
  std::ifstream file(path, std::ios::binary);
  std::string bytes(static_cast<std::size_t>(size), '\0');
  if (!file || !file.read(bytes.data(), static_cast<std::streamsize>(size)))
    return make_error(ErrorCode::kIo, "tensor file '" + path + "' cannot be read");
  TensorProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return make_error(ErrorCode::kInvalidArgument, "tensor file '" + path + "' is not a serialized ONNX TensorProto (truncated or corrupt)");
  if (proto.dims_size() == 0 && proto.data_type() == TensorProto::UNDEFINED)
    return make_error(ErrorCode::kInvalidArgument, "tensor file '" + path + "' is not a serialized ONNX TensorProto (no data type)");
  const std::string what = "tensor file '" + path + "'" + (proto.name().empty() ? "" : " ('" + proto.name() + "')");
  fs::path folder = fs::path(path).parent_path();
  if (folder.empty()) folder = ".";
  VKFUSE_ASSIGN_OR_RETURN(HostTensor tensor, tensor_from_proto(proto, folder.string(), what));
  return TensorFile{proto.name(), std::move(tensor)};
}

}  // namespace vkfuse
