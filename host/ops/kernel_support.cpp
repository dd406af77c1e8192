#include "host/ops/kernel_support.h"

#include <algorithm>
#include <bit>
#include <iterator>
#include <tuple>

#include "codegen/broadcast_map.h"
#include "codegen/glsl_types.h"
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

// Tiles of roots/gemm_tiled.glsl. 128x128 with an 8x8 register block per invocation is the classic fp32
// SGEMM shape: 64 FMAs for every four vec4 shared-memory reads, 256 invocations. The smaller tiles keep
// the GPU filled when M * N is small (64x64 with the same 8x8 block; 32x32 with 4x4), and their split-K
// forms multiply the invocations again for the smallest products with a long K (batch-1 transformer
// layers: 197 x 768 outputs over K = 3072): 2 slices of 64 invocations over each staged K slice
// (partial sums added through shared memory), or 32x32 tiles split over 4, 8 or 16 workgroups (partial
// sums through memory, added by the last workgroup of each tile). Each is 16 deep where its buffers of
// that fit the device (with_depth), else 8: two stages for slices of up to 64 invocations, one for the
// 128x128 tile (tile_stages: two cost it registers and half its workgroups per SM).
// Split over workgroups replaced 32x32 tiles of 4 slices (256 invocations each walking all of K): the
// tile that fills the GPU won (docs/tuning-log.md, "kTiles").
// 128x256 with an 8x16 block (first in the table) halves the shared-memory reads of B per FMA again; its
// 128 accumulators leave room for one workgroup per SM, so it takes part only 16 deep and where its
// workgroups fill their last round on the GPU (wave_filled) (docs/tuning-log.md, "kTiles").
constexpr GemmTile kTiles[] = {{128, 256, 0, 8, 16, 1},  {128, 128, 0, 8, 8, 1},   {64, 64, 0, 8, 8, 1},    {32, 64, 0, 4, 8, 1},
                               {32, 32, 0, 4, 4, 1},     {64, 64, 0, 8, 8, 2},    {32, 32, 0, 4, 4, 2},    {32, 64, 0, 4, 8, 1, 2},
                               {32, 32, 0, 4, 4, 1, 4},  {32, 32, 0, 4, 4, 1, 8}, {32, 32, 0, 4, 4, 1, 16}};
constexpr std::uint32_t kDeepBk = 16, kShallowBk = 8;

// Below fill_invocations a product is latency-bound (docs/tuning-log.md, "fill_invocations").

// 8x8 blocks without split K fill the GPU from half as many busy invocations, 2^14 (an H100's 132 SMs x
// 256, halved and rounded down so that 1024^2 outputs count), in at least one workgroup per SM: 64
// accumulators per invocation keep an SM busy with fewer of them (docs/tuning-log.md, "kFillWholeK").
constexpr double kFillWholeK = 16384.0;

// 4x8 blocks (32 accumulators, 32x64 tiles of 64 invocations) fill it from 24K busy invocations, between
// the two, and take part only in products of at most kWideBlockMaxRows rows (per batch) over K of at
// least kWideBlockMinK: a batch-1 transformer's projections (docs/tuning-log.md, "kFillWideBlock").
constexpr double kFillWideBlock = 24576.0;
constexpr std::int64_t kWideBlockMaxRows = 256, kWideBlockMinK = 128;

// Split K across workgroups: at most this many per tile.
constexpr std::uint32_t kMaxSplitGroups = 16;

// At most this many rows go to roots/gemm_skinny.glsl (a row's partial sums live in registers).
constexpr std::int64_t kSkinnyMaxRows = 4;


// Tiles of 128 accumulators per invocation or more: one workgroup per SM (registers).
constexpr std::uint32_t kOneBlockPerSm = 128;
// Such a tile competes where its workgroups fill at least this share of the rounds of fill_workgroups
// they take (2048^3's 128 workgroups: 97%; 3072^3's 288: 73%).
constexpr double kMinWaveShare = 0.85;

bool wave_filled(std::int64_t workgroups, const DevicePlan& device) {
  const std::int64_t rounds = div_up(workgroups, fill_workgroups(device));
  return static_cast<double>(workgroups) >= kMinWaveShare * static_cast<double>(rounds * fill_workgroups(device));
}

// A count of busy invocations tuned at kDefaultComputeUnits, scaled to the device's compute units (the
// same value exactly at the default).
double scaled_fill(double tuned, const DevicePlan& device) {
  return static_cast<double>(fill_invocations(device)) * tuned / (static_cast<double>(kDefaultComputeUnits) * 256.0);
}

// force_gemm_tile's setting.
std::optional<GemmTile> g_forced_tile;

std::uint32_t slice_threads(const GemmTile& t) { return (t.bm / t.tm) * (t.bn / t.tn); }
std::uint32_t tiled_threads(const GemmTile& t) { return slice_threads(t) * t.split; }

