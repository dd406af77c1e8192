#include "support/random_inputs.h"

#include <cmath>

namespace vkfuse::testing {

HostTensor random_tensor(const Shape& shape, DType dtype, const TestDomain& domain, std::mt19937& rng) {
  std::vector<float> values(static_cast<std::size_t>(shape_numel(shape)));
  std::uniform_real_distribution<float> dist(domain.lo, domain.hi);
  for (float& v : values) {
    if (dtype == DType::kBool) {
      v = static_cast<float>(rng() & 1u);
      continue;
    }
    do {
      v = dist(rng);
      if (domain.integers) v = std::round(v);
    } while (std::fabs(v) < domain.min_magnitude);
  }
  return HostTensor::from_floats(shape, values, dtype);
}

}  // namespace vkfuse::testing
