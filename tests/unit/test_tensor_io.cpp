// Tensor files (vkfuse/tensor_io.hpp): .npy round trips for every dtype and shape, files written by
// numpy (tests/data/tensors, made by tests/data/make_tensor_fixtures.py), hand-written headers of each
// format version, and every refusal with its exact message; ONNX TensorProto .pb files written by the
// onnx package and by protobuf here (their decoding is host/onnx/tensor_proto's; these tests check that
// read_tensor_file reaches it and that its errors name the file).
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <vkfuse/tensor_io.hpp>

#include "host/half.h"
#include "host/onnx/npy.h"
#include "onnx.pb.h"
#include "support/test_env.h"

namespace vkfuse {
namespace {

namespace fs = std::filesystem;

const std::string kData = std::string(VKFUSE_TEST_DATA_DIR) + "/tensors/";

std::vector<std::byte> to_bytes(const std::string& text) {
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  return bytes;
}

std::vector<std::byte> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in, "cannot open " << path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return to_bytes(text);
}

void write_bytes(const std::string& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out);
}

// A .npy file by hand: magic, version, little-endian header length (2 bytes for 1.0, 4 otherwise),
// the header text as given (no padding added) and the data.
std::vector<std::byte> npy_file(int major, const std::string& header, const std::vector<std::byte>& data) {
  std::string file = "\x93NUMPY";
  file += static_cast<char>(major);
  file += '\0';
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  for (std::size_t i = 0; i < length_bytes; ++i) file += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  file += header;
  std::vector<std::byte> bytes = to_bytes(file);
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

template <class T>
std::vector<std::byte> raw(const std::vector<T>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <class T>
std::vector<T> elements(const HostTensor& tensor) {
  REQUIRE(tensor.bytes.size() % sizeof(T) == 0);
  std::vector<T> values(tensor.bytes.size() / sizeof(T));
  if (!values.empty()) std::memcpy(values.data(), tensor.bytes.data(), tensor.bytes.size());
  return values;
}

HostTensor read_ok(const std::string& path) {
  auto tensor = read_tensor_file(path);
  REQUIRE_MESSAGE(tensor.ok(), tensor.status().to_string());
  return std::move(tensor).value();
}

std::string read_error(const std::string& path) {
  auto tensor = read_tensor_file(path);
  REQUIRE_FALSE(tensor.ok());
  return tensor.status().message();
}

HostTensor decode_ok(const std::vector<std::byte>& file) {
  auto tensor = decode_npy(file, "t.npy");
  REQUIRE_MESSAGE(tensor.ok(), tensor.status().to_string());
  return std::move(tensor).value();
}

std::string decode_error(const std::vector<std::byte>& file) {
  auto tensor = decode_npy(file, "t.npy");
  REQUIRE_FALSE(tensor.ok());
  return tensor.status().message();
}

// A tensor of `dtype` with distinct, dtype-exact element values.
HostTensor sample(DType dtype, Shape shape) {
  const std::int64_t n = shape_numel(shape);
  std::vector<float> values;
  for (std::int64_t i = 0; i < n; ++i)
    values.push_back(dtype == DType::kBool ? static_cast<float>(i % 3 == 1) : static_cast<float>(i * 3 - 7) * 0.25f);
  if (dtype == DType::kI32)
    for (float& v : values) v = static_cast<float>(static_cast<int>(v * 4.0f) * 1000 - 5);
  return HostTensor::from_floats(std::move(shape), values, dtype);
}

}  // namespace

TEST_CASE("write_npy then read_tensor_file gives the tensor back, for every dtype and shape") {
  const testing::ScratchDir dir("vkfuse_tensor_io_test");
  const std::vector<Shape> shapes = {{}, {1}, {3}, {7, 13}, {2, 1, 3, 1}, {0, 3}, {1, 1, 1, 1, 1, 1, 1, 2}, {127}};
  for (DType dtype : {DType::kF32, DType::kF16, DType::kI32, DType::kBool})
    for (const Shape& shape : shapes) {
      CAPTURE(dtype_name(dtype));
      CAPTURE(shape_to_string(shape));
      const HostTensor tensor = sample(dtype, shape);
      const std::string path = dir.file("t.npy");
      REQUIRE(write_npy(path, tensor).ok());
      const HostTensor back = read_ok(path);
      CHECK(back.dtype == dtype);
      CHECK(back.shape == shape);
      CHECK(back.bytes == tensor.bytes);
      // numpy's alignment: the data starts on a multiple of 64 bytes.
      CHECK((read_bytes(path).size() - tensor.bytes.size()) % 64 == 0);
    }
}

TEST_CASE("write_npy writes what np.save writes, byte for byte") {
  const testing::ScratchDir dir("vkfuse_tensor_io_test");
  struct Case {
    const char* fixture;
    HostTensor tensor;
  };
  const Case cases[] = {
      {"f32_2x3.npy", HostTensor::from_floats({2, 3}, {-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f})},
      {"f16_5.npy", HostTensor::from_floats({5}, {0.0f, -1.5f, 65504.0f, 0.099975586f, -0.0f}, DType::kF16)},
      {"i32_scalar.npy", HostTensor::from_floats({}, {-42.0f}, DType::kI32)},
      {"bool_7.npy", HostTensor::from_floats({7}, {1, 0, 1, 1, 0, 0, 1}, DType::kBool)},
      {"f32_empty_0x3.npy", HostTensor{{0, 3}, DType::kF32, {}}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.fixture);
    REQUIRE(write_npy(dir.file("t.npy"), c.tensor).ok());
    CHECK(read_bytes(dir.file("t.npy")) == read_bytes(kData + c.fixture));
  }
}

TEST_CASE("read_tensor_file reads numpy's files of each dtype") {
  SUBCASE("float32") {
    const HostTensor t = read_ok(kData + "f32_2x3.npy");
    CHECK(t.dtype == DType::kF32);
    CHECK(t.shape == Shape{2, 3});
    CHECK(t.to_floats() == std::vector<float>{-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f});
  }
  SUBCASE("float16 keeps its bits") {
    const HostTensor t = read_ok(kData + "f16_5.npy");
    CHECK(t.dtype == DType::kF16);
    CHECK(t.shape == Shape{5});
    CHECK(elements<std::uint16_t>(t) == std::vector<std::uint16_t>{0x0000, 0xbe00, 0x7bff, 0x2e66, 0x8000});
  }
  SUBCASE("int64 becomes int32, extremes included") {
    const HostTensor t = read_ok(kData + "i64_2x2.npy");
    CHECK(t.dtype == DType::kI32);
    CHECK(t.shape == Shape{2, 2});
    CHECK(elements<std::int32_t>(t) == std::vector<std::int32_t>{INT32_MIN, INT32_MAX, 0, -7});
  }
  SUBCASE("int32 scalar of rank 0") {
    const HostTensor t = read_ok(kData + "i32_scalar.npy");
    CHECK(t.dtype == DType::kI32);
    CHECK(t.shape.empty());
    CHECK(elements<std::int32_t>(t) == std::vector<std::int32_t>{-42});
  }
  SUBCASE("bool") {
    const HostTensor t = read_ok(kData + "bool_7.npy");
    CHECK(t.dtype == DType::kBool);
    CHECK(t.to_floats() == std::vector<float>{1, 0, 1, 1, 0, 0, 1});
  }
  SUBCASE("uint8 and int16 become int32") {
    const HostTensor u8 = read_ok(kData + "u8_4.npy");
    CHECK(u8.dtype == DType::kI32);
    CHECK(elements<std::int32_t>(u8) == std::vector<std::int32_t>{0, 1, 200, 255});
    const HostTensor i16 = read_ok(kData + "i16_3.npy");
    CHECK(i16.dtype == DType::kI32);
    CHECK(elements<std::int32_t>(i16) == std::vector<std::int32_t>{-32768, 5, 32767});
  }
  SUBCASE("format versions 2.0 and 3.0") {
    for (const char* name : {"f32_3_v2.npy", "f32_3_v3.npy"}) {
      CAPTURE(name);
      const HostTensor t = read_ok(kData + name);
      CHECK(t.shape == Shape{3});
      CHECK(t.to_floats() == std::vector<float>{1.0f, 2.0f, 3.0f});
    }
  }
  SUBCASE("zero elements") {
    const HostTensor t = read_ok(kData + "f32_empty_0x3.npy");
    CHECK(t.shape == Shape{0, 3});
    CHECK(t.bytes.empty());
  }
}

TEST_CASE("hand-written .npy headers of each version and spelling") {
  const auto floats = raw(std::vector<float>{1.5f, -2.0f, 3.25f});
  SUBCASE("version 1.0, numpy's spelling without padding") {
    const HostTensor t = decode_ok(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n", floats));
    CHECK(t.shape == Shape{3});
    CHECK(t.to_floats() == std::vector<float>{1.5f, -2.0f, 3.25f});
  }
  SUBCASE("version 2.0 with a 4-byte length") {
    CHECK(decode_ok(npy_file(2, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }  \n", floats)).shape == Shape{3});
  }
  SUBCASE("version 3.0") {
    CHECK(decode_ok(npy_file(3, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }\n", floats)).shape ==
          Shape{1, 3});
  }
  SUBCASE("keys in another order, double quotes, no trailing comma, Python 2 longs") {
    const HostTensor t = decode_ok(npy_file(1, "{\"shape\": (3L,), \"fortran_order\": False, \"descr\": \"<f4\"}", floats));
    CHECK(t.shape == Shape{3});
    CHECK(decode_ok(npy_file(1, "{'descr':'<f4','fortran_order':False,'shape':(3)}", floats)).shape == Shape{3});
  }
  SUBCASE("scalar and one-element shapes") {
    CHECK(decode_ok(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }\n",
                             raw(std::vector<float>{7.0f})))
              .shape.empty());
    CHECK(decode_ok(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 3,), }\n", floats)).shape ==
          Shape{1, 1, 3});
  }
  SUBCASE("Fortran order of rank 0 and 1 is C order") {
    CHECK(decode_ok(npy_file(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }\n", floats)).shape == Shape{3});
    CHECK(decode_ok(npy_file(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (), }\n",
                             raw(std::vector<float>{7.0f})))
              .shape.empty());
  }
  SUBCASE("one-byte types with any byte-order mark; bool normalizes to 0/1") {
    const std::vector<std::byte> bytes = {std::byte{0}, std::byte{2}, std::byte{255}};
    const HostTensor b = decode_ok(npy_file(1, "{'descr': '<b1', 'fortran_order': False, 'shape': (3,), }", bytes));
    CHECK(b.dtype == DType::kBool);
    CHECK(b.bytes == std::vector<std::byte>{std::byte{0}, std::byte{1}, std::byte{1}});
    const HostTensor i8 = decode_ok(npy_file(1, "{'descr': '|i1', 'fortran_order': False, 'shape': (3,), }", bytes));
    CHECK(elements<std::int32_t>(i8) == std::vector<std::int32_t>{0, 2, -1});
    const HostTensor u8 = decode_ok(npy_file(1, "{'descr': '>u1', 'fortran_order': False, 'shape': (3,), }", bytes));
    CHECK(elements<std::int32_t>(u8) == std::vector<std::int32_t>{0, 2, 255});
  }
}

TEST_CASE("what numpy writes but vkfuse refuses: exact messages") {
  const std::string p = kData;
  CHECK(read_error(p + "bad_big_endian.npy") ==
        p + "bad_big_endian.npy: big-endian data ('>f4') is not supported; re-save it little-endian, e.g. "
            "np.save(path, a.astype(a.dtype.newbyteorder('<')))");
  CHECK(read_error(p + "bad_fortran_2x3.npy") ==
        p + "bad_fortran_2x3.npy: fortran_order is True for shape [2,3]; vkfuse reads C order (re-save it with "
            "np.ascontiguousarray(a))");
  CHECK(read_error(p + "bad_f64.npy") ==
        p + "bad_f64.npy: dtype '<f8' is not supported (float64: save it with a.astype(np.float32)); vkfuse reads "
            "float32, float16, int64, int32, int16, int8, uint8 and bool");
  CHECK(read_error(p + "bad_i64_overflow.npy") ==
        p + "bad_i64_overflow.npy: int64 value 2147483648 at index [1,1] does not fit in int32 (vkfuse computes "
            "integers as int32)");
  CHECK(read_tensor_file(p + "bad_big_endian.npy").status().code() == ErrorCode::kUnsupported);
}

TEST_CASE("damaged .npy files: exact messages, no crash") {
  const std::vector<std::byte> good = read_bytes(kData + "f32_2x3.npy");  // 128-byte header + 24 bytes
  REQUIRE(good.size() == 152);
  auto cut = [&](std::size_t size) { return std::vector<std::byte>(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(size)); };

  CHECK(decode_error({}) == "t.npy: not a .npy file (it does not start with \\x93NUMPY)");
  CHECK(decode_error(to_bytes("hello, world: this is not numpy")) ==
        "t.npy: not a .npy file (it does not start with \\x93NUMPY)");
  CHECK(decode_error(cut(7)) == "t.npy: truncated .npy file (7 bytes)");
  CHECK(decode_error(cut(9)) == "t.npy: truncated .npy file (9 bytes)");
  CHECK(decode_error(cut(60)) == "t.npy: truncated .npy header (118 bytes announced, 50 in the file)");
  CHECK(decode_error(cut(148)) ==
        "t.npy: the data holds 20 bytes, but shape [2,3] of '<f4' needs 24 (truncated file?)");
  std::vector<std::byte> longer = good;
  longer.push_back(std::byte{0});
  CHECK(decode_error(longer) == "t.npy: the data holds 25 bytes, but shape [2,3] of '<f4' needs 24");

  std::vector<std::byte> version = good;
  version[6] = std::byte{4};
  CHECK(decode_error(version) == "t.npy: .npy format version 4.0 is not supported (1.0, 2.0 and 3.0 are)");

  const auto floats = raw(std::vector<float>{1, 2, 3});
  CHECK(decode_error(npy_file(1, "{'descr': '<f4', 'fortran_order': False}", floats)) ==
        "t.npy: bad .npy header: no 'shape' key");
  CHECK(decode_error(npy_file(1, "{'descr': '<f4', 'shape': (3,)}", floats)) ==
        "t.npy: bad .npy header: no 'fortran_order' key");
  CHECK(decode_error(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'extra': 1}", floats)) ==
        "t.npy: bad .npy header: unexpected key 'extra'");
  CHECK(decode_error(npy_file(1, "{'descr': '<f4', 'fortran_order': false, 'shape': (3,)}", floats)) ==
        "t.npy: bad .npy header: expected True or False at column 35 of \"{'descr': '<f4', 'fortran_order': false, "
        "'shape': (3,)}\"");
  CHECK(decode_error(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-3,)}", floats)) ==
        "t.npy: bad .npy header: negative dimension at column 52 of \"{'descr': '<f4', 'fortran_order': False, "
        "'shape': (-3,)}\"");
  CHECK(decode_error(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': [3]}", floats)) ==
        "t.npy: bad .npy header: expected '(' at column 51 of \"{'descr': '<f4', 'fortran_order': False, 'shape': "
        "[3]}\"");
  CHECK(decode_error(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)", floats)) ==
        "t.npy: bad .npy header: expected ',' or '}' at column 55 of \"{'descr': '<f4', 'fortran_order': False, "
        "'shape': (3,)\"");
  CHECK(decode_error(npy_file(1, "{'descr': '<f4, 'fortran_order': False, 'shape': (3,)}", floats)) ==
        "t.npy: bad .npy header: expected ',' or '}' at column 18 of \"{'descr': '<f4, 'fortran_order': False, "
        "'shape': (3,)}\"");
  CHECK(decode_error(npy_file(1, "{'descr", floats)) == "t.npy: bad .npy header: unterminated string at column 2 of \"{'descr\"");
  CHECK(decode_error(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", floats)) ==
        "t.npy: bad .npy header: dimension too large at column 52 of \"{'descr': '<f4', 'fortran_order': False, "
        "'shape': (99999999999999999999,)}\"");
  CHECK(decode_error(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4)}",
                              floats)) == "t.npy: shape [4294967296,4294967296,4] is too large");
  CHECK(decode_error(npy_file(1, std::string("{'descr': '<f4',\0 'fortran_order': False, 'shape': (3,)}", 56),
                              floats)) == "t.npy: bad .npy header: it contains a NUL byte");
  CHECK(decode_error(npy_file(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} x", floats)) ==
        "t.npy: bad .npy header: unexpected text after the dict at column 57 of \"{'descr': '<f4', 'fortran_order': "
        "False, 'shape': (3,)} x\"");
  CHECK(decode_error(npy_file(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (3,)}", floats)) ==
        "t.npy: dtype '<c8' is not supported; vkfuse reads float32, float16, int64, int32, int16, int8, uint8 and bool");

  // Every prefix of a good file is refused cleanly (the sanitizers watch for overreads).
  for (std::size_t size = 0; size < good.size(); ++size) {
    CAPTURE(size);
    CHECK_FALSE(decode_npy(cut(size), "t.npy").ok());
  }
  // Random bytes after a valid magic never crash.
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::byte> noise = cut(10);
    const std::size_t extra = rng() % 200;
    for (std::size_t i = 0; i < extra; ++i) noise.push_back(static_cast<std::byte>(rng() & 0xff));
    (void)decode_npy(noise, "t.npy");
  }
}

TEST_CASE("read_tensor_file: missing files, unknown extensions, and the file name in every error") {
  const testing::ScratchDir dir("vkfuse_tensor_io_test");
  CHECK(read_error(dir.file("absent.npy")) == dir.file("absent.npy") + ": no such file");
  CHECK(read_tensor_file(dir.file("absent.npy")).status().code() == ErrorCode::kNotFound);
  CHECK(read_error(dir.file("x.txt")) ==
        dir.file("x.txt") + ": unknown tensor file type '.txt' (expected .npy or an ONNX TensorProto .pb)");
  fs::create_directories(dir.path() / "folder.npy");
  CHECK(read_error(dir.file("folder.npy")) == dir.file("folder.npy") + ": not a regular file");
  const std::vector<std::byte> good = read_bytes(kData + "f32_2x3.npy");
  write_bytes(dir.file("TRUNC.NPY"), std::vector<std::byte>(good.begin(), good.begin() + 140));
  CHECK(read_error(dir.file("TRUNC.NPY")) ==
        dir.file("TRUNC.NPY") + ": the data holds 12 bytes, but shape [2,3] of '<f4' needs 24 (truncated file?)");
}

TEST_CASE("write_npy refuses a tensor whose bytes do not match its shape") {
  const testing::ScratchDir dir("vkfuse_tensor_io_test");
  HostTensor t = HostTensor::from_floats({2, 3}, {1, 2, 3, 4, 5, 6});
  t.bytes.pop_back();
  const Status s = write_npy(dir.file("t.npy"), t);
  CHECK(s.message() == dir.file("t.npy") + ": write_npy: the tensor holds 23 bytes, but f32[2,3] needs 24");
  CHECK_FALSE(fs::exists(dir.path() / "t.npy"));
  const Status missing_dir = write_npy(dir.file("no/such/dir/t.npy"), HostTensor::from_floats({1}, {1}));
  CHECK(missing_dir.code() == ErrorCode::kIo);
  CHECK(missing_dir.message().rfind(dir.file("no/such/dir/t.npy") + ": cannot create (", 0) == 0);
}

namespace {

void write_proto(const std::string& path, const onnx::TensorProto& proto) {
  std::string bytes;
  REQUIRE(proto.SerializeToString(&bytes));
  write_bytes(path, to_bytes(bytes));
}

onnx::TensorProto make_proto(int data_type, const Shape& dims) {
  onnx::TensorProto proto;
  proto.set_name("t");
  proto.set_data_type(data_type);
  for (std::int64_t d : dims) proto.add_dims(d);
  return proto;
}

}  // namespace

TEST_CASE("read_tensor_file reads ONNX TensorProto files written by the onnx package") {
  const std::string p = kData;
  for (const char* name : {"f32_2x3_raw.pb", "f32_2x3_float_data.pb"}) {
    CAPTURE(name);
    const HostTensor t = read_ok(p + name);
    CHECK(t.dtype == DType::kF32);
    CHECK(t.shape == Shape{2, 3});
    CHECK(t.to_floats() == std::vector<float>{-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f});
  }
  const HostTensor i64 = read_ok(p + "i64_2x2_int64_data.pb");
  CHECK(i64.dtype == DType::kI32);
  CHECK(elements<std::int32_t>(i64) == std::vector<std::int32_t>{INT32_MIN, INT32_MAX, 0, -7});
  const HostTensor f16 = read_ok(p + "f16_5_raw.pb");
  CHECK(f16.dtype == DType::kF16);
  CHECK(elements<std::uint16_t>(f16) == std::vector<std::uint16_t>{0x0000, 0xbe00, 0x7bff, 0x2e66, 0x8000});
  const HostTensor b = read_ok(p + "bool_7_raw.pb");
  CHECK(b.dtype == DType::kBool);
  CHECK(b.to_floats() == std::vector<float>{1, 0, 1, 1, 0, 0, 1});
  const HostTensor scalar = read_ok(p + "i32_scalar_int32_data.pb");
  CHECK(scalar.shape.empty());
  CHECK(elements<std::int32_t>(scalar) == std::vector<std::int32_t>{-42});
  // The same tensor as .npy and as .pb reads the same.
  CHECK(read_ok(p + "f32_2x3_raw.pb").bytes == read_ok(p + "f32_2x3.npy").bytes);
  CHECK(read_ok(p + "bool_7_raw.pb").bytes == read_ok(p + "bool_7.npy").bytes);
}

TEST_CASE("TensorProto files written with protobuf round-trip through read_tensor_file") {
  const testing::ScratchDir dir("vkfuse_tensor_io_test");
  SUBCASE("float raw_data, every shape") {
    for (const Shape& shape : std::vector<Shape>{{}, {1}, {7, 13}, {2, 1, 3, 1}}) {
      CAPTURE(shape_to_string(shape));
      const HostTensor want = sample(DType::kF32, shape);
      onnx::TensorProto proto = make_proto(onnx::TensorProto::FLOAT, shape);
      proto.set_raw_data(std::string(reinterpret_cast<const char*>(want.bytes.data()), want.bytes.size()));
      write_proto(dir.file("t.pb"), proto);
      const HostTensor got = read_ok(dir.file("t.pb"));
      CHECK(got.dtype == DType::kF32);
      CHECK(got.shape == shape);
      CHECK(got.bytes == want.bytes);
    }
  }
  SUBCASE("typed fields: int64_data, int32_data for float16 bits and bool") {
    onnx::TensorProto i64 = make_proto(onnx::TensorProto::INT64, {3});
    for (std::int64_t v : {-5LL, 0LL, 2147483647LL}) i64.add_int64_data(v);
    write_proto(dir.file("i64.pb"), i64);
    CHECK(elements<std::int32_t>(read_ok(dir.file("i64.pb"))) == std::vector<std::int32_t>{-5, 0, 2147483647});

    onnx::TensorProto f16 = make_proto(onnx::TensorProto::FLOAT16, {2});
    f16.add_int32_data(float_to_half(1.5f));
    f16.add_int32_data(float_to_half(-2.0f));
    write_proto(dir.file("f16.pb"), f16);
    const HostTensor h = read_ok(dir.file("f16.pb"));
    CHECK(h.dtype == DType::kF16);
    CHECK(h.to_floats() == std::vector<float>{1.5f, -2.0f});

    onnx::TensorProto b = make_proto(onnx::TensorProto::BOOL, {3});
    for (int v : {1, 0, 1}) b.add_int32_data(v);
    write_proto(dir.file("b.pb"), b);
    CHECK(read_ok(dir.file("b.pb")).to_floats() == std::vector<float>{1, 0, 1});
  }
  SUBCASE("external data is read next to the .pb file") {
    const std::vector<float> values = {0.25f, -8.0f, 3.0f, 1e-3f};
    write_bytes(dir.file("weights.bin"), raw(values));
    onnx::TensorProto proto = make_proto(onnx::TensorProto::FLOAT, {2, 2});
    proto.set_data_location(onnx::TensorProto::EXTERNAL);
    auto* location = proto.add_external_data();
    location->set_key("location");
    location->set_value("weights.bin");
    write_proto(dir.file("ext.pb"), proto);
    CHECK(read_ok(dir.file("ext.pb")).to_floats() == values);
  }
}

TEST_CASE("damaged TensorProto files are errors naming the file") {
  const testing::ScratchDir dir("vkfuse_tensor_io_test");
  const std::string p = kData;
  auto check_error = [&](const std::string& path) {
    const std::string message = read_error(path);
    CHECK_MESSAGE(message.find(path) != std::string::npos, message);
    return message;
  };
  check_error(p + "bad_f32_size_mismatch.pb");  // 6 elements declared, 5 given
  CHECK(read_tensor_file(p + "bad_f32_size_mismatch.pb").status().code() == ErrorCode::kInvalidArgument);

  onnx::TensorProto proto = make_proto(onnx::TensorProto::FLOAT, {64});
  proto.set_raw_data(std::string(256, '\x01'));
  std::string bytes;
  REQUIRE(proto.SerializeToString(&bytes));
  // Every truncation of a valid file is refused (inside raw_data protobuf fails; at a field boundary
  // the shape and the data disagree).
  for (std::size_t size : {bytes.size() - 1, bytes.size() - 100, std::size_t{12}, std::size_t{5}, std::size_t{1}}) {
    CAPTURE(size);
    write_bytes(dir.file("cut.pb"), to_bytes(bytes.substr(0, size)));
    check_error(dir.file("cut.pb"));
  }
  write_bytes(dir.file("garbage.pb"), std::vector<std::byte>(40, std::byte{0xff}));
  CHECK(check_error(dir.file("garbage.pb")).find("not a serialized ONNX TensorProto") != std::string::npos);
  write_bytes(dir.file("empty.pb"), {});
  CHECK(check_error(dir.file("empty.pb")).find("not a serialized ONNX TensorProto") != std::string::npos);
  write_bytes(dir.file("numpy.pb"), read_bytes(p + "f32_2x3.npy"));
  check_error(dir.file("numpy.pb"));
  CHECK(read_error(dir.file("absent.pb")) == dir.file("absent.pb") + ": no such file");

  onnx::TensorProto escape = make_proto(onnx::TensorProto::FLOAT, {1});
  escape.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* location = escape.add_external_data();
  location->set_key("location");
  location->set_value("../outside.bin");
  write_proto(dir.file("escape.pb"), escape);
  check_error(dir.file("escape.pb"));
}

}  // namespace vkfuse
