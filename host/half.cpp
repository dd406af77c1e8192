#include "host/half.h"

#include <cstring>

namespace vkfuse {

std::uint16_t float_to_half(float value) {
  std::uint32_t f = 0;
  std::memcpy(&f, &value, sizeof f);
  const std::uint32_t sign = (f >> 16) & 0x8000u;
  const std::uint32_t exponent = (f >> 23) & 0xffu;
  std::uint32_t mantissa = f & 0x7fffffu;
  if (exponent == 0xffu)  // inf or NaN (keep NaN quiet and non-zero)
    return static_cast<std::uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u | (mantissa >> 13) : 0u));
  const int e = static_cast<int>(exponent) - 127 + 15;
  if (e >= 31) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (e <= 0) {  // subnormal half or zero
    if (e < -10) return static_cast<std::uint16_t>(sign);
    mantissa |= 0x800000u;
    const int shift = 14 - e;
    std::uint32_t half_mantissa = mantissa >> shift;
    const std::uint32_t remainder = mantissa & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1);
    if (remainder > halfway || (remainder == halfway && (half_mantissa & 1u))) ++half_mantissa;
    return static_cast<std::uint16_t>(sign | half_mantissa);
  }
  std::uint32_t half = sign | (static_cast<std::uint32_t>(e) << 10) | (mantissa >> 13);
  const std::uint32_t remainder = mantissa & 0x1fffu;
  if (remainder > 0x1000u || (remainder == 0x1000u && (half & 1u))) ++half;  // may carry into inf: correct
  return static_cast<std::uint16_t>(half);
}

float half_to_float(std::uint16_t bits) {
  const std::uint32_t sign = (bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  std::uint32_t mantissa = bits & 0x3ffu;
  std::uint32_t f = 0;
  if (exponent == 0x1fu) {
    f = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    f = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa != 0) {  // subnormal: normalize
    int e = 113;
    while (!(mantissa & 0x400u)) {
      mantissa <<= 1;
      --e;
    }
    f = sign | (static_cast<std::uint32_t>(e) << 23) | ((mantissa & 0x3ffu) << 13);
  } else {
    f = sign;
  }
  float value = 0;
  std::memcpy(&value, &f, sizeof value);
  return value;
}

}  // namespace vkfuse
