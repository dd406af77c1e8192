// host/checked_math.h: every overflow edge of int64 and uint64, and the messages callers prefix.
#include <doctest/doctest.h>

#include <limits>

#include "host/checked_math.h"

namespace vkfuse::testing {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::uint64_t kUMax = std::numeric_limits<std::uint64_t>::max();

TEST_CASE("checked_mul, checked_add and checked_sub refuse exactly the results that leave the type") {
  CHECK(checked_mul<std::int64_t>(std::int64_t{1} << 31, std::int64_t{1} << 31) == std::int64_t{1} << 62);
  CHECK(checked_mul<std::int64_t>(std::int64_t{1} << 62, 2) == std::nullopt);
  CHECK(checked_mul<std::int64_t>(std::int64_t{1} << 62, -2) == kMin);
  CHECK(checked_mul<std::int64_t>(kMin, -1) == std::nullopt);
  CHECK(checked_mul<std::int64_t>(0, kMax) == 0);
  CHECK(checked_mul<std::uint64_t>(std::uint64_t{1} << 63, 2) == std::nullopt);
  CHECK(checked_mul<std::uint64_t>(kUMax, 1) == kUMax);
  CHECK(checked_add<std::int64_t>(kMax, 0) == kMax);
  CHECK(checked_add<std::int64_t>(kMax, 1) == std::nullopt);
  CHECK(checked_add<std::int64_t>(kMin, -1) == std::nullopt);
  CHECK(checked_add<std::uint64_t>(kUMax, 1) == std::nullopt);
  CHECK(checked_sub<std::int64_t>(kMin, 1) == std::nullopt);
  CHECK(checked_sub<std::int64_t>(0, kMin) == std::nullopt);
  CHECK(checked_sub<std::uint64_t>(0, 1) == std::nullopt);
  CHECK(checked_sub<std::int64_t>(-5, 7) == -12);
}

TEST_CASE("checked_numel and checked_bytes: negative dims, zero dims, and products past 2^63") {
  CHECK(checked_numel(Shape{}) == 1);
  CHECK(checked_numel(Shape{2, 3, 7}) == 42);
  CHECK(checked_numel(Shape{0, kMax, kMax}) == 0);  // zero first: nothing to overflow
  CHECK(checked_numel(Shape{2, -3}) == std::nullopt);
  CHECK(checked_numel(Shape{std::int64_t{1} << 62, 4}) == std::nullopt);
  CHECK(checked_numel(Shape{std::int64_t{1} << 40, std::int64_t{1} << 40}) == std::nullopt);
  CHECK(checked_numel(Shape{std::int64_t{1} << 31, std::int64_t{1} << 31, 2}) == std::nullopt);  // exactly 2^63
  CHECK(checked_numel(Shape{std::int64_t{1} << 31, (std::int64_t{1} << 32) - 1}) == kMax - (kMax >> 32));
  CHECK(checked_bytes(std::int64_t{1} << 60, 8) == std::uint64_t{1} << 63);  // past int64, inside uint64
  CHECK(checked_bytes(std::int64_t{1} << 61, 8) == std::nullopt);
  CHECK(checked_bytes(std::int64_t{1} << 62, 4) == std::nullopt);
  CHECK(checked_bytes(-1, 4) == std::nullopt);
  CHECK(checked_bytes(6, 2) == 12);
}

TEST_CASE("the _or_error forms name what overflowed and show the operation") {
  auto product = mul_or_error<std::int64_t>(std::int64_t{1} << 62, 4, "output dim 1");
  REQUIRE_FALSE(product.ok());
  CHECK(product.status().code() == ErrorCode::kInvalidArgument);
  CHECK(product.status().message() == "output dim 1 = 4611686018427387904 * 4 overflows int64");
  CHECK(add_or_error<std::uint64_t>(kUMax, 2, "end").status().message() == "end = 18446744073709551615 + 2 overflows uint64");
  CHECK(sub_or_error<std::int64_t>(kMin, 1, "x").status().message() == "x = -9223372036854775808 - 1 overflows int64");
  CHECK(*mul_or_error<std::int64_t>(6, 7, "unused") == 42);
  CHECK(numel_or_error({2, -1}, "input 'x'").status().message() == "input 'x' [2,-1] has a negative dimension");
  CHECK(numel_or_error({std::int64_t{1} << 40, std::int64_t{1} << 40}, "the output").status().message() ==
        "the output [1099511627776,1099511627776]: the element count overflows int64");
  CHECK(bytes_or_error({std::int64_t{1} << 62}, 4, "w").status().message() ==
        "w [4611686018427387904]: 4611686018427387904 elements of 4 bytes overflow uint64");
  CHECK(*bytes_or_error({2, 3}, 4, "unused") == 24);
}

}  // namespace
}  // namespace vkfuse::testing
