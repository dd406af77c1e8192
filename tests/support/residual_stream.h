// A residual stream shaped like convnext_tiny's stages, for the planner's and the GPU's tests of the
// recompute rule (fusion_planner.cpp reads_no_more_than).
#pragma once

#include <cstdint>

#include <vkfuse/vkfuse.hpp>

namespace vkfuse::testing {

// `blocks` times: x_{i+1} = x_i + s * T(MatMul(T(Conv3x3 depthwise(x_i)), w)), the Transposes to
// channels-last and back. Inputs "x" [1, C, H, W], "dw" [C, 1, 3, 3], "w" [C, C], "s" [C, 1, 1];
// output "y" (the last x).
Graph build_residual_stream(std::int64_t channels, std::int64_t height, std::int64_t width, int blocks);

}  // namespace vkfuse::testing
