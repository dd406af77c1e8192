// Helpers the kernel-op tables share: defines, dispatch sizes, batch broadcasting, shape checks.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "backend/device_plan.h"
#include "host/op_def.h"

namespace vkfuse {

// "123u"
std::string glsl_uint(std::int64_t value);
// Workgroups for `items` invocations of `workgroup_size`, clamped to the device (templates loop).
std::uint32_t grid_for(std::int64_t items, std::uint32_t workgroup_size, const DevicePlan& device);

// The GLSL expression (in `var`) of the element offset of batch `var` of a tensor whose batch
// dimensions `batch` broadcast to `out_batch`, each batch holding `matrix` elements.
std::string batch_offset_glsl(const Shape& out_batch, const Shape& batch, std::int64_t matrix, const std::string& var);
// The same on the CPU.
std::int64_t batch_offset(const Shape& out_batch, const Shape& batch, std::int64_t matrix, std::int64_t index);

// a / b rounded up (tiles, parts, workgroups), for positive b.
inline constexpr std::int64_t div_up(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Invocations that fill the GPU: its compute units times 256 each (DevicePlan::compute_units). Below it a
// product is latency-bound. The GEMM and Conv tile rules both start from it.
inline std::int64_t fill_invocations(const DevicePlan& device) { return std::int64_t{device.compute_units} * 256; }
// The same count in workgroups of 256 or more, one per compute unit: below it a product leaves units idle,
// which is where the K splits across workgroups (GEMM and Conv) and the deeper split-K slices apply.
inline std::int64_t fill_workgroups(const DevicePlan& device) { return device.compute_units; }

// Split K only where each slice's (or workgroup's) share of K is at least this many steps of bk: shorter
// and the partial-sum exchange costs more than the extra invocations win.
inline constexpr std::int64_t kMinSplitSteps = 2;
// A second workgroup per SM pays where each part of a split K walks at least this many steps: it hides
// the latency of long K walks; on short ones the partial sums' hand-off costs more than it hides.
inline constexpr std::int64_t kLongSplitSteps = 8;
// Whether K split so that the product has `workgroups` workgroups (its tiles times the parts of K), each
// walking `steps` steps of bk, keeps the GPU filled without crowding it: one workgroup per SM
// (fill_workgroups) with kMinSplitSteps steps each, or two per SM with kLongSplitSteps. The Conv and
// cooperative-matrix rules take the most parts of 16, 8, 4 or 2 for which it holds.
bool split_fills_gpu(std::int64_t workgroups, std::int64_t steps, const DevicePlan& device);
// The cooperative-matrix root splits a Conv's K across workgroups only where K is at least this long.
inline constexpr std::int64_t kSplitLongK = 1024;

// Whether a split-K tile of `split` slices steps 64 deep along K: where its product has fewer
// workgroups than the GPU has SMs (one workgroup per SM, so the deeper slices' shared memory costs no
// occupancy; the time is the walk along K) and K gives every slice two such steps. The caller checks
// that the deeper slices fit its shared memory. Measured on the H100: kernel_support.cpp with_depth.
bool split_k_steps_64_deep(std::int64_t workgroups, std::int64_t k, std::int64_t split, const DevicePlan& device);

// A matrix product Y[b] = A[b] * B[b] (b < batch, Y contiguous [batch, m, n]) as the GEMM roots see it,
// whichever op it comes from (MatMul, Gemm): element (m, k) of batch b's A sits at
// a_batch(b) + m * a_stride_m + k * a_stride_k, element (k, n) of B likewise.
struct GemmProblem {
  std::int64_t batch = 1, m = 1, n = 1, k = 1;
  std::int64_t a_stride_m = 1, a_stride_k = 1;
  std::int64_t b_stride_k = 1, b_stride_n = 1;
  std::string a_batch = "0u", b_batch = "0u";  // GLSL element offsets, in the macro parameter (b)
  // The gcd of A's / B's batch offsets (a view's: its offset and batch strides); 0: whole matrices.
  std::int64_t a_batch_step = 0, b_batch_step = 0;
  std::string value = "(acc)";  // GLSL of the value stored for dot product (acc) of element (m, n)
  // A's and B's storage: both f16, cooperative matrices where the device has them; f32 operands whose rows
  // are whole vec4s load as vec4s on the tiled root.
  DType a_dtype = DType::kF32, b_dtype = DType::kF32;
  bool both(DType dtype) const { return a_dtype == dtype && b_dtype == dtype; }
  // A Conv of one group on roots/gemm_coopmat.glsl (only there): A is its W (input 1), B the im2col
  // matrix of its X (input 0); `conv_gather` holds the window defines B is gathered with (VKF_CONV_*),
  // empty where B is X's planes as they are (1x1, stride 1, no pads: read through b_stride_k).
  bool conv = false;
  std::vector<std::pair<std::string, std::string>> conv_gather;
  int a_input = 0, b_input = 1;  // which of the op's inputs A and B are (KernelLaunch::input_reads)
  // An operand computed element by element in its loads (TensorInfo::load_cost): the launch reports no
  // reads of it on the cooperative-matrix root (gemm_launch), which then takes no elements.
  bool a_computed = false, b_computed = false;
  // A LayerNorm folded into the product (LayerNormMatMul, host/ops/matmul_ops.cpp): the tiled root
  // subtracts each row's first element from A as it stages it, sums the shifted row and its squares
  // as it goes, and stores r * (acc - (mean - shift) * C[n]) + Bias[n] (C and Bias the op's inputs 2
  // and 3; r = 1 / sqrt(var + epsilon)). Always the tiled root.
  bool row_norm = false;
  float row_norm_epsilon = 0.0f;
};

// Which GEMM root, and its blocking.
enum class GemmKernel {
  kTiled,   // roots/gemm_tiled.glsl: bm x bn tiles, K in bk steps through shared memory, tm x tn per invocation
  kSkinny,  // roots/gemm_skinny.glsl: bm (<= 4) rows x bn columns, k_lanes invocations per column split K
  kCoopmat, // roots/gemm_coopmat.glsl: bm x bn tiles of warps_m x warps_n subgroups on 16x16x16 fp16 matrices
};
// One blocking of roots/gemm_tiled.glsl: bm x bn output tiles, K in bk steps, tm x tn per invocation,
// `split` slices of (bm / tm) * (bn / tn) invocations each multiplying 1 / split of every staged K slice
// (split K inside the workgroup; 1, 2 or 4, dividing bk).
// `groups` workgroups per tile split K between them as well (split K across workgroups: each walks its
// share of K and leaves its partial sums in memory; the last to finish a tile adds them and stores).
struct GemmTile {
  std::uint32_t bm = 0, bn = 0, bk = 0, tm = 0, tn = 0, split = 1, groups = 1;
};
// One blocking of roots/gemm_coopmat.glsl: tile x tile outputs of warps_m x warps_n subgroups (1, 2 or
// 4 each way; each owns a block of 16x16 accumulators), K in bk steps, warps_k subgroups per block
// splitting each staged K slice (1, 2 or 4); `groups` workgroups per tile split K between them as
// well (as GemmTile's). choose_coopmat_tiling takes a shape of its table only where the blocking gets
// at least `min_stages` buffers of staged slices; a forced tile ignores it.
struct CoopmatTile {
  std::uint32_t tile = 0, bk = 0, warps_k = 1, warps_m = 2, warps_n = 2, groups = 1, min_stages = 1;
};
struct GemmTiling {
  GemmKernel kernel = GemmKernel::kTiled;
  std::uint32_t bm = 0, bn = 0, bk = 0;
  std::uint32_t tm = 0, tn = 0;   // kTiled: the register block of one invocation (multiples of 4)
  std::uint32_t stages = 1;       // kTiled, kCoopmat: shared-memory buffers of staged slices (1 or 2)
  std::uint32_t split = 1;        // kTiled: slices of invocations splitting each staged K slice
  std::uint32_t groups = 1;       // kTiled, kCoopmat: workgroups splitting K for each tile
  std::uint32_t k_lanes = 1;      // kSkinny
  std::uint32_t warps_m = 1, warps_n = 1;  // kCoopmat: subgroups down and across a tile
  std::uint32_t warps_k = 1;               // kCoopmat: subgroups splitting each staged K slice per block
  std::uint32_t workgroup_size = 0;
  std::uint32_t shared_bytes = 0;
};

// The blocking for `problem` on `device`: kSkinny for at most 4 rows; kCoopmat for f16 operands where the
// device has cooperative matrices (128x128, 64x64 or 32x32 tiles, K split between subgroups where that
// fills the GPU, 64 deep where that pads K no more than 32 deep does); otherwise the tile (with split K where K is long) that fills the GPU with invocations
// and, among those that do, reuses each load the most; 16 deep where its buffers of that fit (two
// stages for slices of up to 64 invocations, one for larger), split-K tiles 32 or 64 deep (host/ops/kernel_support.cpp says how).
GemmTiling choose_gemm_tiling(const GemmProblem& problem, const DevicePlan& device);
// The kCoopmat blocking for `problem` where the device has fp16 cooperative matrices, the operands are
// f16, the tile fits and no GEMM tile is forced; else none. A forced coopmat tile is given whatever the
// problem; otherwise a Conv's K is split across workgroups where it is at least kSplitLongK and the
// tiles (32x32 only) leave SMs idle (split_fills_gpu); otherwise a gathered Conv (one that is not a plain
// 1x1) of that K whose 32x32 tiles would leave the GPU's resident subgroups short takes the tile, whole
// or 32x32 over up to 16 workgroups, that keeps the most of them busy. Two buffers of staged slices where
// they fit, one for a gathered B.
std::optional<GemmTiling> choose_coopmat_tiling(const GemmProblem& problem, const DevicePlan& device);
// For benchmarks and tests that compare blockings: while set, every problem of more than 4 rows gets
// `tile` (two stages where they fit the device and a slice has at most 64 invocations, else one) instead of the rule's choice; std::nullopt
// restores the rule. Process-wide and not thread-safe: set it before building sessions, from one thread.
// Fails (and leaves the setting alone) when the tile is not a valid blocking on `device`.
Status force_gemm_tile(std::optional<GemmTile> tile, const DevicePlan& device);
// The same for roots/gemm_coopmat.glsl: while set, f16 products on a device with cooperative matrices
// get `tile` (two buffers where they fit and B is not gathered). Fails where the tile is not a valid
// blocking on `device` with one buffer.
Status force_coopmat_tile(std::optional<CoopmatTile> tile, const DevicePlan& device);
// The shapes choose_coopmat_tiling picks from, for tests that run each.
std::span<const CoopmatTile> coopmat_tiles();
// The launch of the chosen root: template, defines (sizes, strides, tiling) and a 1-D grid of tiles,
// clamped to the device (the roots loop over the rest).
KernelLaunch gemm_launch(const GemmProblem& problem, const DevicePlan& device);

// kInvalidArgument naming the op's input when its dtype is not f32 or f16.
Status require_float(std::span<const TensorInfo> inputs, std::size_t index, const char* role);

}  // namespace vkfuse