std::uint32_t tiled_shared_bytes(const GemmTile& t, std::uint32_t stages) {
  // vec4 rows of bm / 4 + 1 (A) and bn / 4 + 1 (B) for each of bk, per stage (the +1 is padding), and
  // the partial sums of slices 1.. (split K).
  return stages * t.bk * ((t.bm / 4 + 1) + (t.bn / 4 + 1)) * 16 + (t.split - 1) * t.bm * t.bn * 4;
}

bool tile_fits(const GemmTile& t, const DevicePlan& device) {
  return tiled_threads(t) <= device.max_workgroup_invocations && tiled_shared_bytes(t, 1) <= device.shared_memory_bytes;
}

// The shared-memory buffers of tile t: two (the next step's slices stored while this one multiplies) where
// they fit and a slice has at most 64 invocations; one for larger slices, where two cost registers and
// half the workgroups per SM (docs/tuning-log.md, "tile_stages").
std::uint32_t wanted_stages(const GemmTile& t) { return slice_threads(t) <= 64 ? 2 : 1; }
std::uint32_t tile_stages(const GemmTile& t, const DevicePlan& device) {
  return tiled_shared_bytes(t, wanted_stages(t)) <= device.shared_memory_bytes ? wanted_stages(t) : 1;
}

// `shape` with its depth for `p`: 16 where its buffers (tile_stages) of that fit, else 8; a deeper step
// halves the barriers per FMA (a slice of at most 64 invocations stays 8 deep in two stages where two of
// 16 do not fit).
// Split-K tiles, whose time is the walk along a long K, go deeper where two stages fit and every slice
// still gets kMinSplitSteps steps: 32 deep, or 64 where the product has fewer workgroups than the GPU has
// SMs (one per SM: its shared memory costs no occupancy) (docs/tuning-log.md, "with_depth").
GemmTile with_depth(const GemmTile& shape, const GemmProblem& p, const DevicePlan& device) {
  GemmTile t = shape;
  t.bk = kDeepBk;
  if (tiled_shared_bytes(t, wanted_stages(t)) > device.shared_memory_bytes) {
    t.bk = kShallowBk;
    return t;
  }
  if (t.split == 1) return t;
  const std::int64_t workgroups = p.batch * div_up(p.m, t.bm) * div_up(p.n, t.bn);
  for (const std::uint32_t bk : {64u, 32u}) {
    GemmTile deeper = t;
    deeper.bk = bk;
    if (bk == 64 && !split_k_steps_64_deep(workgroups, p.k, t.split, device)) continue;
    if (tiled_shared_bytes(deeper, 2) <= device.shared_memory_bytes && p.k >= kMinSplitSteps * t.split * bk) return deeper;
  }
  return t;
}

// Whether `operand` ('A' or 'B') reads as runs of `elements` along its contiguous dimension, each starting
// at a multiple of `elements` (16 bytes: 4 f32 or 8 f16): that dimension's stride 1, its extent and the
// stride between its rows multiples of `elements`, and so the batches' offsets (whole matrices, or a
// view's offset and batch strides).
bool runs_aligned(const GemmProblem& p, char operand, std::int64_t elements) {
  if ((operand == 'A' ? p.a_batch_step : p.b_batch_step) % elements != 0) return false;
  if (operand == 'A') {
    const bool k_fast = p.a_stride_m != 1;
    return (k_fast ? p.a_stride_k : p.a_stride_m) == 1 && (k_fast ? p.k : p.m) % elements == 0 &&
           (k_fast ? p.a_stride_m : p.a_stride_k) % elements == 0;
  }
  const bool n_fast = p.b_stride_k != 1;
  return (n_fast ? p.b_stride_n : p.b_stride_k) == 1 && (n_fast ? p.n : p.k) % elements == 0 &&
         (n_fast ? p.b_stride_k : p.b_stride_n) % elements == 0;
}

}  // namespace

bool split_fills_gpu(std::int64_t workgroups, std::int64_t steps, const DevicePlan& device) {
  return (workgroups <= fill_workgroups(device) && steps >= kMinSplitSteps) ||
         (workgroups <= 2 * fill_workgroups(device) && steps >= kLongSplitSteps);
}

bool split_k_steps_64_deep(std::int64_t workgroups, std::int64_t k, std::int64_t split, const DevicePlan& device) {
  return split > 1 && workgroups < fill_workgroups(device) && k >= kMinSplitSteps * split * 64;
}

