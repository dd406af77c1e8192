// Helpers the nn op tables (Gemm, Conv, ConvTranspose, pooling) share: their tables, attribute
// checks with messages that name the attribute, and the 2-D window geometry of convolution and pooling.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "host/op_def.h"

namespace vkfuse {

// The parts of nn_ops() (host/ops/gemm_ops.cpp, conv_ops.cpp, pool_ops.cpp).
std::span<const OpDef> gemm_ops();
std::span<const OpDef> conv_ops();
std::span<const OpDef> pool_ops();

// Implicit-GEMM tiles (roots/conv2d.glsl): a bm x bn block of one group's [MG, N*OH*OW] output per
// workgroup, a tm x tn micro-tile per invocation (even; read from shared memory as vec4 fragments where
// a multiple of 4, else vec2), `split` slices of invocations that each multiply 1/split of every
// staged K slice and add their partial sums through shared memory, and `parts` workgroups per block
// that each walk 1/parts of K and add their partial sums through memory (the session's split-K scratch).
struct ConvTile {
  std::int64_t bm, bn, tm, tn, split = 1, parts = 1;
  std::int64_t invocations() const { return (bm / tm) * (bn / tn) * split; }
  // Outputs each invocation accumulates over its share of K (its reuse of the fragments it reads).
  double outputs_per_invocation() const { return static_cast<double>(tm * tn) / static_cast<double>(split * parts); }
  std::int64_t fragment_m() const { return tm % 4 == 0 ? 4 : 2; }
};

// The implicit-GEMM Conv's tile table (host/ops/conv_ops.cpp): how many tiles it has.
std::size_t conv_tile_count();

// Tests only: while one lives, every implicit-GEMM Conv launch uses tile `index` of the table instead of
// the one its layer and device would pick (the workgroup must still fit the device), so the GPU tests
// run each tile on layers small enough for lavapipe. Restores the previous choice when destroyed.
// Not thread-safe: launches on other threads see it too.
class ScopedConvTile {
 public:
  // parts > 1 also splits K over that many workgroups per block (fewer where K has fewer BK steps).
  explicit ScopedConvTile(std::size_t index, std::int64_t parts = 1);
  // Any tile, parts included (benchmarks; check it with conv_tile_usable first).
  explicit ScopedConvTile(const ConvTile& tile);
  ~ScopedConvTile();
  ScopedConvTile(const ScopedConvTile&) = delete;
  ScopedConvTile& operator=(const ScopedConvTile&) = delete;

 private:
  std::optional<ConvTile> saved_;
};

// Whether roots/conv2d.glsl can run tile t on the device: even micro-tiles that divide the block, 1, 2
// or 4 slices, a workgroup of whole B rows (its invocations a multiple of bn), at most 16 parts, and
// the device's invocation and shared-memory limits.
bool conv_tile_usable(const ConvTile& t, const DevicePlan& device);

// Direct Conv tiles (roots/conv2d_patch.glsl): a block of bm output channels x th output rows x tw output
// columns of one image per workgroup, rm channels x rw neighbouring outputs of a row per invocation, ck
// input channels per staged step, and `parts` workgroups per block that each walk 1/parts of the input
// channels and add their partial sums through memory.
struct PatchTile {
  std::int64_t bm, rm, th, tw, rw, ck, parts = 1;
  std::int64_t invocations() const { return (bm / rm) * th * (tw / rw); }
};

// Benchmarks and tests: while one lives, every Conv the patch root can take runs on `tile` (parts
// included) where it fits the device, and no other Conv does; with std::nullopt no Conv does (the
// implicit GEMM's own tile rule then shows). Not thread-safe, as ScopedConvTile.
class ScopedPatchTile {
 public:
  explicit ScopedPatchTile(std::optional<PatchTile> tile);
  ~ScopedPatchTile();
  ScopedPatchTile(const ScopedPatchTile&) = delete;
  ScopedPatchTile& operator=(const ScopedPatchTile&) = delete;

 private:
  bool saved_set_;
  std::optional<PatchTile> saved_;
};

// Whether a ScopedPatchTile with a tile lives: the Convs the patch root can take skip the other roots'
// rules (the implicit GEMM's and the cooperative matrices').
bool patch_tile_forced();

// Whether tile t has the shape roots/conv2d_patch.glsl needs: positive sizes, rm a multiple of 4
// dividing bm, rw dividing tw, at most 16 parts, and within the device's invocations. (A Conv takes it
// only where its patch, weights and loads per invocation also fit: host/ops/conv_patch.cpp.)
bool patch_tile_usable(const PatchTile& t, const DevicePlan& device);

// A list attribute with exactly `count` values, each >= `min_value`; `fallback` when the node has none
// (an empty fallback makes the attribute required). Errors name the attribute and the bad value.
Result<std::vector<std::int64_t>> nn_list(const OpAttrs& attrs, std::string_view name, std::size_t count,
                                          std::int64_t min_value, std::vector<std::int64_t> fallback);

// A scalar attribute that must be a whole number >= `min_value` (group, ceil_mode, ...).
Result<std::int64_t> nn_int(const OpAttrs& attrs, std::size_t index, std::string_view name, std::int64_t min_value);

// A scalar attribute that must be 0 or 1 (transA, ceil_mode, count_include_pad).
Result<bool> nn_flag(const OpAttrs& attrs, std::size_t index, std::string_view name);

// kUnsupported unless `info` is 4-D: "X must be 4-D [N, C, H, W] (2-D Conv only), got [2, 3]".
Status require_nchw(const TensorInfo& info, const char* role, const char* what);

// kInvalidArgument unless inputs 1.. have input 0's dtype ("W is f16 but X is f32").
Status require_same_dtype(std::span<const TensorInfo> inputs, std::span<const char* const> roles);

// One spatial axis of a sliding window (convolution or pooling).
struct WindowAxis {
  std::int64_t kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0;
  std::int64_t span() const { return (kernel - 1) * dilation + 1; }  // the dilated window's extent
};

// Conv and ConvTranspose (host/ops/conv_ops.cpp): X [n, c, h, w] -> Y [n, m, oh, ow]; each of `group`
// groups maps cg input channels to mg output channels.
struct ConvShape {
  std::int64_t n = 1, c = 1, h = 1, w = 1, m = 1, oh = 1, ow = 1, group = 1, cg = 1, mg = 1;
  std::array<WindowAxis, 2> axes;
  bool has_bias = false;
};

// The 2-D window from the attributes: `kernel` gives the kernel size (from W or kernel_shape); lists
// "pads" [top, left, bottom, right], "strides" and, when `dilations`, "dilations".
Result<std::array<WindowAxis, 2>> read_window(const OpAttrs& attrs, std::array<std::int64_t, 2> kernel, bool dilations);

// Output extent of a sliding window over `in` (ONNX Conv/MaxPool/AveragePool): floor((in + pads - span)
// / stride) + 1, or with `ceil_mode` the ceiling, minus one when the last window would start past the
// input and its begin pad. Errors say which axis and why the output would be empty.
Result<std::int64_t> window_output(std::int64_t in, const WindowAxis& axis, bool ceil_mode, const char* axis_name);

// "-3" (a GLSL int literal).
std::string glsl_int(std::int64_t value);
// An exact float constant through the prelude's VKF_F32(bits).
std::string glsl_float(float value);

}  // namespace vkfuse
