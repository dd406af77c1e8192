// Host-side types: IEEE binary16 conversion (round to nearest even), HostTensor conversions for each
// dtype, and the small helpers of types.hpp.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <vkfuse/vkfuse.hpp>

#include "host/half.h"

namespace vkfuse {
namespace {

float round_trip(float x) { return half_to_float(float_to_half(x)); }

std::uint32_t bits_of(float x) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}

}  // namespace

TEST_CASE("float_to_half: exact values and special encodings") {
  CHECK(float_to_half(0.0f) == 0x0000);
  CHECK(float_to_half(-0.0f) == 0x8000);
  CHECK(float_to_half(1.0f) == 0x3c00);
  CHECK(float_to_half(-2.0f) == 0xc000);
  CHECK(float_to_half(0.5f) == 0x3800);
  CHECK(float_to_half(65504.0f) == 0x7bff);              // largest finite half
  CHECK(float_to_half(std::ldexp(1.0f, -14)) == 0x0400);  // smallest normal
  CHECK(float_to_half(std::ldexp(1.0f, -24)) == 0x0001);  // smallest subnormal
  CHECK(float_to_half(std::ldexp(1023.0f, -24)) == 0x03ff);  // largest subnormal
  CHECK(float_to_half(std::numeric_limits<float>::infinity()) == 0x7c00);
  CHECK(float_to_half(-std::numeric_limits<float>::infinity()) == 0xfc00);
}

TEST_CASE("float_to_half rounds to nearest, ties to even") {
  CHECK(float_to_half(65519.0f) == 0x7bff);  // below the midpoint to 2^16: stays finite
  CHECK(float_to_half(65520.0f) == 0x7c00);  // the midpoint rounds to even, which is infinity
  CHECK(float_to_half(1.0e6f) == 0x7c00);
  CHECK(float_to_half(-1.0e6f) == 0xfc00);
  CHECK(round_trip(1.0f + std::ldexp(1.0f, -11)) == 1.0f);                          // tie, down to even
  CHECK(round_trip(1.0f + 3.0f * std::ldexp(1.0f, -11)) == 1.0f + std::ldexp(1.0f, -9));  // tie, up to even
  CHECK(round_trip(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)) == 1.0f + std::ldexp(1.0f, -10));
  CHECK(round_trip(0.1f) == 0.0999755859375f);  // 0x2e66
  // Subnormal range: steps of 2^-24, ties to even.
  CHECK(float_to_half(std::ldexp(1.0f, -25)) == 0x0000);          // half of the smallest: to even (0)
  CHECK(float_to_half(std::ldexp(1.5f, -25)) == 0x0001);
  CHECK(float_to_half(std::ldexp(3.0f, -25)) == 0x0002);          // 1.5 steps: tie, up to even
  CHECK(float_to_half(std::ldexp(5.0f, -25)) == 0x0002);          // 2.5 steps: tie, down to even
  CHECK(float_to_half(std::ldexp(1.0f, -30)) == 0x0000);
  CHECK(float_to_half(-std::ldexp(1.0f, -30)) == 0x8000);
  CHECK(float_to_half(std::ldexp(2047.0f, -25)) == 0x0400);       // rounds up into the normals
}

TEST_CASE("half_to_float is exact and NaN stays NaN") {
  CHECK(half_to_float(0x3c00) == 1.0f);
  CHECK(half_to_float(0x7bff) == 65504.0f);
  CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));
  CHECK(half_to_float(0x03ff) == std::ldexp(1023.0f, -24));
  CHECK(half_to_float(0x8000) == 0.0f);
  CHECK(std::signbit(half_to_float(0x8000)));
  CHECK(half_to_float(0xfc00) == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(half_to_float(0x7e00)));
  CHECK(std::isnan(half_to_float(0x7c01)));  // signalling-style payload is still NaN
  CHECK(std::isnan(round_trip(std::numeric_limits<float>::quiet_NaN())));
  const std::uint16_t nan = float_to_half(std::numeric_limits<float>::quiet_NaN());
  CHECK((nan & 0x7c00) == 0x7c00);
  CHECK((nan & 0x03ff) != 0);
  // Every finite half survives half -> float -> half unchanged.
  int mismatches = 0;
  for (std::uint32_t h = 0; h < 0x10000; ++h)
    if ((h & 0x7c00) != 0x7c00 && float_to_half(half_to_float(static_cast<std::uint16_t>(h))) != h) ++mismatches;
  CHECK(mismatches == 0);
}