// First fill the GPU, then reuse (the Conv rule's, host/ops/conv_ops.cpp choose_conv_tile). For tile t:
//   launched = batch x tiles x workgroups per tile x invocations per workgroup (all slices),
//   busy     = outputs / (tm * tn / (split x workgroups per tile)), the invocations with real outputs,
//   reuse    = outputs / launched, real outputs per launched invocation (fewer shared-memory reads and
//              loads per FMA the larger it is; split K divides it by the slices or workgroups).
// Tiles whose busy invocations reach fill_invocations (or kFillWholeK, scaled, for 8x8 blocks without split K in
// at least one workgroup per SM, and for 8x16 blocks whose rounds are filled; kFillWideBlock for 4x8
// blocks) compete on reuse; when none
// does, the most busy invocations win, ties to more reuse. 8x16 blocks take part only with their rounds
// filled (wave_filled). Remaining ties go to less
// padding, then to the larger tile (fewer loads per output: 128x128 over 64x64 8x8 on large squares),
// then to the table's order. Split-K tiles take part only where K gives each slice or workgroup
// kMinSplitSteps steps. H100 plan (48 KB): 2048^2, 4096^2, 8192^2 128x256x16 (one stage; 3072^2, 73% of its
// rounds, 128x128x16); 1024^2 64x64x16 8x8 (16K
// invocations, filled without split K); convnext_tiny's 3136 x 384 outputs over K 96 64x64x16; vit_b_16's 197 x 768
// outputs (K 768 or 3072) 32x32x16 over 4 workgroups (38K busy), its 197 x 2304 and 197 x 3072 ones
// 32x64x16 4x8 over 2 workgroups (28K, 38K);
// convnext_tiny's 49 x 768 (K 3072) 32x32x16 over 16 workgroups (the test "MatMul picks each GEMM
// blocking ..." pins these).
// The shared memory roots/gemm_tiled.glsl takes besides its tiles for a LayerNorm folded into the
// product (GemmProblem::row_norm): a row's two statistics for each of at most 128 rows.
constexpr std::uint32_t kRowNormSharedBytes = 128 * 8;

