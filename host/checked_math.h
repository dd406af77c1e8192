// Overflow-checked arithmetic for element counts, byte sizes, products of dims and offsets. Every
// number that comes from a model file (dims, repeats, pads, strides, offsets) goes through these
// before it is multiplied or added, so that a hostile file gets a clear error instead of a wrapped
// value that fails much later.
//
// The plain forms return nullopt on overflow; the `_or_error` forms return kInvalidArgument with a
// message that shows the operation, e.g. "output dim 1 = 4611686018427387904 * 4 overflows int64"
// (callers prefix the node or tensor). Header-only, no state: safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include <vkfuse/status.hpp>
#include <vkfuse/types.hpp>

namespace vkfuse {

template <class T>
concept CheckedInteger = std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint64_t>;

template <CheckedInteger T>
constexpr std::optional<T> checked_mul(T a, T b) {
  T out;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

template <CheckedInteger T>
constexpr std::optional<T> checked_add(T a, T b) {
  T out;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

template <CheckedInteger T>
constexpr std::optional<T> checked_sub(T a, T b) {
  T out;
  if (__builtin_sub_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// The product of the dims (1 for rank 0); nullopt when a dim is negative or the product overflows int64.
inline std::optional<std::int64_t> checked_numel(std::span<const std::int64_t> shape) {
  std::int64_t numel = 1;
  for (std::int64_t d : shape) {
    if (d < 0) return std::nullopt;
    const auto next = checked_mul(numel, d);
    if (!next) return std::nullopt;
    numel = *next;
  }
  return numel;
}

// numel elements of element_size bytes; nullopt when numel is negative or the bytes overflow uint64.
inline std::optional<std::uint64_t> checked_bytes(std::int64_t numel, std::size_t element_size) {
  if (numel < 0) return std::nullopt;
  return checked_mul(static_cast<std::uint64_t>(numel), static_cast<std::uint64_t>(element_size));
}

namespace checked_detail {

template <CheckedInteger T>
const char* type_name() {
  return std::is_signed_v<T> ? "int64" : "uint64";
}

template <CheckedInteger T>
Status overflow(std::string_view what, T a, const char* op, T b) {
  return make_error(ErrorCode::kInvalidArgument, std::string(what) + " = " + std::to_string(a) + " " + op + " " +
                                                     std::to_string(b) + " overflows " + type_name<T>());
}

}  // namespace checked_detail

// a * b, or "<what> = a * b overflows int64".
template <CheckedInteger T>
Result<T> mul_or_error(T a, T b, std::string_view what) {
  if (auto out = checked_mul(a, b)) return *out;
  return checked_detail::overflow(what, a, "*", b);
}

// a + b, or "<what> = a + b overflows int64".
template <CheckedInteger T>
Result<T> add_or_error(T a, T b, std::string_view what) {
  if (auto out = checked_add(a, b)) return *out;
  return checked_detail::overflow(what, a, "+", b);
}

// a - b, or "<what> = a - b overflows int64".
template <CheckedInteger T>
Result<T> sub_or_error(T a, T b, std::string_view what) {
  if (auto out = checked_sub(a, b)) return *out;
  return checked_detail::overflow(what, a, "-", b);
}

// The element count of `shape`, or "<what> [a,b,c]: a negative dimension" / "...: the element count
// overflows int64".
inline Result<std::int64_t> numel_or_error(const Shape& shape, std::string_view what) {
  for (std::int64_t d : shape)
    if (d < 0)
      return make_error(ErrorCode::kInvalidArgument, std::string(what) + " " + shape_to_string(shape) + " has a negative dimension");
  if (auto numel = checked_numel(shape)) return *numel;
  return make_error(ErrorCode::kInvalidArgument,
                    std::string(what) + " " + shape_to_string(shape) + ": the element count overflows int64");
}

// The bytes of `shape` with elements of element_size bytes, or an error as numel_or_error's (or
// "...: N elements of S bytes overflow uint64").
inline Result<std::uint64_t> bytes_or_error(const Shape& shape, std::size_t element_size, std::string_view what) {
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t numel, numel_or_error(shape, what));
  if (auto bytes = checked_bytes(numel, element_size)) return *bytes;
  return make_error(ErrorCode::kInvalidArgument, std::string(what) + " " + shape_to_string(shape) + ": " +
                                                     std::to_string(numel) + " elements of " + std::to_string(element_size) +
                                                     " bytes overflow uint64");
}

}  // namespace vkfuse
