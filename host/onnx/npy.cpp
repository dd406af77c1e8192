// .npy decoding and encoding. The header is a Python dict literal; rather than a general Python parser
// this reads exactly the grammar numpy writes (and a little more: either quote style, a missing
// trailing comma, Python 2's "3L" integers), and names the column of anything else.
#include "host/onnx/npy.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>

#include "host/checked_math.h"

namespace vkfuse {
namespace {

// HostTensor bytes are little-endian in memory; the .npy data we accept and write are too.
static_assert(std::endian::native == std::endian::little, "vkfuse's tensor files assume a little-endian host");

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicSize = 6;
constexpr std::size_t kAlign = 64;  // numpy >= 1.14 aligns the data to 64 bytes

// What an element of the file is and what it becomes.
enum class NpyType { kF32, kF16, kI64, kI32, kI16, kI8, kU8, kBool };

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  Shape shape;
};

Status header_error(const std::string& what, const std::string& problem) {
  return make_error(ErrorCode::kInvalidArgument, what + ": bad .npy header: " + problem);
}

// A cursor over the header dict.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& what) : text_(text), what_(what) {}

  Result<NpyHeader> parse() {
    NpyHeader header;
    bool have_descr = false, have_order = false, have_shape = false;
    skip_space();
    VKFUSE_TRY(expect('{'));
    for (;;) {
      skip_space();
      if (peek() == '}') break;
      VKFUSE_ASSIGN_OR_RETURN(std::string key, parse_string());
      skip_space();
      VKFUSE_TRY(expect(':'));
      skip_space();
      if (key == "descr") {
        VKFUSE_ASSIGN_OR_RETURN(header.descr, parse_string());
        have_descr = true;
      } else if (key == "fortran_order") {
        VKFUSE_ASSIGN_OR_RETURN(header.fortran_order, parse_bool());
        have_order = true;
      } else if (key == "shape") {
        VKFUSE_ASSIGN_OR_RETURN(header.shape, parse_shape());
        have_shape = true;
      } else {
        return header_error(what_, "unexpected key '" + key + "'");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') return error("expected ',' or '}'");
    }
    ++pos_;
    skip_space();
    if (pos_ != text_.size()) return error("unexpected text after the dict");
    if (!have_descr) return header_error(what_, "no 'descr' key");
    if (!have_order) return header_error(what_, "no 'fortran_order' key");
    if (!have_shape) return header_error(what_, "no 'shape' key");
    return header;
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  Status error(const std::string& problem) const {
    std::string_view shown = text_;
    while (!shown.empty() && (shown.back() == ' ' || shown.back() == '\n')) shown.remove_suffix(1);
    return header_error(what_, problem + " at column " + std::to_string(pos_ + 1) + " of \"" + std::string(shown) + "\"");
  }
  Status expect(char c) {
    if (peek() != c) return error(std::string("expected '") + c + "'");
    ++pos_;
    return {};
  }

  Result<std::string> parse_string() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') return error("expected a quoted string");
    const std::size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) return error("unterminated string");
    std::string value(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return value;
  }

  Result<bool> parse_bool() {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    return error("expected True or False");
  }

  // "()", "(5,)", "(2, 3)", also "(2, 3,)", "(5)" and "(2L, 3L)".
  Result<Shape> parse_shape() {
    VKFUSE_TRY(expect('('));
    Shape shape;
    for (;;) {
      skip_space();
      if (peek() == ')') break;
      const std::size_t start = pos_;
      if (peek() == '-') return error("negative dimension");
      if (peek() < '0' || peek() > '9') return error("expected a dimension");
      std::int64_t dim = 0;
      while (peek() >= '0' && peek() <= '9') {
        const int digit = peek() - '0';
        if (dim > (std::numeric_limits<std::int64_t>::max() - digit) / 10) {
          pos_ = start;
          return error("dimension too large");
        }
        dim = dim * 10 + digit;
        ++pos_;
      }
      if (peek() == 'L') ++pos_;
      shape.push_back(dim);
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != ')') return error("expected ',' or ')' in the shape");
    }
    ++pos_;
    return shape;
  }

  std::string_view text_;
  const std::string& what_;
  std::size_t pos_ = 0;
};

struct TypeInfo {
  NpyType type;
  DType dtype;
  std::size_t item_size;
};

