// Gemm, Conv, ConvTranspose and pooling against their CPU references.
#include <doctest/doctest.h>

#include "support/kernel_case.h"

namespace vkfuse::testing {

namespace {
const std::vector<KernelCase> kNnCases = {};
}  // namespace

std::span<const KernelCase> nn_cases() { return kNnCases; }

}  // namespace vkfuse::testing
