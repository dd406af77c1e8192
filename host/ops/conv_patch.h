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

// A Conv of one group as the patch root sees it.
struct PatchConv {
  std::int64_t n = 1, c = 1, h = 1, w = 1, m = 1, oh = 1, ow = 1;
  std::int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  std::int64_t patch_h(const PatchTile& t) const { return (t.th - 1) * sh + (kh - 1) * dh + 1; }
  std::int64_t patch_w(const PatchTile& t) const { return (t.tw - 1) * sw + (kw - 1) * dw + 1; }
};

// Shared memory tile t takes on Conv `conv` with patch rows `row_stride` apart.
std::int64_t patch_shared_bytes(const PatchConv& conv, const PatchTile& t, std::int64_t row_stride);

// The patch tile for `conv` on `device` (the forced one while a ScopedPatchTile lives), or none where the
// root does not pay or fit.
std::optional<PatchTile> choose_patch_tile(const PatchConv& conv, const DevicePlan& device);

// The launch of `conv` on tile t (usable: patch_tile_usable); `defines` are the Conv's shape defines
// (host/ops/conv_ops.cpp, conv_defines).
KernelLaunch patch_conv_launch(const PatchConv& conv, const PatchTile& t, std::vector<std::pair<std::string, std::string>> defines,
                               const DevicePlan& device);

}  // namespace vkfuse