TEST_CASE("HostTensor converts each dtype to and from floats") {
  const std::vector<float> values{1.5f, -1.7f, 0.0f, 65520.0f, 0.1f};
  SUBCASE("f32") {
    const HostTensor t = HostTensor::from_floats({5}, values);
    CHECK(t.dtype == DType::kF32);
    CHECK(t.bytes.size() == 20);
    CHECK(t.numel() == 5);
    CHECK(t.to_floats() == values);
  }
  SUBCASE("f16") {
    const HostTensor t = HostTensor::from_floats({5}, values, DType::kF16);
    CHECK(t.bytes.size() == 10);
    const std::vector<float> back = t.to_floats();
    CHECK(back[0] == 1.5f);
    CHECK(back[1] == -1.7001953125f);
    CHECK(std::isinf(back[3]));
    CHECK(back[4] == 0.0999755859375f);
  }
  SUBCASE("i32 truncates toward zero") {
    const HostTensor t = HostTensor::from_floats({5}, values, DType::kI32);
    CHECK(t.bytes.size() == 20);
    CHECK(t.to_floats() == std::vector<float>{1.0f, -1.0f, 0.0f, 65520.0f, 0.0f});
  }
  SUBCASE("i32 out of range") {
    // 3e9 does not fit an i32; the conversion must not be undefined (it saturates or is rejected,
    // never an arbitrary value).
    const HostTensor t = HostTensor::from_floats({2}, {3.0e9f, -3.0e9f}, DType::kI32);
    const std::vector<float> back = t.to_floats();
    CHECK(back.at(0) == 2147483647.0f);  // = 2^31 as a float
    CHECK(back.at(1) == -2147483648.0f);
  }
  SUBCASE("bool is one byte, value != 0") {
    const HostTensor t = HostTensor::from_floats({5}, values, DType::kBool);
    REQUIRE(t.bytes.size() == 5);
    CHECK(t.bytes[2] == std::byte{0});
    CHECK(t.bytes[4] == std::byte{1});
    CHECK(t.to_floats() == std::vector<float>{1.0f, 1.0f, 0.0f, 1.0f, 1.0f});
  }
  SUBCASE("rank 0") {
    const HostTensor t = HostTensor::from_floats({}, {3.0f});
    CHECK(t.numel() == 1);
    CHECK(bits_of(t.to_floats().at(0)) == bits_of(3.0f));
  }
}

TEST_CASE("dtype and shape helpers") {
  CHECK(dtype_size(DType::kF32) == 4);
  CHECK(dtype_size(DType::kF16) == 2);
  CHECK(dtype_size(DType::kI32) == 4);
  CHECK(dtype_size(DType::kBool) == 1);
  CHECK(std::string(dtype_name(DType::kF16)) == "f16");
  CHECK(std::string(dtype_name(DType::kBool)) == "bool");
  CHECK(shape_to_string({2, 256, 4}) == "[2,256,4]");
  CHECK(shape_to_string({}) == "[]");
  CHECK(shape_to_string({7}) == "[7]");
  CHECK(shape_numel({}) == 1);
  CHECK(shape_numel({7, 13}) == 91);
  CHECK(Status(ErrorCode::kCompile, "oops").to_string() == "Compile: oops");
  CHECK(Status(ErrorCode::kIo, "disk").with_context("cache").message() == "cache: disk");
}

}  // namespace vkfuse
