// Tensor kernel ops (Concat, Gather, Pad, Resize, ...) against their CPU references.
#include <doctest/doctest.h>

#include "support/kernel_case.h"

namespace vkfuse::testing {

namespace {
const std::vector<KernelCase> kTensorCases = {};
}  // namespace

std::span<const KernelCase> tensor_cases() { return kTensorCases; }

}  // namespace vkfuse::testing
