#include "host/ops/kernel_support.h"

#include <algorithm>
#include <bit>
#include <iterator>

#include "codegen/broadcast_map.h"
#include "host/graph.h"

namespace vkfuse {

std::string glsl_uint(std::int64_t value) { return std::to_string(value) + "u"; }

std::uint32_t grid_for(std::int64_t items, std::uint32_t workgroup_size, const DevicePlan& device) {
  const std::int64_t groups = (items + workgroup_size - 1) / workgroup_size;
  return static_cast<std::uint32_t>(std::clamp<std::int64_t>(groups, 1, device.max_groups_x));
}

std::string batch_offset_glsl(const Shape& out_batch, const Shape& batch, std::int64_t matrix, const std::string& var) {
  const std::string index = broadcast_index_glsl(broadcast_map(out_batch, batch), var);
  return "((" + index + ") * " + glsl_uint(matrix) + ")";
}

std::int64_t batch_offset(const Shape& out_batch, const Shape& batch, std::int64_t matrix, std::int64_t index) {
  std::int64_t offset = 0, stride = 1;
  const std::size_t lead = out_batch.size() - batch.size();
  for (std::size_t d = out_batch.size(); d-- > lead;) {
    const std::int64_t coord = index % out_batch[d];
    index /= out_batch[d];
    if (batch[d - lead] != 1) offset += coord * stride;
    stride *= batch[d - lead];
  }
  return offset * matrix;
}

namespace {

// Tiles of roots/gemm_tiled.glsl, largest first. 128x128 with an 8x8 register block per invocation is
// the classic fp32 SGEMM shape: 64 FMAs for every four vec4 shared-memory reads, 256 invocations. The
// smaller tiles keep enough workgroups in flight when M * N is small (64x64 with the same 8x8 block;
// 32x32 with 4x4 for the smallest products). Each is 16 deep where two stages of that fit the device
// (128x128x16: 33 KB, an H100's 48 KB yes, lavapipe's 32 KB no), else 8: a deeper step halves the
// barriers per FMA and gives the next step's global loads twice the multiply to arrive behind.
struct TileShape {
  std::uint32_t bm, bn, tm, tn;
};
constexpr TileShape kTiles[] = {{128, 128, 8, 8}, {64, 64, 8, 8}, {32, 32, 4, 4}};
constexpr std::uint32_t kDeepBk = 16, kShallowBk = 8;

// A tile is taken only if it yields this many workgroups (or is the smallest that fits): about one
// per streaming multiprocessor of the largest GPUs (an H100 has 132). Fewer leaves cores idle, which
// costs more than the smaller tiles' lower arithmetic intensity.
constexpr std::int64_t kFillWorkgroups = 128;

// At most this many rows go to roots/gemm_skinny.glsl (a row's partial sums live in registers).
constexpr std::int64_t kSkinnyMaxRows = 4;

// force_gemm_tile's setting.
std::optional<GemmTile> g_forced_tile;

std::int64_t div_up(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::uint32_t tiled_threads(const GemmTile& t) { return (t.bm / t.tm) * (t.bn / t.tn); }

std::uint32_t tiled_shared_bytes(const GemmTile& t, std::uint32_t stages) {
  // vec4 rows of bm / 4 + 1 (A) and bn / 4 + 1 (B) for each of bk, per stage (the +1 is padding).
  return stages * t.bk * ((t.bm / 4 + 1) + (t.bn / 4 + 1)) * 16;
}

bool tile_fits(const GemmTile& t, const DevicePlan& device) {
  return tiled_threads(t) <= device.max_workgroup_invocations && tiled_shared_bytes(t, 1) <= device.shared_memory_bytes;
}

// The tile of `shape` on `device`: 16 deep if two stages of that fit and the tile has 64 invocations,
// else 8. Measured on the H100 (f32, vkfuse_bench_gemm --tiles, 2026-11-22): 64x64 went from 20.3 to
// 27.9 TFLOP/s at 1024^3 with 16-deep slices, while 128x128 (256 invocations, 8x8 each) dropped from
// 38.9 to 31.4 at 4096^3: its 8 extra prefetch registers per invocation cost occupancy.
GemmTile with_depth(const TileShape& shape, const DevicePlan& device) {
  GemmTile t{shape.bm, shape.bn, kDeepBk, shape.tm, shape.tn};
  if (tiled_threads(t) > 64 || tiled_shared_bytes(t, 2) > device.shared_memory_bytes) t.bk = kShallowBk;
  return t;
}

}  // namespace

GemmTiling choose_gemm_tiling(const GemmProblem& p, const DevicePlan& device) {
  GemmTiling tiling;
  if (p.m <= kSkinnyMaxRows) {
    // B is read once; consecutive invocations take consecutive elements of it: 32 columns by
    // workgroup / 32 lanes of K when n is contiguous, else 32 lanes of K for each column.
    tiling.kernel = GemmKernel::kSkinny;
    tiling.workgroup_size = std::bit_floor(std::min<std::uint32_t>(256, device.max_workgroup_invocations));
    const std::uint32_t run = std::min<std::uint32_t>(32, tiling.workgroup_size);
    const bool n_fast = p.b_stride_k != 1;
    tiling.bm = static_cast<std::uint32_t>(std::max<std::int64_t>(p.m, 1));  // VKF_ROWS sizes an array
    tiling.bn = n_fast ? run : tiling.workgroup_size / run;
    tiling.k_lanes = tiling.workgroup_size / tiling.bn;
    tiling.shared_bytes = tiling.bm * tiling.workgroup_size * 4;
    return tiling;
  }
  // The last tile (32x32x8: 64 invocations, 4.6 KB) fits every Vulkan device.
  const TileShape& last = kTiles[std::size(kTiles) - 1];
  GemmTile t{last.bm, last.bn, kShallowBk, last.tm, last.tn};
  if (g_forced_tile && tile_fits(*g_forced_tile, device)) {
    t = *g_forced_tile;
  } else {
    for (const TileShape& shape : kTiles) {
      const GemmTile candidate = with_depth(shape, device);
      if (!tile_fits(candidate, device)) continue;
      t = candidate;
      if (p.batch * div_up(p.m, t.bm) * div_up(p.n, t.bn) >= kFillWorkgroups) break;
    }
  }
  tiling.bm = t.bm;
  tiling.bn = t.bn;
  tiling.bk = t.bk;
  tiling.tm = t.tm;
  tiling.tn = t.tn;
  tiling.workgroup_size = tiled_threads(t);
  tiling.stages = tiled_shared_bytes(t, 2) <= device.shared_memory_bytes ? 2 : 1;
  tiling.shared_bytes = tiled_shared_bytes(t, tiling.stages);
  return tiling;
}

Status force_gemm_tile(std::optional<GemmTile> tile, const DevicePlan& device) {
  if (tile) {
    const GemmTile& t = *tile;
    const std::string name = std::to_string(t.bm) + "x" + std::to_string(t.bn) + "x" + std::to_string(t.bk) + " with " +
                             std::to_string(t.tm) + "x" + std::to_string(t.tn) + " per invocation";
    // roots/gemm_tiled.glsl: register blocks of vec4s; every invocation loads the same number of
    // elements of each slice; slices read along K in runs of 8 (or all of a shallower one).
    const bool shaped = t.tm > 0 && t.tn > 0 && t.bk > 0 && (t.bk <= 8 || t.bk % 8 == 0) && t.tm % 4 == 0 && t.tn % 4 == 0 &&
                        t.bm % t.tm == 0 &&
                        t.bn % t.tn == 0 && (t.bm * t.bk) % tiled_threads(t) == 0 &&
                        (t.bk * t.bn) % tiled_threads(t) == 0;
    if (!shaped)
      return make_error(ErrorCode::kInvalidArgument,
                        "GEMM tile " + name + ": tm and tn must be multiples of 4 dividing bm and bn, bk at most 8 or a "
                        "multiple of 8, and each slice (bm x bk, bk x bn) a multiple of the " + std::to_string(tiled_threads(t)) + " invocations");
    if (!tile_fits(t, device))
      return make_error(ErrorCode::kInvalidArgument,
                        "GEMM tile " + name + " needs " + std::to_string(tiled_threads(t)) + " invocations and " +
                        std::to_string(tiled_shared_bytes(t, 1)) + " B of shared memory; the device has " +
                        std::to_string(device.max_workgroup_invocations) + " and " +
                        std::to_string(device.shared_memory_bytes) + " B");
  }
  g_forced_tile = tile;
  return {};
}

KernelLaunch gemm_launch(const GemmProblem& p, const DevicePlan& device) {
  const GemmTiling tiling = choose_gemm_tiling(p, device);
  const std::int64_t tiles_m = div_up(p.m, tiling.bm), tiles_n = div_up(p.n, tiling.bn);
  KernelLaunch launch;
  launch.workgroup_size = tiling.workgroup_size;
  launch.defines = {{"VKF_BATCH", glsl_uint(p.batch)},
                    {"VKF_M", glsl_uint(p.m)},
                    {"VKF_N", glsl_uint(p.n)},
                    {"VKF_K", glsl_uint(p.k)},
                    {"VKF_A_BATCH(b)", p.a_batch},
                    {"VKF_B_BATCH(b)", p.b_batch},
                    {"VKF_A_STRIDE_M", glsl_uint(p.a_stride_m)},
                    {"VKF_A_STRIDE_K", glsl_uint(p.a_stride_k)},
                    {"VKF_B_STRIDE_K", glsl_uint(p.b_stride_k)},
                    {"VKF_B_STRIDE_N", glsl_uint(p.b_stride_n)},
                    // Which way consecutive invocations load: along the contiguous dimension.
                    {"VKF_A_K_FAST", p.a_stride_m != 1 ? "1" : "0"},
                    {"VKF_B_N_FAST", p.b_stride_k != 1 ? "1" : "0"},
                    {"VKF_TILES_M", glsl_uint(tiles_m)},
                    {"VKF_TILES_N", glsl_uint(tiles_n)},
                    {"VKF_GEMM_VALUE(m, n, acc)", p.value}};
  if (tiling.kernel == GemmKernel::kSkinny) {
    launch.root = "roots/gemm_skinny.glsl";
    launch.defines.insert(launch.defines.end(), {{"VKF_ROWS", glsl_uint(tiling.bm)},
                                                 {"VKF_COLS", glsl_uint(tiling.bn)},
                                                 {"VKF_K_LANES", glsl_uint(tiling.k_lanes)}});
  } else {
    launch.root = "roots/gemm_tiled.glsl";
    launch.defines.insert(launch.defines.end(), {{"VKF_BM", glsl_uint(tiling.bm)},
                                                 {"VKF_BN", glsl_uint(tiling.bn)},
                                                 {"VKF_BK", glsl_uint(tiling.bk)},
                                                 {"VKF_TM", glsl_uint(tiling.tm)},
                                                 {"VKF_TN", glsl_uint(tiling.tn)},
                                                 {"VKF_STAGES", std::to_string(tiling.stages)}});
  }
  launch.workgroups = {grid_for(p.batch * tiles_m * tiles_n, 1, device), 1, 1};
  return launch;
}

Status require_float(std::span<const TensorInfo> inputs, std::size_t index, const char* role) {
  const DType dtype = inputs[index].dtype;
  if (dtype == DType::kF32 || dtype == DType::kF16) return {};
  return make_error(ErrorCode::kInvalidArgument,
                    std::string(role) + " (input " + std::to_string(index) + ") is " + dtype_name(dtype) + ", expected f32 or f16");
}

}  // namespace vkfuse
