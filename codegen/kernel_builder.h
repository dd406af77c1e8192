// KernelBuilder: stitches one fused group into one GLSL compute shader: version and extensions, the
// prelude, each snippet the group uses (once), the buffer bindings, and the root template with its
// hooks filled by the group's chain.
#pragma once

#include <array>
#include <string>

#include <vkfuse/status.hpp>

#include "codegen/kernel_spec.h"

namespace vkfuse {

// Elements each invocation handles on the vector path (the root template's VKF_VEC).
inline constexpr std::uint32_t kElementwiseVec = 4;

// Invocation-grid size in vectors for a domain of `numel` elements.
std::uint64_t elementwise_num_vectors(std::int64_t numel);

// The complete GLSL source of the group (elementwise or reduce root). Fails on a spec the templates
// cannot express (a snippet that is not embedded, an operand out of range).
Result<std::string> build_kernel(const KernelSpec& spec);

// Workgroups to dispatch for the spec. Elementwise and reduce roots: x before clamping to the device's
// limit (their grid-stride loops cover any remainder); kernel roots: what the op's launcher chose.
std::array<std::uint64_t, 3> kernel_workgroups(const KernelSpec& spec);

}  // namespace vkfuse