Result<TypeInfo> type_of(const std::string& descr, const std::string& what) {
  static constexpr std::string_view kReads = "float32, float16, int64, int32, int16, int8, uint8 and bool";
  if (descr.size() >= 2 && descr[0] == '>' && descr.substr(1) != "u1" && descr.substr(1) != "b1" &&
      descr.substr(1) != "i1")
    return make_error(ErrorCode::kUnsupported, what + ": big-endian data ('" + descr +
                                                   "') is not supported; re-save it little-endian, e.g. "
                                                   "np.save(path, a.astype(a.dtype.newbyteorder('<')))");
  // One-byte types have no byte order: numpy writes '|', other writers '<' or '>'.
  std::string_view body = descr;
  if (!body.empty() && (body[0] == '<' || body[0] == '|' || body[0] == '>' || body[0] == '=')) body.remove_prefix(1);
  const bool little = !descr.empty() && (descr[0] == '<' || descr[0] == '|');
  if (body == "b1") return TypeInfo{NpyType::kBool, DType::kBool, 1};
  if (body == "u1") return TypeInfo{NpyType::kU8, DType::kI32, 1};
  if (body == "i1") return TypeInfo{NpyType::kI8, DType::kI32, 1};
  if (little && body == "f4") return TypeInfo{NpyType::kF32, DType::kF32, 4};
  if (little && body == "f2") return TypeInfo{NpyType::kF16, DType::kF16, 2};
  if (little && body == "i8") return TypeInfo{NpyType::kI64, DType::kI32, 8};
  if (little && body == "i4") return TypeInfo{NpyType::kI32, DType::kI32, 4};
  if (little && body == "i2") return TypeInfo{NpyType::kI16, DType::kI32, 2};
  std::string hint;
  if (body == "f8") hint = " (float64: save it with a.astype(np.float32))";
  return make_error(ErrorCode::kUnsupported,
                    what + ": dtype '" + descr + "' is not supported" + hint + "; vkfuse reads " + std::string(kReads));
}

// [1,2] for flat index 5 of [2,3].
std::string index_to_string(std::int64_t flat, const Shape& shape) {
  Shape index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] > 0 ? flat % shape[d] : 0;
    flat = shape[d] > 0 ? flat / shape[d] : 0;
  }
  return shape_to_string(index);
}

std::uint32_t read_le(const std::byte* p, std::size_t bytes) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < bytes; ++i) value |= static_cast<std::uint32_t>(std::to_integer<std::uint8_t>(p[i])) << (8 * i);
  return value;
}

std::string shape_literal(const Shape& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

const char* descr_of(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "<f4";
    case DType::kF16: return "<f2";
    case DType::kI32: return "<i4";
    case DType::kBool: return "|b1";
    case DType::kU8: return "|u1";  // read back as i32, like every integer file (ONNX models take those)
  }
  return "";
}

}  // namespace

