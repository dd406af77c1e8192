// Seeded random tensors for tests, drawn from an op's TestDomain.
#pragma once

#include <cstdint>
#include <random>

#include <vkfuse/vkfuse.hpp>

#include "host/op_def.h"

namespace vkfuse::testing {

// Floats from the domain (whole numbers if it says so; |x| >= min_magnitude), then converted to
// `dtype`; bools are fair coin flips.
HostTensor random_tensor(const Shape& shape, DType dtype, const TestDomain& domain, std::mt19937& rng);

}  // namespace vkfuse::testing
