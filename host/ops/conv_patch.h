// The direct Conv root with staged input patches (roots/conv2d_patch.glsl): its tiles, the rule that
// picks one, and its launch. host/ops/conv_ops.cpp sends the Convs it serves here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/device_plan.h"
#include "host/op_def.h"
#include "host/ops/nn_support.h"

namespace vkfuse {

// The patch tile for Conv `s` (one group) on `device` (the forced one while a ScopedPatchTile lives), or
// none where the root does not pay or fit.
std::optional<PatchTile> choose_patch_tile(const ConvShape& s, const DevicePlan& device);

// The launch of Conv `s` on tile t (from choose_patch_tile); `defines` are the Conv's shape defines
// (host/ops/conv_ops.cpp, conv_defines).
KernelLaunch patch_conv_launch(const ConvShape& s, const PatchTile& t, std::vector<std::pair<std::string, std::string>> defines,
                               const DevicePlan& device);

}  // namespace vkfuse