Result<HostTensor> decode_npy(std::span<const std::byte> file, const std::string& what) {
  if (file.size() < kMagicSize || std::memcmp(file.data(), kMagic, kMagicSize) != 0)
    return make_error(ErrorCode::kInvalidArgument, what + ": not a .npy file (it does not start with \\x93NUMPY)");
  if (file.size() < kMagicSize + 2)
    return make_error(ErrorCode::kInvalidArgument, what + ": truncated .npy file (" + std::to_string(file.size()) + " bytes)");
  const int major = std::to_integer<int>(file[kMagicSize]), minor = std::to_integer<int>(file[kMagicSize + 1]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    return make_error(ErrorCode::kUnsupported, what + ": .npy format version " + std::to_string(major) + "." +
                                                   std::to_string(minor) + " is not supported (1.0, 2.0 and 3.0 are)");
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  const std::size_t prefix = kMagicSize + 2 + length_bytes;
  if (file.size() < prefix)
    return make_error(ErrorCode::kInvalidArgument, what + ": truncated .npy file (" + std::to_string(file.size()) + " bytes)");
  const std::size_t header_size = read_le(file.data() + kMagicSize + 2, length_bytes);
  if (file.size() - prefix < header_size)
    return make_error(ErrorCode::kInvalidArgument, what + ": truncated .npy header (" + std::to_string(header_size) +
                                                       " bytes announced, " + std::to_string(file.size() - prefix) +
                                                       " in the file)");
  const std::string_view text(reinterpret_cast<const char*>(file.data() + prefix), header_size);
  // Version 1.0 and 2.0 headers are latin-1, 3.0 is UTF-8: either way the keys and values we accept
  // are ASCII, and a NUL byte can only mean a damaged file.
  if (text.find('\0') != std::string_view::npos) return header_error(what, "it contains a NUL byte");
  VKFUSE_ASSIGN_OR_RETURN(NpyHeader header, HeaderParser(text, what).parse());
  VKFUSE_ASSIGN_OR_RETURN(TypeInfo type, type_of(header.descr, what));
  if (header.fortran_order && header.shape.size() > 1)
    return make_error(ErrorCode::kUnsupported, what + ": fortran_order is True for shape " + shape_to_string(header.shape) +
                                                   "; vkfuse reads C order (re-save it with np.ascontiguousarray(a))");

  // Element count and bytes, checked: the data must fit in the file anyway.
  const std::optional<std::int64_t> count = checked_numel(header.shape);
  const std::optional<std::uint64_t> bytes = count ? checked_bytes(*count, 8) : std::nullopt;  // 8: the widest item
  if (!bytes)
    return make_error(ErrorCode::kInvalidArgument, what + ": shape " + shape_to_string(header.shape) + " is too large");
  const auto numel = static_cast<std::uint64_t>(*count);
  const std::size_t data_bytes = file.size() - prefix - header_size;
  const std::uint64_t want_bytes = numel * type.item_size;
  if (data_bytes != want_bytes)
    return make_error(ErrorCode::kInvalidArgument,
                      what + ": the data holds " + std::to_string(data_bytes) + " bytes, but shape " +
                          shape_to_string(header.shape) + " of '" + header.descr + "' needs " + std::to_string(want_bytes) +
                          (data_bytes < want_bytes ? " (truncated file?)" : ""));

  const std::byte* data = file.data() + prefix + header_size;
  HostTensor tensor{header.shape, type.dtype, std::vector<std::byte>(numel * dtype_size(type.dtype))};
  std::byte* out = tensor.bytes.data();
  switch (type.type) {
    case NpyType::kF32:
    case NpyType::kF16:
    case NpyType::kI32:
      if (numel > 0) std::memcpy(out, data, want_bytes);
      break;
    case NpyType::kBool:
      for (std::uint64_t i = 0; i < numel; ++i) out[i] = data[i] != std::byte{0} ? std::byte{1} : std::byte{0};
      break;
    case NpyType::kU8:
    case NpyType::kI8:
    case NpyType::kI16:
    case NpyType::kI64:
      for (std::uint64_t i = 0; i < numel; ++i) {
        std::int64_t wide = 0;
        if (type.type == NpyType::kU8) {
          wide = std::to_integer<std::uint8_t>(data[i]);
        } else if (type.type == NpyType::kI8) {
          wide = std::to_integer<std::int8_t>(data[i]);
        } else if (type.type == NpyType::kI16) {
          std::int16_t v = 0;
          std::memcpy(&v, data + 2 * i, 2);
          wide = v;
        } else {
          std::memcpy(&wide, data + 8 * i, 8);
          if (wide < std::numeric_limits<std::int32_t>::min() || wide > std::numeric_limits<std::int32_t>::max())
            return make_error(ErrorCode::kInvalidArgument,
                              what + ": int64 value " + std::to_string(wide) + " at index " +
                                  index_to_string(static_cast<std::int64_t>(i), header.shape) +
                                  " does not fit in int32 (vkfuse computes integers as int32)");
        }
        const auto narrow = static_cast<std::int32_t>(wide);
        std::memcpy(out + 4 * i, &narrow, 4);
      }
      break;
  }
  return tensor;
}

Result<std::vector<std::byte>> encode_npy(const HostTensor& tensor) {
  for (std::int64_t dim : tensor.shape)
    if (dim < 0)
      return make_error(ErrorCode::kInvalidArgument, "write_npy: negative dimension in shape " + shape_to_string(tensor.shape));
  VKFUSE_ASSIGN_OR_RETURN(const std::uint64_t want, bytes_or_error(tensor.shape, dtype_size(tensor.dtype), "write_npy: shape"));
  if (tensor.bytes.size() != want)
    return make_error(ErrorCode::kInvalidArgument, "write_npy: the tensor holds " + std::to_string(tensor.bytes.size()) +
                                                       " bytes, but " + dtype_name(tensor.dtype) +
                                                       shape_to_string(tensor.shape) + " needs " + std::to_string(want));
  std::string header = std::string("{'descr': '") + descr_of(tensor.dtype) +
                       "', 'fortran_order': False, 'shape': " + shape_literal(tensor.shape) + ", }";
  // numpy's layout: spaces, then '\n', so that the data starts on a multiple of 64 (numpy adds a full
  // 64 spaces when it already is one; matching that keeps our files byte-identical to np.save's).
  auto padded_size = [&](std::size_t length_bytes) {
    const std::size_t used = kMagicSize + 2 + length_bytes + header.size() + 1;
    return header.size() + 1 + (kAlign - used % kAlign);
  };
  int major = 1;
  std::size_t length_bytes = 2;
  if (padded_size(2) > 0xffff) {
    major = 2;
    length_bytes = 4;
  }
  const std::size_t header_size = padded_size(length_bytes);
  header.resize(header_size - 1, ' ');
  header += '\n';

  std::vector<std::byte> file(kMagicSize + 2 + length_bytes + header_size + tensor.bytes.size());
  std::memcpy(file.data(), kMagic, kMagicSize);
  file[kMagicSize] = std::byte(major);
  file[kMagicSize + 1] = std::byte{0};
  for (std::size_t i = 0; i < length_bytes; ++i) file[kMagicSize + 2 + i] = std::byte((header_size >> (8 * i)) & 0xff);
  std::memcpy(file.data() + kMagicSize + 2 + length_bytes, header.data(), header_size);
  if (!tensor.bytes.empty())
    std::memcpy(file.data() + kMagicSize + 2 + length_bytes + header_size, tensor.bytes.data(), tensor.bytes.size());
  return file;
}

}  // namespace vkfuse
