#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include <vkfuse/vkfuse.hpp>

#include "host/half.h"

namespace vkfuse {

HostTensor HostTensor::from_floats(Shape shape, const std::vector<float>& values, DType dtype) {
  HostTensor tensor{std::move(shape), dtype, {}};
  tensor.bytes.resize(values.size() * dtype_size(dtype));
  std::byte* out = tensor.bytes.data();
  for (std::size_t i = 0; i < values.size(); ++i) {
    const float v = values[i];
    switch (dtype) {
      case DType::kF32: std::memcpy(out + 4 * i, &v, 4); break;
      case DType::kF16: {
        const std::uint16_t h = float_to_half(v);
        std::memcpy(out + 2 * i, &h, 2);
        break;
      }
      case DType::kI32: {
        // Truncates toward zero and saturates at the int32 range (NaN -> 0): a plain cast is UB outside it.
        std::int32_t x = 0;
        if (std::isnan(v)) x = 0;
        else if (v >= 2147483648.0f) x = INT32_MAX;
        else if (v <= -2147483648.0f) x = INT32_MIN;
        else x = static_cast<std::int32_t>(v);
        std::memcpy(out + 4 * i, &x, 4);
        break;
      }
      case DType::kBool: out[i] = std::byte{v != 0.0f ? std::uint8_t{1} : std::uint8_t{0}}; break;
      case DType::kU8:  // truncates toward zero and saturates at 0..255 (NaN -> 0), as the GPU's Cast does
        out[i] = std::byte{static_cast<std::uint8_t>(std::isnan(v) ? 0.0f : std::clamp(std::trunc(v), 0.0f, 255.0f))};
        break;
    }
  }
  return tensor;
}

std::vector<float> HostTensor::to_floats() const {
  const std::size_t count = bytes.size() / dtype_size(dtype);
  std::vector<float> values(count);
  const std::byte* in = bytes.data();
  for (std::size_t i = 0; i < count; ++i) {
    switch (dtype) {
      case DType::kF32: std::memcpy(&values[i], in + 4 * i, 4); break;
      case DType::kF16: {
        std::uint16_t h = 0;
        std::memcpy(&h, in + 2 * i, 2);
        values[i] = half_to_float(h);
        break;
      }
      case DType::kI32: {
        std::int32_t x = 0;
        std::memcpy(&x, in + 4 * i, 4);
        values[i] = static_cast<float>(x);
        break;
      }
      case DType::kBool: values[i] = in[i] != std::byte{0} ? 1.0f : 0.0f; break;
      case DType::kU8: values[i] = static_cast<float>(std::to_integer<std::uint8_t>(in[i])); break;
    }
  }
  return values;
}

}  // namespace vkfuse
