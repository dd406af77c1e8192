#include "host/ops/conv_patch.h"

#include <algorithm>
#include <array>
#include <initializer_list>

#include "host/ops/kernel_support.h"

namespace vkfuse {
namespace {

// Input rows and columns of a th x tw block of outputs (the patch, before its row stride).
std::int64_t patch_h(const ConvShape& s, const PatchTile& t) { return (t.th - 1) * s.axes[0].stride + s.axes[0].span(); }
std::int64_t patch_w(const ConvShape& s, const PatchTile& t) { return (t.tw - 1) * s.axes[1].stride + s.axes[1].span(); }
std::int64_t taps(const ConvShape& s) { return s.axes[0].kernel * s.axes[1].kernel; }

// Whether a ScopedPatchTile lives, and its tile (none: the patch root is off).
bool g_patch_set = false;
std::optional<PatchTile> g_forced_patch;

// The patch's row stride: the least at or above its width whose first reads of a warp (32 invocations,
// or all of them where fewer: the seg[0] of each, rows SH*stride apart and RW*SW columns apart) hit the
// fewest words of one bank (32 banks of 4 bytes).
std::int64_t patch_row_stride(const ConvShape& conv, const PatchTile& t) {
  const std::int64_t width = patch_w(conv, t), row_threads = t.tw / t.rw;
  const std::int64_t lanes = std::min<std::int64_t>(32, t.th * row_threads);
  std::int64_t best = width, best_ways = 33;
  for (std::int64_t stride = width; stride < width + 32; ++stride) {
    std::array<std::array<std::int64_t, 32>, 32> words{};  // per bank, the distinct words read
    std::array<std::int64_t, 32> count{};
    std::int64_t ways = 0;
    for (std::int64_t lane = 0; lane < lanes; ++lane) {
      const std::int64_t word = (lane / row_threads) * conv.axes[0].stride * stride + (lane % row_threads) * t.rw * conv.axes[1].stride;
      const std::size_t bank = static_cast<std::size_t>(word % 32);
      const auto end = words[bank].begin() + count[bank];
      if (std::find(words[bank].begin(), end, word) == end) words[bank][static_cast<std::size_t>(count[bank]++)] = word;
      ways = std::max(ways, count[bank]);
    }
    if (ways < best_ways) best = stride, best_ways = ways;
  }
  return best;
}

// Shared memory tile t takes on Conv `conv` with patch rows `row_stride` apart (roots/conv2d_patch.glsl:
// vkf_x, vkf_w and, with parts, vkf_split_last).
std::int64_t patch_shared_bytes(const ConvShape& conv, const PatchTile& t, std::int64_t row_stride) {
  const std::int64_t patch = patch_h(conv, t) * row_stride, weights = taps(conv) * (t.bm + 4);
  const std::int64_t split_flag = t.parts > 1 ? 16 : 0;  // vkf_split_last (codegen/kernel_root.cpp), padded
  return t.ck * (patch + weights) * 4 + split_flag;
}

// The most values one invocation stages per step, of the patch and of the weights: its loads are
// unrolled, and a tile of few invocations on a wide window would unroll hundreds (a compile of minutes).
constexpr std::int64_t kMaxStagedPerInvocation = 64;

bool patch_fits(const ConvShape& conv, const PatchTile& t, const DevicePlan& device) {
  if (!patch_tile_usable(t, device)) return false;
  const std::int64_t x_values = t.ck * patch_h(conv, t) * patch_w(conv, t), w_values = t.ck * taps(conv) * t.bm;
  return div_up(x_values, t.invocations()) <= kMaxStagedPerInvocation &&
         div_up(w_values, t.invocations()) <= kMaxStagedPerInvocation &&
         patch_shared_bytes(conv, t, patch_row_stride(conv, t)) <= static_cast<std::int64_t>(device.shared_memory_bytes);
}

// The least of `options` that pads `extent` least (a multiple of the option as near as can be).
std::int64_t least_padding(std::int64_t extent, std::initializer_list<std::int64_t> options) {
  std::int64_t best = *options.begin();
  for (const std::int64_t o : options)
    if (div_up(extent, o) * o < div_up(extent, best) * best) best = o;
  return best;
}

std::int64_t patch_blocks(const ConvShape& conv, const PatchTile& t) {
  return conv.n * div_up(conv.m, t.bm) * div_up(conv.oh, t.th) * div_up(conv.ow, t.tw);
}

// K over the most workgroups per block (16, 8, 4 or 2) that keep four per compute unit at most (fill_workgroups),
// each with kMinSplitSteps steps or more; where the device has room for the split-K scratch. A workgroup
// of 256 invocations and 16 KB leaves room for several per SM, which the long K walks need
// (docs/tuning-log.md, "with_parts").
PatchTile with_parts(const ConvShape& conv, PatchTile t, const DevicePlan& device) {
  t.parts = 1;
  if (device.max_bindings < kMinBindingsForScratch) return t;
  const std::int64_t blocks = patch_blocks(conv, t), steps = div_up(conv.c, t.ck);
  for (const std::int64_t parts : {16, 8, 4, 2})
    if (blocks * parts <= 4 * fill_workgroups(device) && steps >= parts * kMinSplitSteps) {
      t.parts = div_up(steps, div_up(steps, parts));  // as patch_conv_launch splits: none empty
      break;
    }
  return t;
}

}  // namespace

// 4 outputs of a row x 4 channels per invocation on 8 x 16 blocks of 32 channels (64 on 512-channel
// layers), K over workgroups (with_parts); short of half of fill_invocations, steps of 4 channels, then
// blocks of 16, and then the implicit GEMM take over (docs/tuning-log.md, "choose_patch_tile").
//
// Inputs of fewer than kPatchMinChannels channels stay with the implicit GEMM: their patches are mostly
// the window's overlap and a step has few channels to multiply (docs/tuning-log.md, "kPatchMinChannels").
constexpr std::int64_t kPatchMinChannels = 32;

std::optional<PatchTile> choose_patch_tile(const ConvShape& conv, const DevicePlan& device) {
  if (g_patch_set) return g_forced_patch && patch_fits(conv, *g_forced_patch, device) ? g_forced_patch : std::nullopt;
  if (conv.c < kPatchMinChannels) return std::nullopt;
  PatchTile t{.bm = conv.m >= 512 ? 64 : 32, .rm = 4, .th = 8, .tw = conv.ow >= 12 ? 16 : 8, .rw = 4, .ck = 8};
  t.th = std::min(least_padding(conv.oh, {8, 7}), conv.oh);
  while (t.ck > 1 && !patch_fits(conv, t, device)) t.ck /= 2;
  if (!patch_fits(conv, t, device)) return std::nullopt;
  t = with_parts(conv, t, device);
  auto busy = [&](const PatchTile& c) { return patch_blocks(conv, c) * c.parts * c.invocations(); };
  while (busy(t) < fill_invocations(device) / 2) {
    PatchTile next = t;
    if (next.ck > 4) next.ck = 4;
    else if (next.bm > 16) next.bm /= 2;
    else return std::nullopt;
    t = with_parts(conv, next, device);
  }
  return t;
}

KernelLaunch patch_conv_launch(const ConvShape& conv, const PatchTile& t, std::vector<std::pair<std::string, std::string>> defines,
                               const DevicePlan& device) {
  const std::int64_t tiles_w = div_up(conv.ow, t.tw), tiles_h = div_up(conv.oh, t.th);
  const std::int64_t blocks = conv.n * div_up(conv.m, t.bm) * tiles_h * tiles_w;
  // Each part walks whole steps of ck channels, none of them empty.
  const std::int64_t k_part = div_up(div_up(conv.c, t.parts), t.ck) * t.ck, parts = div_up(conv.c, k_part);
  KernelLaunch launch;
  launch.root = "roots/conv2d_patch.glsl";
  launch.workgroup_size = static_cast<std::uint32_t>(t.invocations());
  launch.defines = std::move(defines);
  const bool vec_stores = t.rw == 4 && conv.ow % 4 == 0 && t.tw % 4 == 0;
  launch.defines.insert(launch.defines.end(),
                        {{"VKF_RM", glsl_uint(t.rm)}, {"VKF_RW", glsl_uint(t.rw)}, {"VKF_TH", glsl_uint(t.th)},
                         {"VKF_TW", glsl_uint(t.tw)}, {"VKF_BM", glsl_uint(t.bm)}, {"VKF_CK", glsl_uint(t.ck)},
                         {"VKF_PWS", glsl_uint(patch_row_stride(conv, t))}, {"VKF_TILES_W", glsl_uint(tiles_w)},
                         {"VKF_TILES_H", glsl_uint(tiles_h)}, {"VKF_BLOCKS", glsl_uint(blocks)},
                         {"VKF_VEC_STORES", vec_stores ? "1" : "0"}, {"VKF_SPLIT_GROUPS", std::to_string(parts)},
                         {"VKF_K_PART", glsl_uint(k_part)}});
  if (parts > 1) {
    launch.split_counters = static_cast<std::uint32_t>(blocks);
    launch.split_partial_bytes = static_cast<std::uint64_t>(blocks * parts * t.bm * t.th * t.tw) * 4;
  }
  launch.workgroups = {static_cast<std::uint32_t>(std::min<std::int64_t>(blocks * parts, device.max_groups_x)), 1, 1};
  return launch;
}

ScopedPatchTile::ScopedPatchTile(std::optional<PatchTile> tile) : saved_set_(g_patch_set), saved_(g_forced_patch) {
  g_patch_set = true;
  g_forced_patch = tile;
}

ScopedPatchTile::~ScopedPatchTile() {
  g_patch_set = saved_set_;
  g_forced_patch = saved_;
}

bool patch_tile_forced() { return g_patch_set && g_forced_patch.has_value(); }

bool patch_tile_usable(const PatchTile& t, const DevicePlan& device) {
  return t.bm > 0 && t.rm > 0 && t.rm % 4 == 0 && t.bm % t.rm == 0 && t.tw > 0 && t.rw > 0 && t.tw % t.rw == 0 &&
         t.th > 0 && t.ck > 0 && t.parts >= 1 && t.parts <= 16 && t.invocations() <= device.max_workgroup_invocations;
}

}  // namespace vkfuse