GemmTiling choose_gemm_tiling(const GemmProblem& p, const DevicePlan& given) {
  DevicePlan row_norm_plan = given;
  row_norm_plan.shared_memory_bytes -= std::min(given.shared_memory_bytes, kRowNormSharedBytes);
  const DevicePlan& device = p.row_norm ? row_norm_plan : given;
  GemmTiling tiling;
  if (p.m <= kSkinnyMaxRows && !p.conv && !p.row_norm) {
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
  if (auto coopmat = p.row_norm ? std::nullopt : choose_coopmat_tiling(p, device)) return *coopmat;
  // 32x32x8 4x4 without split (64 invocations, 4.6 KB) fits every Vulkan device.
  GemmTile t{32, 32, kShallowBk, 4, 4, 1};
  if (g_forced_tile && tile_fits(*g_forced_tile, device) &&
      (g_forced_tile->groups == 1 || device.max_bindings >= kMinBindingsForScratch)) {
    t = *g_forced_tile;
  } else {
    struct Score {
      bool filled;
      double first, second, used;  // filled: reuse, 0; else busy, reuse; the share of real outputs
      std::int64_t block;
      auto key() const { return std::tuple(filled, first, second, used, block); }
    };
    const double outputs = static_cast<double>(p.batch * p.m * p.n);
    bool found = false;
    Score best{};
    for (const GemmTile& shape : kTiles) {
      const GemmTile c = with_depth(shape, p, device);
      if (!tile_fits(c, device)) continue;
      if (c.split * c.groups > 1 && p.k < kMinSplitSteps * c.split * c.groups * c.bk) continue;
      if (c.tm * c.tn == 32 && (p.m > kWideBlockMaxRows || p.k < kWideBlockMinK)) continue;
      if (c.groups > 1 && device.max_bindings < kMinBindingsForScratch) continue;  // no room for the scratch
      const std::int64_t workgroups = p.batch * div_up(p.m, c.bm) * div_up(p.n, c.bn) * c.groups;
      if (c.tm * c.tn >= kOneBlockPerSm && (c.bk < kDeepBk || !wave_filled(workgroups, device))) continue;
      const double launched = static_cast<double>(workgroups * tiled_threads(c));
      const double busy = outputs * c.split * c.groups / static_cast<double>(c.tm * c.tn), reuse = outputs / launched;
      // A tile of one workgroup per SM got here with its rounds filled (wave_filled).
      const bool filled = busy >= static_cast<double>(fill_invocations(device)) ||
                          (c.tm * c.tn == 32 && busy >= scaled_fill(kFillWideBlock, device)) ||
                          (c.split * c.groups == 1 && c.tm * c.tn >= 64 && busy >= scaled_fill(kFillWholeK, device) &&
                           (workgroups >= fill_workgroups(device) || c.tm * c.tn >= kOneBlockPerSm));
      const Score score{filled, filled ? reuse : busy, filled ? 0.0 : reuse,
                        outputs * c.groups / static_cast<double>(workgroups * c.bm * c.bn),
                        static_cast<std::int64_t>(c.bm) * c.bn};
      if (!found || score.key() > best.key()) t = c, best = score, found = true;
    }
  }
  tiling.bm = t.bm;
  tiling.bn = t.bn;
  tiling.bk = t.bk;
  tiling.tm = t.tm;
  tiling.tn = t.tn;
  tiling.split = t.split;
  tiling.groups = t.groups;
  tiling.workgroup_size = tiled_threads(t);
  tiling.stages = tile_stages(t, device);
  tiling.shared_bytes = tiled_shared_bytes(t, tiling.stages);
  return tiling;
}

namespace {

// Tiles of roots/gemm_coopmat.glsl: 2 x 2 subgroups (each a (tile / 2)^2 block of 16x16 accumulators),
// K in bk steps, warps_k subgroups per block splitting each staged K slice. Each slice's 16-byte runs
// divide evenly among the invocations (tile * bk / 8 a multiple of the workgroup). Only 32x32 tiles
// split K, between subgroups (warps_k) or workgroups (kSplitTile): 64x64 ones that did spilled registers
// on the NVIDIA driver and ran slower (docs/tuning-log.md, "kCoopmatTiles").
// 64x64 and 32x32 tiles also walk K 64 deep (one barrier per 64 k), but only with two buffers of staged
// slices (B not gathered); where K is not a multiple of 64 the padding (coopmat_load's `used`) keeps them
// 32 deep: taken everywhere, they lost (docs/tuning-log.md, "kCoopmatTiles").
constexpr CoopmatTile kCoopmatTiles[] = {{128, 64, 1},
                                         {128, 32, 1},
                                         {.tile = 64, .bk = 64, .min_stages = 2},
                                         {64, 32, 1},
                                         {.tile = 32, .bk = 64, .min_stages = 2},
                                         {32, 32, 1},
                                         {32, 64, 2},
                                         {32, 128, 4}};

// The one tile that splits K across workgroups (choose_coopmat_tiling, resident_gather_tiling), and its
// subgroups (2 x 2).
constexpr std::uint32_t kSplitTile = 32, kSplitTileSubgroups = 4;

// Subgroups the GPU keeps resident at once: 64 per compute unit (an NVIDIA SM). A gathered Conv's tiles wait on their loads
// (the window gather has no asynchronous copies to hide behind), so until the GPU holds this many the
// latency is what counts.
double resident_subgroups(const DevicePlan& device) { return static_cast<double>(fill_workgroups(device)) * 64.0; }

// What a coopmat blocking `t` with K over `parts` workgroups gives problem `p`: busy subgroups, outputs
// per subgroup, and the share of the products the tiles multiply that are real (not padding of M, N or
// K: K is walked in whole bk steps). Both coopmat rules score blockings on these.
struct CoopmatLoad {
  double subgroups, per_subgroup, used;
};
CoopmatLoad coopmat_load(const GemmProblem& p, const GemmTiling& t, std::uint32_t parts) {
  const std::int64_t tiles = p.batch * div_up(p.m, t.bm) * div_up(p.n, t.bn);
  const std::uint32_t blocks = t.warps_m * t.warps_n;
  const double k_used = static_cast<double>(p.k) / static_cast<double>(div_up(p.k, t.bk) * t.bk);
  return {static_cast<double>(tiles * blocks * t.warps_k * parts), static_cast<double>(t.bm * t.bn) / (blocks * t.warps_k),
          k_used * static_cast<double>(p.batch * p.m * p.n) / static_cast<double>(tiles * t.bm * t.bn)};
}

// force_coopmat_tile's setting.
std::optional<CoopmatTile> g_forced_coopmat;

// The blocking of shape `c` on `device` with at most `max_stages` buffers of staged slices (two where
// they fit; a gathered B takes one, as gathered Convs lost with two), or none where one does not fit
// (docs/tuning-log.md, "coopmat_blocking").
std::optional<GemmTiling> coopmat_blocking(const CoopmatTile& c, const DevicePlan& device, std::uint32_t max_stages) {
  GemmTiling t;
  t.kernel = GemmKernel::kCoopmat;
  t.bm = t.bn = c.tile;
  t.bk = c.bk;
  t.warps_m = c.warps_m;
  t.warps_n = c.warps_n;
  t.warps_k = c.warps_k;
  t.groups = c.groups;
  if (t.groups > 1 && device.max_bindings < kMinBindingsForScratch) return std::nullopt;  // no room for the scratch
  t.workgroup_size = t.warps_m * t.warps_n * t.warps_k * device.subgroup_size;
  if (t.workgroup_size == 0 || t.workgroup_size > device.max_workgroup_invocations || (t.bm * t.bk / 8) % t.workgroup_size != 0 ||
      t.bm % (16 * t.warps_m) != 0 || t.bn % (16 * t.warps_n) != 0)
    return std::nullopt;
  // uints of each operand's staged slice, whichever way it is staged (rows along its contiguous
  // dimension, padded by 16 bytes), the subgroups' 16x16 fp32 patches and the parts of split K.
  const std::uint32_t a = std::max(t.bm * (t.bk / 2 + 4), t.bk * (t.bm / 2 + 4));
  const std::uint32_t b = std::max(t.bk * (t.bn / 2 + 4), t.bn * (t.bk / 2 + 4));
  const std::uint32_t blocks = t.warps_m * t.warps_n, frags = (t.bm / t.warps_m / 16) * (t.bn / t.warps_n / 16);
  const std::uint32_t rest = blocks * 256 + (t.warps_k - 1) * blocks * frags * 256;
  t.stages = max_stages >= 2 && 4 * (2 * (a + b) + rest) <= device.shared_memory_bytes ? 2 : 1;
  t.shared_bytes = 4 * (t.stages * (a + b) + rest);
  if (t.shared_bytes > device.shared_memory_bytes) return std::nullopt;
  return t;
}

// A gathered Conv of long K whose tiles neither leave SMs idle (split_fills_gpu) nor, as 32x32 tiles,
// fill resident_subgroups: of every tile, whole or (32x32) over 2-16 workgroups with each part at
// least kLongSplitSteps steps, the one that keeps the most subgroups busy, up to resident_subgroups;
// among those that reach it, the most outputs per subgroup, then the fewest subgroups. None where 32x32 tiles alone fill
// it (batch 8 vgg11: whole 128x128 tiles, the reuse, run best there). Applied to every gathered Conv of
// long K instead of only after the split above, it lost (docs/tuning-log.md, "resident_gather_tiling").
std::optional<GemmTiling> resident_gather_tiling(const GemmProblem& p, const DevicePlan& device, std::int64_t min_steps) {
  const std::int64_t split_tiles = p.batch * div_up(p.m, kSplitTile) * div_up(p.n, kSplitTile);
  if (static_cast<double>(split_tiles * kSplitTileSubgroups) >= resident_subgroups(device)) return std::nullopt;
  std::optional<GemmTiling> best;
  std::tuple<bool, double, double, double> best_key{};
  for (const CoopmatTile& shape : kCoopmatTiles)
    for (std::uint32_t parts : {1u, 2u, 4u, 8u, 16u}) {
      if (parts > 1 && shape.tile != kSplitTile) break;
      CoopmatTile c = shape;
      c.groups = parts;
      auto t = coopmat_blocking(c, device, 1);
      if (!t || t->stages < shape.min_stages || (t->warps_k > 1 && p.k < kMinSplitSteps * t->bk)) continue;
      if (parts > 1 && p.k / (parts * t->bk) < min_steps) continue;
      const CoopmatLoad load = coopmat_load(p, *t, parts);
      const bool filled = load.subgroups >= resident_subgroups(device);
      const auto key = std::tuple(filled, filled ? load.per_subgroup : load.subgroups,
                                  filled ? -load.subgroups : load.per_subgroup, load.used);
      if (!best || key > best_key) best = t, best_key = key;
    }
  return best;
}

}  // namespace

std::optional<GemmTiling> choose_coopmat_tiling(const GemmProblem& p, const DevicePlan& device) {
  if (!p.both(DType::kF16) || !device.coopmat_f16 || g_forced_tile) return std::nullopt;
  const std::uint32_t max_stages = p.conv_gather.empty() ? 2 : 1;
  if (g_forced_coopmat) return coopmat_blocking(*g_forced_coopmat, device, max_stages);
  // First fill the GPU's matrix units (its compute units x 4 sub-partitions, each with its own: fill_invocations /
  // 64 busy subgroups), then the most outputs per subgroup; short of filling it, the most busy
  // subgroups, then outputs per subgroup; then less padding of M, N and K (a 64-deep tile ties with its
  // 32-deep twin where it pads K no more, and comes first) (docs/tuning-log.md, "choose_coopmat_tiling").
  const double fill_subgroups = static_cast<double>(fill_invocations(device)) / 64.0;
  std::optional<GemmTiling> best;
  std::tuple<bool, double, double, double> best_key{};
  for (const CoopmatTile& shape : kCoopmatTiles) {
    auto t = coopmat_blocking(shape, device, max_stages);
    if (!t || t->stages < shape.min_stages) continue;
    if (t->warps_k > 1 && p.k < kMinSplitSteps * t->bk) continue;  // split K only where K gives two steps
    const CoopmatLoad load = coopmat_load(p, *t, 1);
    const bool filled = load.subgroups >= fill_subgroups;
    const auto key = std::tuple(filled, filled ? load.per_subgroup : load.subgroups, filled ? load.used : load.per_subgroup,
                                filled ? 0.0 : load.used);
    if (!best || key > best_key) best = t, best_key = key;
  }
  // A Conv on 32x32 tiles splits K across workgroups where K is at least kSplitLongK and its tiles
  // leave SMs idle, as conv_ops.cpp's choose_conv_parts does for roots/conv2d.glsl (split_fills_gpu).
  // MatMuls do not split: it made them slower (docs/tuning-log.md, "choose_coopmat_tiling").
  if (!best || !p.conv || p.k < kSplitLongK || device.max_bindings < kMinBindingsForScratch) return best;
  const std::int64_t tiles = p.batch * div_up(p.m, best->bm) * div_up(p.n, best->bn);
  if (best->bm == kSplitTile)
    for (std::uint32_t parts : {16u, 8u, 4u, 2u})
      if (split_fills_gpu(tiles * parts, p.k / (parts * best->bk), device)) {
        best->groups = parts;
        return best;
      }
  if (!p.conv_gather.empty())
    if (auto resident = resident_gather_tiling(p, device, kLongSplitSteps)) return resident;
  return best;
}

std::span<const CoopmatTile> coopmat_tiles() { return kCoopmatTiles; }

Status force_coopmat_tile(std::optional<CoopmatTile> tile, const DevicePlan& device) {
  if (tile) {
    const CoopmatTile& t = *tile;
    const std::string name = std::to_string(t.tile) + "x" + std::to_string(t.tile) + "x" + std::to_string(t.bk) + " with " +
                             std::to_string(t.warps_m) + "x" + std::to_string(t.warps_n) + " subgroups, " +
                             std::to_string(t.warps_k) + " along K, " + std::to_string(t.groups) + " workgroup(s) per tile";
    auto one_two_four = [](std::uint32_t w) { return w == 1 || w == 2 || w == 4; };
    const bool shaped = (t.tile == 32 || t.tile == 64 || t.tile == 128) && t.bk % 16 == 0 && t.bk > 0 &&
                        one_two_four(t.warps_k) && one_two_four(t.warps_m) && one_two_four(t.warps_n) &&
                        t.bk % (16 * t.warps_k) == 0 && t.tile % (16 * t.warps_m) == 0 && t.tile % (16 * t.warps_n) == 0 &&
                        t.groups >= 1 && t.groups <= kMaxSplitGroups;
    if (!shaped)
      return make_error(ErrorCode::kInvalidArgument, "cooperative-matrix tile " + name +
                                                         ": tiles of 32, 64 or 128, 1, 2 or 4 subgroups each way with "
                                                         "blocks of whole 16x16 matrices, bk a multiple of 16 x the "
                                                         "subgroups along K, and 1 to " + std::to_string(kMaxSplitGroups) +
                                                         " workgroups per tile");
    if (!device.coopmat_f16 || !coopmat_blocking(t, device, 1))
      return make_error(ErrorCode::kInvalidArgument, "cooperative-matrix tile " + name +
                                                         " does not fit this device (cooperative matrices, invocations, shared memory, "
                                                         "each slice's 16-byte runs over the invocations, or the "
                                                         "storage buffers split K across workgroups needs)");
  }
  g_forced_coopmat = tile;
  return {};
}

Status force_gemm_tile(std::optional<GemmTile> tile, const DevicePlan& device) {
  if (tile) {
    const GemmTile& t = *tile;
    const std::string name = std::to_string(t.bm) + "x" + std::to_string(t.bn) + "x" + std::to_string(t.bk) + " with " +
                             std::to_string(t.tm) + "x" + std::to_string(t.tn) + " per invocation, split " +
                             std::to_string(t.split) + ", " + std::to_string(t.groups) + " workgroup(s) per tile";
    // roots/gemm_tiled.glsl: register blocks of vec4s; every invocation loads the same number of
    // elements of each slice; slices read along K in runs of 8 (or all of a shallower one); split K
    // into 1, 2 or 4 slices of invocations, each multiplying the same number of k's of a staged slice.
    const bool shaped = t.tm > 0 && t.tn > 0 && t.bk > 0 && (t.bk <= 8 || t.bk % 8 == 0) && t.tm % 4 == 0 && t.tn % 4 == 0 &&
                        (t.split == 1 || t.split == 2 || t.split == 4) && t.bk % t.split == 0 &&
                        t.bm % t.tm == 0 &&
                        t.bn % t.tn == 0 && (t.bm * t.bk) % tiled_threads(t) == 0 &&
                        (t.bk * t.bn) % tiled_threads(t) == 0 && t.groups >= 1 && t.groups <= kMaxSplitGroups;
    if (!shaped)
      return make_error(ErrorCode::kInvalidArgument,
                        "GEMM tile " + name + ": tm and tn must be multiples of 4 dividing bm and bn, bk at most 8 or a "
                        "multiple of 8, split 1, 2 or 4 dividing bk, each slice (bm x bk, bk x bn) a multiple of the " + std::to_string(tiled_threads(t)) + " invocations, and 1 to " + std::to_string(kMaxSplitGroups) + " workgroups per tile");
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
  GemmTiling tiling = choose_gemm_tiling(p, device);
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
                    // (A Conv's gathered B: rows of n, whatever its planes' size.)
                    {"VKF_B_N_FAST", p.b_stride_k != 1 || !p.conv_gather.empty() ? "1" : "0"},
                    {"VKF_TILES_M", glsl_uint(tiles_m)},
                    {"VKF_TILES_N", glsl_uint(tiles_n)},
                    // (A folded LayerNorm: its row's statistics, in the root's shared memory, then C and Bias.)
                    {"VKF_GEMM_VALUE(m, n, acc)",
                     p.row_norm ? "vkf_row_norm(vkf_row_stats[(m) - m0], n, acc)" : p.value},
                    // Elements (m, n) .. (m, n + 3), for the roots' vector stores (VKF_OUT0_X4).
                    {"VKF_GEMM_VALUE4(m, n, acc)",
                     p.row_norm ? "vkf_row_norm4(vkf_row_stats[(m) - m0], n, acc)"
                                : "vec4(VKF_GEMM_VALUE(m, n, (acc).x), VKF_GEMM_VALUE(m, (n) + 1u, (acc).y), "
                                  "VKF_GEMM_VALUE(m, (n) + 2u, (acc).z), VKF_GEMM_VALUE(m, (n) + 3u, (acc).w))"}};
  // Split K across workgroups (the tiled and coopmat roots): each walks a part of K of whole bk steps,
  // none of them empty; the parts meet in the scratch.
  std::int64_t k_part = p.k;
  if (tiling.groups > 1) {
    k_part = div_up(div_up(p.k, tiling.groups), tiling.bk) * tiling.bk;
    tiling.groups = static_cast<std::uint32_t>(div_up(p.k, k_part));
    launch.split_counters = static_cast<std::uint32_t>(p.batch * tiles_m * tiles_n);
    // (A folded LayerNorm's parts leave their rows' two sums after all the partial sums.)
    launch.split_partial_bytes = static_cast<std::uint64_t>(p.batch * tiles_m * tiles_n) * tiling.groups * tiling.bm *
                                 (tiling.bn + (p.row_norm ? 2 : 0)) * 4;
  }
  bool a_runs = false, b_runs = false;  // operands the tiled and coopmat roots load in 16-byte runs
  if (tiling.kernel == GemmKernel::kSkinny) {
    // An operand whose k is contiguous reads as raw 16-byte runs where its rows are whole runs, faster
    // than elements (docs/tuning-log.md, "gemm_launch").
    const auto run = [&](char operand, DType dtype) {
      const std::int64_t elements = 16 / static_cast<std::int64_t>(dtype_size(dtype));
      const bool k_fast = operand == 'A' ? p.a_stride_m != 1 : p.b_stride_k == 1;
      return k_fast && runs_aligned(p, operand, elements) ? elements : 0;
    };
    const std::int64_t a_run = run('A', p.a_dtype), b_run = run('B', p.b_dtype);
    launch.root = "roots/gemm_skinny.glsl";
    launch.defines.insert(launch.defines.end(), {{"VKF_ROWS", glsl_uint(tiling.bm)},
                                                 {"VKF_COLS", glsl_uint(tiling.bn)},
                                                 {"VKF_K_LANES", glsl_uint(tiling.k_lanes)},
                                                 {"VKF_RAW_INPUTS", b_run > 0 ? "1" : "0"},  // raw views only then
                                                 {"VKF_A_RUN", std::to_string(a_run)},
                                                 {"VKF_B_RUN", std::to_string(b_run)}});
  } else if (tiling.kernel == GemmKernel::kCoopmat) {
    // An operand stages 16-byte runs straight from memory where its runs of 8 halves are 16-byte aligned.
    // (A Conv's gathered B is never read as runs.)
    a_runs = runs_aligned(p, 'A', 8);
    b_runs = runs_aligned(p, 'B', 8) && p.conv_gather.empty();
    launch.root = "roots/gemm_coopmat.glsl";
    launch.defines.insert(launch.defines.end(), {{"VKF_BM", glsl_uint(tiling.bm)},
                                                 {"VKF_BN", glsl_uint(tiling.bn)},
                                                 {"VKF_BK", glsl_uint(tiling.bk)},
                                                 {"VKF_WARPS_M", std::to_string(tiling.warps_m)},
                                                 {"VKF_WARPS_N", std::to_string(tiling.warps_n)},
                                                 {"VKF_WARPS_K", std::to_string(tiling.warps_k)},
                                                 {"VKF_STAGES", std::to_string(tiling.stages)},
                                                 {"VKF_RAW_INPUTS", "1"},
                                                 {"VKF_A_QUADS", a_runs ? "1" : "0"},
                                                 {"VKF_B_QUADS", b_runs ? "1" : "0"},
                                                 {"VKF_CONV", p.conv ? "1" : "0"},
                                                 {"VKF_CONV_GATHER", p.conv_gather.empty() ? "0" : "1"},
                                                 {"VKF_SPLIT_GROUPS", std::to_string(tiling.groups)},
                                                 {"VKF_K_PART", glsl_uint(k_part)}});
    launch.defines.insert(launch.defines.end(), p.conv_gather.begin(), p.conv_gather.end());
  } else {
    // An f32 operand loads as vec4s where its runs of 4 are 16-byte aligned, each invocation's share of a
    // step's slice is whole vec4s, and, for runs along K, a step holds whole runs (forced tiles may be
    // 2 or 6 deep).
    const bool a_k_fast = p.a_stride_m != 1, b_n_fast = p.b_stride_k != 1;
    const std::int64_t share_a = tiling.bm * tiling.bk / tiling.workgroup_size;
    const std::int64_t share_b = tiling.bk * tiling.bn / tiling.workgroup_size;
    a_runs = p.a_dtype == DType::kF32 && runs_aligned(p, 'A', 4) && share_a % 4 == 0 &&
                        (!a_k_fast || tiling.bk % 4 == 0);
    b_runs = p.b_dtype == DType::kF32 && runs_aligned(p, 'B', 4) && share_b % 4 == 0 &&
                        (b_n_fast || tiling.bk % 4 == 0);
    launch.root = "roots/gemm_tiled.glsl";
    launch.defines.insert(launch.defines.end(), {{"VKF_RAW_INPUTS", a_runs || b_runs ? "1" : "0"},
                                                 {"VKF_A_VEC4", a_runs ? "1" : "0"},
                                                 {"VKF_B_VEC4", b_runs ? "1" : "0"},
                                                 {"VKF_BM", glsl_uint(tiling.bm)},
                                                 {"VKF_BN", glsl_uint(tiling.bn)},
                                                 {"VKF_BK", glsl_uint(tiling.bk)},
                                                 {"VKF_TM", glsl_uint(tiling.tm)},
                                                 {"VKF_TN", glsl_uint(tiling.tn)},
                                                 {"VKF_STAGES", std::to_string(tiling.stages)},
                                                 {"VKF_SPLIT_K", std::to_string(tiling.split)},
                                                 {"VKF_SPLIT_GROUPS", std::to_string(tiling.groups)},
                                                 {"VKF_K_PART", glsl_uint(k_part)}});
    if (p.row_norm) {
      // What the device allows the template (roots/gemm_tiled.glsl decides from A's layout): the
      // invocations staging a row's vec4s along K, bk / 4 of them, may add their sums with shuffles
      // where they are whole power-of-two groups of one subgroup's lanes (a forced tile may be 24 deep);
      // C and Bias, f32, may load as raw 16-byte runs.
      const std::uint32_t lanes = tiling.bk / 4;
      const bool shuffle = device.subgroup_shuffle && std::has_single_bit(lanes) && lanes <= device.subgroup_size;
      launch.defines.insert(launch.defines.end(), {{"VKF_ROW_NORM", "1"},
                                                   {"VKF_ROW_NORM_EPSILON", glsl_float_literal(p.row_norm_epsilon)},
                                                   {"VKF_ROW_NORM_SHUFFLE", shuffle ? "1" : "0"},
                                                   {"VKF_ROW_NORM_VEC4", p.a_dtype == DType::kF32 ? "1" : "0"}});
    }
  }
  launch.workgroups = {grid_for(p.batch * tiles_m * tiles_n * tiling.groups, 1, device), 1, 1};
  // Each element of A is loaded once per tile across N, of B once per tile down M (a gathered B once
  // per window tap as well: not counted, left unknown). The cooperative-matrix root reports no reads of
  // a computed B, so that the planner computes no elements there: its staging of B is built for plain
  // loads, and on the H100 every depthwise -> pointwise pair fused into it was slower than the two
  // dispatches (host/fusion_planner.cpp, elements in loads).
  const bool coopmat = tiling.kernel == GemmKernel::kCoopmat;
  launch.input_reads.assign(static_cast<std::size_t>(std::max(p.a_input, p.b_input)) + 1, 0);
  // (The skinny root's columns each load the rows of A they multiply: every element once per column.)
  const std::int64_t a_reads = tiling.kernel == GemmKernel::kSkinny ? p.n : tiles_n;
  if (!(p.a_computed && coopmat)) launch.input_reads[static_cast<std::size_t>(p.a_input)] = a_reads;
  if (p.conv_gather.empty() && !(p.b_computed && coopmat)) launch.input_reads[static_cast<std::size_t>(p.b_input)] = tiles_m;
  // The cooperative-matrix root stages a computed operand element by element (no 16-byte runs), each
  // element loading the chain's constants again, once per tile: it takes a scale (squeeze-and-excitation's
  // Mul, cost 1), not a BatchNorm and activation (docs/tuning-log.md, "kCoopmatChainBudget").
  constexpr float kCoopmatChainBudget = 1.0f;
  if (coopmat) {
    launch.chain_budgets.assign(launch.input_reads.size(), -1.0f);
    launch.chain_budgets[static_cast<std::size_t>(p.a_input)] = kCoopmatChainBudget;
    launch.chain_budgets[static_cast<std::size_t>(p.b_input)] = kCoopmatChainBudget;
  }
  launch.run_inputs.assign(launch.input_reads.size(), false);
  launch.run_inputs[static_cast<std::size_t>(p.a_input)] = a_runs;
  launch.run_inputs[static_cast<std::size_t>(p.b_input)] = b_runs;
  return launch;
}

Status require_float(std::span<const TensorInfo> inputs, std::size_t index, const char* role) {
  const DType dtype = inputs[index].dtype;
  if (dtype == DType::kF32 || dtype == DType::kF16) return {};
  return make_error(ErrorCode::kInvalidArgument,
                    std::string(role) + " (input " + std::to_string(index) + ") is " + dtype_name(dtype) + ", expected f32 or f16");
}

}  // namespace vkfuse
