// Conv and ConvTranspose (ONNX, 2-D, NCHW): groups (depthwise included), strides, dilations, pads
// [top, left, bottom, right], ConvTranspose's output_padding, optional bias; fp32 accumulation. Conv
// runs as an implicit GEMM (roots/conv2d.glsl; tiles chosen from the problem size and the device's
// shared memory; f16 Convs of one group on cooperative matrices where the device has them,
// roots/gemm_coopmat.glsl), with one input channel per group (depthwise), as an unrolled window loop
// per output (roots/conv2d_depthwise.glsl), or, 1x1 over 1x1 images (a squeeze-and-excitation block's),
// as a vector times W on roots/gemm_skinny.glsl. ConvTranspose is still one invocation per output element.
#include <algorithm>
#include <bit>
#include <iterator>
#include <optional>
#include <tuple>

#include "host/checked_math.h"
#include "host/graph.h"
#include "host/op_registry.h"
#include "host/ops/conv_patch.h"
#include "host/ops/kernel_support.h"
#include "host/ops/nn_support.h"

namespace vkfuse {
namespace {

constexpr AttrDef kConvAttrs[] = {{"group", 1.0f}};
constexpr std::string_view kConvLists[] = {"pads", "strides", "dilations"};
constexpr std::string_view kConvTransposeLists[] = {"pads", "strides", "dilations", "output_padding"};
constexpr const char* kRoles[] = {"X", "W", "B"};
constexpr const char* kAxisNames[] = {"height", "width"};

Status check_inputs(std::span<const TensorInfo> in, const char* what) {
  for (std::size_t k = 0; k < in.size(); ++k) VKFUSE_TRY(require_float(in, k, kRoles[k]));
  VKFUSE_TRY(require_same_dtype(in, kRoles));
  VKFUSE_TRY(require_nchw(in[0], "X", what));
  return require_nchw(in[1], "W", what);
}

Status check_bias(std::span<const TensorInfo> in, std::int64_t m) {
  if (in.size() < 3) return {};
  if (in[2].shape == Shape{m}) return {};
  return make_error(ErrorCode::kInvalidArgument, "B has shape " + shape_to_string(in[2].shape) + ", expected [" +
                                                     std::to_string(m) + "] (one value per output channel)");
}

Result<ConvShape> conv_shape(std::span<const TensorInfo> in, const OpAttrs& attrs) {
  VKFUSE_TRY(check_inputs(in, "2-D Conv only"));
  const Shape& x = in[0].shape;
  const Shape& w = in[1].shape;
  ConvShape s;
  s.n = x[0], s.c = x[1], s.h = x[2], s.w = x[3], s.m = w[0];
  VKFUSE_ASSIGN_OR_RETURN(s.group, nn_int(attrs, 0, "group", 1));
  if (s.c % s.group != 0)
    return make_error(ErrorCode::kInvalidArgument, "X " + shape_to_string(x) + " has " + std::to_string(s.c) +
                                                       " channels, not divisible by group " + std::to_string(s.group));
  s.cg = s.c / s.group;
  if (w[1] != s.cg)
    return make_error(ErrorCode::kInvalidArgument, "W " + shape_to_string(w) + " has " + std::to_string(w[1]) +
                                                       " input channels per group, X " + shape_to_string(x) + " has " +
                                                       std::to_string(s.c) + " channels with group " +
                                                       std::to_string(s.group));
  if (s.m % s.group != 0)
    return make_error(ErrorCode::kInvalidArgument, "W " + shape_to_string(w) + " has " + std::to_string(s.m) +
                                                       " output channels, not divisible by group " +
                                                       std::to_string(s.group));
  s.mg = s.m / s.group;
  VKFUSE_TRY(check_bias(in, s.m));
  s.has_bias = in.size() > 2;
  VKFUSE_ASSIGN_OR_RETURN(s.axes, read_window(attrs, {w[2], w[3]}, true));
  VKFUSE_ASSIGN_OR_RETURN(s.oh, window_output(s.h, s.axes[0], false, kAxisNames[0]));
  VKFUSE_ASSIGN_OR_RETURN(s.ow, window_output(s.w, s.axes[1], false, kAxisNames[1]));
  return s;
}

// ConvTranspose: W is [c, m / group, kh, kw]; each output extent is
// stride * (in - 1) + output_padding + span - pad_begin - pad_end.
Result<ConvShape> conv_transpose_shape(std::span<const TensorInfo> in, const OpAttrs& attrs) {
  VKFUSE_TRY(check_inputs(in, "2-D ConvTranspose only"));
  const Shape& x = in[0].shape;
  const Shape& w = in[1].shape;
  ConvShape s;
  s.n = x[0], s.c = x[1], s.h = x[2], s.w = x[3];
  VKFUSE_ASSIGN_OR_RETURN(s.group, nn_int(attrs, 0, "group", 1));
  if (w[0] != s.c)
    return make_error(ErrorCode::kInvalidArgument, "W " + shape_to_string(w) + " has " + std::to_string(w[0]) +
                                                       " input channels, X " + shape_to_string(x) + " has " +
                                                       std::to_string(s.c));
  if (s.c % s.group != 0)
    return make_error(ErrorCode::kInvalidArgument, "X " + shape_to_string(x) + " has " + std::to_string(s.c) +
                                                       " channels, not divisible by group " + std::to_string(s.group));
  s.cg = s.c / s.group;
  s.mg = w[1];
  s.m = s.mg * s.group;
  VKFUSE_TRY(check_bias(in, s.m));
  s.has_bias = in.size() > 2;
  VKFUSE_ASSIGN_OR_RETURN(s.axes, read_window(attrs, {w[2], w[3]}, true));
  VKFUSE_ASSIGN_OR_RETURN(auto output_padding, nn_list(attrs, "output_padding", 2, 0, {0, 0}));
  const std::int64_t in_extent[2] = {s.h, s.w};
  std::int64_t out_extent[2];
  for (std::size_t d = 0; d < 2; ++d) {
    const WindowAxis& a = s.axes[d];
    const std::string what = std::string("the output ") + kAxisNames[d];
    VKFUSE_ASSIGN_OR_RETURN(const std::int64_t strided, mul_or_error(a.stride, in_extent[d] - 1, what));
    VKFUSE_ASSIGN_OR_RETURN(const std::int64_t padded_out, add_or_error(strided, output_padding[d], what));
    VKFUSE_ASSIGN_OR_RETURN(const std::int64_t spanned, add_or_error(padded_out, a.span(), what));
    VKFUSE_ASSIGN_OR_RETURN(const std::int64_t unpadded, sub_or_error(spanned, a.pad_begin, what));
    VKFUSE_ASSIGN_OR_RETURN(out_extent[d], sub_or_error(unpadded, a.pad_end, what));
    if (out_extent[d] < 1)
      return make_error(ErrorCode::kInvalidArgument,
                        std::string("the output ") + kAxisNames[d] + " would be " + std::to_string(out_extent[d]) +
                            " (stride " + std::to_string(a.stride) + " * (" + std::to_string(in_extent[d]) +
                            " - 1) + output_padding " + std::to_string(output_padding[d]) + " + window " +
                            std::to_string(a.span()) + " - pads " + std::to_string(a.pad_begin) + " and " +
                            std::to_string(a.pad_end) + ")");
  }
  s.oh = out_extent[0];
  s.ow = out_extent[1];
  return s;
}

Result<TensorInfo> infer_conv(std::span<const TensorInfo> in, const OpAttrs& attrs) {
  VKFUSE_ASSIGN_OR_RETURN(ConvShape s, conv_shape(in, attrs));
  return TensorInfo{{s.n, s.m, s.oh, s.ow}, in[0].dtype};
}

Result<TensorInfo> infer_conv_transpose(std::span<const TensorInfo> in, const OpAttrs& attrs) {
  VKFUSE_ASSIGN_OR_RETURN(ConvShape s, conv_transpose_shape(in, attrs));
  return TensorInfo{{s.n, s.m, s.oh, s.ow}, in[0].dtype};
}

// The shape and window defines both ops' roots read.
std::vector<std::pair<std::string, std::string>> conv_defines(const ConvShape& s) {
  return {{"VKF_N", glsl_uint(s.n)},   {"VKF_C", glsl_uint(s.c)},   {"VKF_H", glsl_int(s.h)},
          {"VKF_W", glsl_int(s.w)},    {"VKF_M", glsl_uint(s.m)},   {"VKF_OH", glsl_uint(s.oh)},
          {"VKF_OW", glsl_uint(s.ow)}, {"VKF_CG", glsl_uint(s.cg)}, {"VKF_MG", glsl_uint(s.mg)},
          {"VKF_KH", glsl_int(s.axes[0].kernel)},    {"VKF_KW", glsl_int(s.axes[1].kernel)},
          {"VKF_SH", glsl_int(s.axes[0].stride)},    {"VKF_SW", glsl_int(s.axes[1].stride)},
          {"VKF_DH", glsl_int(s.axes[0].dilation)},  {"VKF_DW", glsl_int(s.axes[1].dilation)},
          {"VKF_PT", glsl_int(s.axes[0].pad_begin)}, {"VKF_PL", glsl_int(s.axes[1].pad_begin)},
          {"VKF_HAS_BIAS", s.has_bias ? "1" : "0"}};
}

// Most reuse first. The 2x2 / 4x2 micro-tiles with 256 invocations fill a large GPU on batch-1 layers
// (resnet50's 56x56 layers: 50K invocations with 32x32 2x2 against 12.5K with 4x4); the split-K tiles
// multiply that by 2 or 4 on layers too small even for 32x32 2x2 (7x7 and 14x14 outputs). `parts` is
// not in the table: choose_conv_parts sets it on the tile chosen.
constexpr ConvTile kConvTiles[] = {
    {128, 128, 8, 8}, {128, 64, 8, 4}, {64, 128, 4, 8}, {64, 64, 4, 4}, {64, 32, 4, 4},       {32, 64, 4, 4},
    {32, 32, 4, 4},   {64, 32, 4, 2},  {32, 64, 2, 4},  {32, 32, 2, 2}, {32, 32, 2, 2, 2}, {32, 32, 2, 2, 4}};

// The least BK for tile t: every invocation stages the same number of A and B elements of a slice
// (invocations divide bm*bk and bn*bk) and each slice multiplies the same number of its k's.
std::int64_t min_conv_bk(const ConvTile& t) {
  std::int64_t bk = 8;
  while ((t.bm * bk) % t.invocations() != 0 || (t.bn * bk) % t.invocations() != 0 || bk % t.split != 0) bk *= 2;
  return bk;
}

// Shared memory of tile t with depth bk: A with one fragment of padding per k, B, the split-K partials.
std::int64_t conv_shared_bytes(const ConvTile& t, std::int64_t bk) {
  return (bk * (t.bm + t.fragment_m() + t.bn) + (t.split - 1) * t.bm * t.bn) * 4;
}

bool conv_tile_fits(const ConvTile& t, const DevicePlan& device) {
  return t.invocations() <= device.max_workgroup_invocations &&
         conv_shared_bytes(t, min_conv_bk(t)) <= device.shared_memory_bytes;
}

// ScopedConvTile's tile and parts, or none.
std::optional<ConvTile> g_forced_tile;

// First fill the GPU, then reuse. For tile t on this Conv (groups and images counted):
//   launched = workgroups x invocations per workgroup,
//   busy     = outputs / (t.tm * t.tn / t.split), the invocations with real outputs (launched less those
//              the padding of partial tiles keeps idle),
//   reuse    = outputs / launched, real outputs per invocation (fewer shared-memory reads and loads per
//              FMA the larger it is).
// Tiles whose busy invocations reach fill_invocations compete on reuse; when none does, the most busy
// invocations win, ties to more reuse. Remaining ties go to less padding, then to the larger block (fewer
// loads per output), then to the table's order.
// resnet50 at batch 1: 56x56 layers 32x32 2x2 (50K invocations), 7x7 ones 32x32 2x2 split 4 (25K busy);
// vgg11's 112x112 layers 128x64 8x4 (50K); batch 8: 128x128 8x8 (see the test "Conv picks its ...").
// Tried and dropped: 32x32 4x4 with K over 4 or 8 workgroups, or in four K slices of one workgroup, in
// the 2x2 tiles' place, and 8x8 blocks of 64-invocation workgroups (their loads' index state spills).
// Layers timed alone mislead: judge tile rules on whole models (docs/tuning-log.md, "choose_conv_tile").
ConvTile choose_conv_tile(std::int64_t rows, std::int64_t cols, std::int64_t groups, const DevicePlan& device) {
  if (g_forced_tile) return *g_forced_tile;
  struct Score {
    bool filled;
    double first, second, used;  // filled: reuse, 0; else busy, reuse; the share of real outputs
    std::int64_t block;
    auto key() const { return std::tuple(filled, first, second, used, block); }
  };
  const double outputs = static_cast<double>(rows * cols * groups);
  const ConvTile* best = nullptr;
  Score best_score{};
  for (const ConvTile& t : kConvTiles) {
    if (!conv_tile_fits(t, device)) continue;
    const std::int64_t workgroups = div_up(rows, t.bm) * div_up(cols, t.bn) * groups;
    const double launched = static_cast<double>(workgroups * t.invocations());
    const double busy = outputs / t.outputs_per_invocation(), reuse = outputs / launched;
    const bool filled = busy >= static_cast<double>(fill_invocations(device));
    const Score score{filled, filled ? reuse : busy, filled ? 0.0 : reuse,
                      outputs / static_cast<double>(workgroups * t.bm * t.bn), t.bm * t.bn};
    if (!best || score.key() > best_score.key()) best = &t, best_score = score;
  }
  return *best;  // 32x32 4x4 (64 invocations, 5 KB) fits every Vulkan device
}

// BK: enough of K per step to amortize the two barriers (32 when K allows), halved while the A and B
// tiles would take more than half the device's shared memory (two workgroups per SM), at least 8; then
// raised to the tile's least BK (min_conv_bk). A split-K tile takes 64 where the GEMM rule would
// (split_k_steps_64_deep: resnet50's 7x7 and 14x14 layers, K of 1152 to 4608 over 32 to 100
// workgroups) and the whole shared memory holds it.
std::int64_t choose_conv_bk(const ConvTile& t, std::int64_t k, std::int64_t workgroups, const DevicePlan& device) {
  if (split_k_steps_64_deep(workgroups, k, t.split, device) && conv_shared_bytes(t, 64) <= device.shared_memory_bytes &&
      64 >= min_conv_bk(t))
    return 64;
  std::int64_t bk = 8;
  while (bk < 32 && bk < k) bk *= 2;
  while (bk > 8 && conv_shared_bytes(t, bk) > device.shared_memory_bytes / 2) bk /= 2;
  return std::max(bk, min_conv_bk(t));
}

// Split K over `parts` workgroups per block only where the blocks are fewer than the GPU's SMs
// (fill_workgroups, one per compute unit: a split-K tile of 1024 invocations takes one): the most parts of
// 16, 8, 4 or 2 whose workgroups still fit one per SM with each part at least kMinSplitSteps steps of BK,
// or two per SM with each part at least kLongSplitSteps steps (split_fills_gpu). Needs
// room for the scratch's two bindings. This beat 2 or 4 parts within one workgroup per SM on whole
// models (docs/tuning-log.md, "choose_conv_parts").
ConvTile choose_conv_parts(ConvTile t, std::int64_t k, std::int64_t blocks, const DevicePlan& device) {
  if (g_forced_tile || device.max_bindings < kMinBindingsForScratch) return t;
  for (std::int64_t parts : {16, 8, 4, 2}) {
    const std::int64_t bk = choose_conv_bk(t, div_up(k, parts), blocks * parts, device);
    if (split_fills_gpu(blocks * parts, k / (parts * bk), device)) {
      t.parts = parts;
      return t;
    }
  }
  return t;
}

// Where X is computed in the loads (TensorInfo::load_cost: a depthwise Conv's elements), each of its
// loads waits on that computation: split K over the most workgroups that stay within two per SM
// (fill_workgroups) with a whole BK step each, so that more of them compute at once: without this split,
// elements in the loads gain nothing (docs/tuning-log.md, "choose_computed_parts").
ConvTile choose_computed_parts(ConvTile t, std::int64_t k, std::int64_t blocks, const DevicePlan& device) {
  t = choose_conv_parts(t, k, blocks, device);
  if (t.parts > 1 || g_forced_tile || device.max_bindings < kMinBindingsForScratch) return t;
  for (std::int64_t parts : {16, 8, 4, 2})
    if (blocks * parts <= 2 * fill_workgroups(device) && k >= parts * choose_conv_bk(t, div_up(k, parts), blocks * parts, device)) {
      t.parts = parts;
      return t;
    }
  return t;
}

// 1x1, stride 1, no pads: column p of an image reads X at p, so B is X's [CG, H*W] planes as they are.
bool is_pointwise(const ConvShape& s) {
  auto plain = [](const WindowAxis& a) { return a.kernel == 1 && a.stride == 1 && a.pad_begin == 0 && a.pad_end == 0; };
  return plain(s.axes[0]) && plain(s.axes[1]);
}

// Conv with one input channel per group (depthwise): roots/conv2d_depthwise.glsl, VW outputs of a row
// per invocation. Groups of a few channels (regnet_y's 8) take it too where the group sums the result
// over planes (a squeeze-and-excitation block follows), summing the group's CG planes: alone the implicit
// GEMM is faster (docs/tuning-log.md, "kDirectMaxGroupInputs").
constexpr std::int64_t kDirectMaxGroupInputs = 8;
// With plane sums (a squeeze-and-excitation block's pooling of the result), each workgroup takes whole
// planes: IPP invocations to a plane (the least power of two that covers its items, at most the
// workgroup), where that keeps as many invocations busy as the grid would, up to filling the GPU.
KernelLaunch direct_conv_launch(const ConvShape& s, bool plane_sums, const DevicePlan& device) {
  KernelLaunch launch;
  launch.root = "roots/conv2d_depthwise.glsl";
  launch.workgroup_size = device.elementwise_workgroup;
  // Groups of several channels: fewer outputs per invocation where four would leave the GPU idle.
  std::int64_t vw = std::min<std::int64_t>(4, s.ow);
  while (s.cg > 1 && vw > 1 && s.n * s.m * s.oh * div_up(s.ow, vw) < fill_invocations(device)) vw /= 2;
  launch.defines = conv_defines(s);
  launch.defines.emplace_back("VKF_VW", glsl_uint(vw));
  const std::int64_t planes = s.n * s.m, items = s.oh * div_up(s.ow, vw), wg = launch.workgroup_size;
  launch.workgroups = {grid_for(planes * items, launch.workgroup_size, device), 1, 1};
  std::int64_t ipp = 1;
  while (ipp < items && ipp < wg) ipp *= 2;
  const bool busy = planes * std::min(ipp, items) >= std::min(planes * items, fill_invocations(device));
  if (!plane_sums || !busy || wg % ipp != 0) return launch;
  const std::int64_t groups = div_up(planes, wg / ipp);
  if (groups > static_cast<std::int64_t>(device.max_groups_x)) return launch;
  launch.plane_sums = true;
  launch.defines.emplace_back("VKF_IPP", glsl_uint(ipp));
  launch.workgroups = {static_cast<std::uint32_t>(groups), 1, 1};
  return launch;
}

// Plane sums on the implicit GEMM (one image: each output channel's plane is a row of the product), on
// the tile the Conv takes alone: the block folds its rows in shared memory (BM * BN/TN floats more), and
// where the columns span several tiles, each leaves its row sums in the split scratch after the split's
// own partials and counts itself in its block's counter after the split's counters. Only where the sums
// are all the group stores (TensorInfo::pooled_only: the result itself never reaches memory; a
// squeeze-and-excitation block's pooling stays with the products that scale by it), and only planes of
// at most kPlaneMaxTiles column tiles (a network's final 7x7 or 13x13 maps): a larger plane is pooled
// faster by a reduction of its own (docs/tuning-log.md, "kPlaneMaxTiles").
constexpr std::int64_t kPlaneMaxTiles = 8;
void add_plane_sums(KernelLaunch& launch, const ConvShape& s, const ConvTile& tile, std::int64_t bk, std::int64_t tiles_n,
                    std::int64_t blocks, const DevicePlan& device) {
  const std::int64_t shared = conv_shared_bytes(tile, bk) + tile.bm * (tile.bn / tile.tn) * 4;
  // Invocation r folds row r of the block: the workgroup must have at least BM (every tile of the table does).
  if (s.n != 1 || tiles_n > kPlaneMaxTiles || shared > device.shared_memory_bytes || tile.invocations() < tile.bm) return;
  if (tiles_n > 1) {
    if (device.max_bindings < kMinBindingsForScratch) return;
    launch.defines.emplace_back("VKF_PLANE_COUNTERS", glsl_uint(launch.split_counters));
    launch.defines.emplace_back("VKF_PLANE_PARTIALS", glsl_uint(static_cast<std::int64_t>(launch.split_partial_bytes / 4)));
    launch.split_counters += static_cast<std::uint32_t>(blocks);
    launch.split_partial_bytes += static_cast<std::uint64_t>(blocks * tiles_n * tile.bm) * 4;
  }
  launch.plane_sums = true;
}

// Every other Conv: the implicit GEMM of roots/conv2d.glsl, rows MG, columns N*OH*OW, K = CG*KH*KW.
KernelLaunch implicit_gemm_launch(const ConvShape& s, bool computed_x, const TensorInfo& out, const DevicePlan& device) {
  const std::int64_t rows = s.mg, cols = s.n * s.oh * s.ow, k = s.cg * s.axes[0].kernel * s.axes[1].kernel;
  const ConvTile base = choose_conv_tile(rows, cols, s.group, device);
  const std::int64_t tiles_m = div_up(rows, base.bm), tiles_n = div_up(cols, base.bn), blocks = tiles_m * tiles_n * s.group;
  const ConvTile tile = computed_x ? choose_computed_parts(base, k, blocks, device) : choose_conv_parts(base, k, blocks, device);
  // Each part walks whole BK steps of K, none of them empty.
  const std::int64_t bk = choose_conv_bk(tile, div_up(k, tile.parts), blocks * tile.parts, device);
  const std::int64_t k_part = div_up(div_up(k, tile.parts), bk) * bk, parts = div_up(k, k_part);
  const bool pointwise = is_pointwise(s);
  KernelLaunch launch;
  launch.root = "roots/conv2d.glsl";
  launch.workgroup_size = static_cast<std::uint32_t>(tile.invocations());
  launch.defines = conv_defines(s);
  launch.defines.insert(launch.defines.end(),
                        {{"VKF_GEMM_N", glsl_uint(cols)}, {"VKF_GEMM_K", glsl_uint(k)},
                         {"VKF_TILES_N", glsl_uint(tiles_n)}, {"VKF_BM", glsl_uint(tile.bm)},
                         {"VKF_BN", glsl_uint(tile.bn)}, {"VKF_BK", glsl_uint(bk)}, {"VKF_TM", glsl_uint(tile.tm)},
                         {"VKF_TN", glsl_uint(tile.tn)}, {"VKF_FRAG_M", std::to_string(tile.fragment_m())},
                         {"VKF_FRAG_N", tile.tn % 4 == 0 ? "4" : "2"}, {"VKF_SPLIT_K", std::to_string(tile.split)},
                         {"VKF_POINTWISE", pointwise ? "1" : "0"}, {"VKF_SPLIT_GROUPS", std::to_string(parts)},
                         {"VKF_K_PART", glsl_uint(k_part)}});
  // Four columns of B per load where a plane holds whole vec4s (roots/conv2d.glsl, VKF_B_VEC).
  if (pointwise && (s.h * s.w) % 4 == 0 && tile.bn % 4 == 0) {
    const bool few_loaders = tile.bn * bk / 4 < tile.invocations();
    launch.defines.insert(launch.defines.end(), {{"VKF_B_VEC", "4"}, {"VKF_B_FEW_LOADERS", few_loaders ? "1" : "0"}});
    launch.vec4_inputs = {true};
  }
  if (parts > 1) {
    launch.split_counters = static_cast<std::uint32_t>(blocks);
    launch.split_partial_bytes = static_cast<std::uint64_t>(blocks * parts * tile.bm * tile.bn) * 4;
  }
  launch.workgroups = {static_cast<std::uint32_t>(std::min<std::int64_t>(tiles_n * parts, device.max_groups_x)),
                       static_cast<std::uint32_t>(tiles_m), static_cast<std::uint32_t>(s.group)};
  if (pointwise) launch.input_reads = {tiles_m};  // X's column p, once per tile of output channels
  if (out.plane_sums && out.pooled_only) add_plane_sums(launch, s, tile, bk, tiles_n, blocks, device);
  return launch;
}

// A Conv of one group whose windows overlap (a window wider than its stride on some axis: neighbouring
// outputs share input values, which the patch root loads once), X loaded as stored (a computed X stays
// with the implicit GEMM, whose loads the planner counts), and no implicit-GEMM tile forced: the direct
// root with staged input patches (roots/conv2d_patch.glsl), where the implicit GEMM would take
// micro-tiles of at most kPatchMaxGemmOutputs outputs (batch-1 layers; batch 8's large ones keep their
// 8x8 blocks). Windows that do not overlap gain nothing from the patches (docs/tuning-log.md,
// "patch_launch").
constexpr std::int64_t kPatchMaxGemmOutputs = 32;
std::optional<KernelLaunch> patch_launch(const ConvShape& s, bool computed_x, const DevicePlan& device) {
  const bool overlap = std::any_of(s.axes.begin(), s.axes.end(), [](const WindowAxis& a) { return a.span() > a.stride; });
  if (s.group != 1 || computed_x || g_forced_tile || !overlap) return std::nullopt;
  const ConvTile gemm = choose_conv_tile(s.m, s.n * s.oh * s.ow, 1, device);
  if (gemm.tm * gemm.tn > kPatchMaxGemmOutputs && !patch_tile_forced()) return std::nullopt;  // forced: the tile decides
  const std::optional<PatchTile> tile = choose_patch_tile(s, device);
  if (!tile) return std::nullopt;
  return patch_conv_launch(s, *tile, conv_defines(s), device);
}

// An f16 Conv of one group where the device has fp16 cooperative matrices: the GEMM root on them
// (roots/gemm_coopmat.glsl), per image Y = W * X' with X' gathered from X as in roots/conv2d.glsl;
// none where no coopmat tiling fits or a Conv tile is forced (choose_coopmat_tiling splits a long K
// across workgroups where the tiles are fewer than the GPU's SMs, or, gathered, where its 32x32 tiles
// would leave the GPU's resident subgroups short).
std::optional<KernelLaunch> coopmat_launch(const ConvShape& s, bool f16, bool computed_x, const DevicePlan& device) {
  if (!f16 || s.group != 1 || g_forced_tile || patch_tile_forced()) return std::nullopt;
  const WindowAxis &y = s.axes[0], &x = s.axes[1];
  GemmProblem p;
  p.batch = s.n;
  p.m = s.m;
  p.n = s.oh * s.ow;
  p.k = s.c * y.kernel * x.kernel;
  p.a_stride_m = p.k;  // W [M, K]
  p.b_stride_k = s.h * s.w;  // X's planes: along n where 1x1, stride 1, no pads; else only the layout (n fast)
  p.b_batch = "((b) * " + glsl_uint(s.c * s.h * s.w) + ")";
  p.value = s.has_bias ? "((acc) + VKF_IN2(m))" : "(acc)";
  p.a_dtype = p.b_dtype = DType::kF16;
  p.conv = true;
  p.a_input = 1;
  p.b_input = 0;
  p.b_computed = computed_x;
  if (!is_pointwise(s))
    p.conv_gather = {{"VKF_CONV_C", glsl_uint(s.c)},        {"VKF_CONV_H", glsl_int(s.h)},
                     {"VKF_CONV_W", glsl_int(s.w)},         {"VKF_CONV_OW", glsl_uint(s.ow)},
                     {"VKF_CONV_KH", glsl_int(y.kernel)},   {"VKF_CONV_KW", glsl_int(x.kernel)},
                     {"VKF_CONV_SH", glsl_int(y.stride)},   {"VKF_CONV_SW", glsl_int(x.stride)},
                     {"VKF_CONV_DH", glsl_int(y.dilation)}, {"VKF_CONV_DW", glsl_int(x.dilation)},
                     {"VKF_CONV_PT", glsl_int(y.pad_begin)}, {"VKF_CONV_PL", glsl_int(x.pad_begin)},
                     // An invocation's two columns share an output row where OW is even (they start
                     // at an even n): one row of X for both (docs/tuning-log.md, "VKF_CONV_PAIRED").
                     {"VKF_CONV_PAIRED", s.ow % 2 == 0 ? "1" : "0"}};
  if (!choose_coopmat_tiling(p, device)) return std::nullopt;
  return gemm_launch(p, device);
}

// A 1x1 Conv of one group over 1x1 images (a squeeze-and-excitation block's two, on its pooled vector)
// is a vector times a matrix, Y[n, m] = X[n, :] . W[m, :] (+ B[m]), a row per image. Where the images are
// few enough for roots/gemm_skinny.glsl, that root computes it: its workgroups split W's rows between
// them and read each in runs along C, where the implicit GEMM's tiles of output channels by images were
// mostly padding. Computing a block's first Conv in the loads of its second instead (one dispatch fewer
// per block) was slower (docs/tuning-log.md, "vector_launch").
std::optional<KernelLaunch> vector_launch(const ConvShape& s, std::span<const TensorInfo> in, const DevicePlan& device) {
  if (s.group != 1 || s.h * s.w != 1 || !is_pointwise(s)) return std::nullopt;
  GemmProblem p;
  p.m = s.n;
  p.n = s.m;
  p.k = s.c;
  p.a_stride_m = s.c;  // X [N, C]
  p.b_stride_n = s.c;  // W [M, C]: B[k, n] = W[n, k]
  p.value = s.has_bias ? "((acc) + VKF_IN2(n))" : "(acc)";
  p.a_dtype = in[0].dtype;
  p.b_dtype = in[1].dtype;
  p.a_computed = in[0].load_cost > 0.0f;
  if (choose_gemm_tiling(p, device).kernel != GemmKernel::kSkinny) return std::nullopt;
  return gemm_launch(p, device);
}

Result<KernelLaunch> launch_conv(std::span<const TensorInfo> in, const TensorInfo& out, const OpAttrs& attrs,
                                 const DevicePlan& device) {
  VKFUSE_ASSIGN_OR_RETURN(ConvShape s, conv_shape(in, attrs));
  if (auto launch = vector_launch(s, in, device)) return *std::move(launch);
  if (s.cg == 1) return direct_conv_launch(s, out.plane_sums, device);
  if (s.group > 1 && s.cg <= kDirectMaxGroupInputs && out.plane_sums)  // only where it folds the planes: alone it is slower
    if (KernelLaunch launch = direct_conv_launch(s, true, device); launch.plane_sums) return launch;
  const bool f16 = in[0].dtype == DType::kF16 && in[1].dtype == DType::kF16;
  const bool computed_x = in[0].load_cost > 0.0f;
  if (auto launch = coopmat_launch(s, f16, computed_x, device)) return *std::move(launch);
  if (auto launch = patch_launch(s, computed_x, device)) return *std::move(launch);
  return implicit_gemm_launch(s, computed_x, out, device);
}

// A depthwise Conv's output element alone (shaders/elements/conv2d_depthwise.glsl), for a consumer's
// loads; its cost is its window's taps.
Result<ElementLaunch> conv_element(std::span<const TensorInfo> in, const TensorInfo&, const OpAttrs& attrs) {
  VKFUSE_ASSIGN_OR_RETURN(ConvShape s, conv_shape(in, attrs));
  if (s.cg != 1) return make_error(ErrorCode::kUnsupported, "only a depthwise Conv's elements are computed alone");
  ElementLaunch element;
  element.root = "elements/conv2d_depthwise.glsl";
  for (auto [name, value] : conv_defines(s)) element.defines.emplace_back("VKF_E_" + name.substr(4), std::move(value));
  element.cost = static_cast<float>(s.axes[0].kernel * s.axes[1].kernel);
  element.run_row = s.ow;
  return element;
}

// A 1x1 Conv of one group over 1x1 images without padding: per image, W [m, c] times the image's c
// channels, plus B (a squeeze-and-excitation block's products).
Result<VectorProduct> conv_vector_product(std::span<const TensorInfo> in, const TensorInfo&, const OpAttrs& attrs) {
  VKFUSE_ASSIGN_OR_RETURN(ConvShape s, conv_shape(in, attrs));
  for (const WindowAxis& a : s.axes)
    if (a.kernel != 1 || a.pad_begin != 0 || a.pad_end != 0)
      return make_error(ErrorCode::kUnsupported, "only a 1x1 Conv without padding is a product per image");
  if (s.group != 1 || s.h != 1 || s.w != 1 || s.oh != 1 || s.ow != 1)
    return make_error(ErrorCode::kUnsupported, "only a Conv of one group over 1x1 images is a product per image");
  return VectorProduct{.weight = 1, .bias = s.has_bias ? 2 : -1, .in = s.c, .out = s.m, .row_stride = s.c, .k_stride = 1};
}

Result<KernelLaunch> launch_conv_transpose(std::span<const TensorInfo> in, const TensorInfo&, const OpAttrs& attrs,
                                           const DevicePlan& device) {
  VKFUSE_ASSIGN_OR_RETURN(ConvShape s, conv_transpose_shape(in, attrs));
  KernelLaunch launch;
  launch.root = "roots/conv_transpose2d.glsl";
  launch.workgroup_size = device.elementwise_workgroup;
  launch.defines = conv_defines(s);
  launch.workgroups = {grid_for(s.n * s.m * s.oh * s.ow, launch.workgroup_size, device), 1, 1};
  return launch;
}

std::vector<TensorInfo> ref_infos(std::span<const RefTensor> in) {
  std::vector<TensorInfo> infos;
  for (const RefTensor& t : in) infos.push_back({t.shape, DType::kF32});
  return infos;
}

// The references walk the other way round from the shaders where they can: Conv clips each window to
// the input first, ConvTranspose scatters every input element into the outputs it touches.
Status reference_conv(std::span<const RefTensor> in, const OpAttrs& attrs, RefTensor& out) {
  VKFUSE_ASSIGN_OR_RETURN(ConvShape s, conv_shape(ref_infos(in), attrs));
  const std::vector<double>& x = in[0].data;
  const std::vector<double>& w = in[1].data;
  const std::int64_t kh = s.axes[0].kernel, kw = s.axes[1].kernel;
  for (std::int64_t n = 0; n < s.n; ++n)
    for (std::int64_t m = 0; m < s.m; ++m)
      for (std::int64_t oy = 0; oy < s.oh; ++oy)
        for (std::int64_t ox = 0; ox < s.ow; ++ox) {
          double acc = s.has_bias ? in[2].data[static_cast<std::size_t>(m)] : 0.0;
          const std::int64_t group = m / s.mg;
          for (std::int64_t ci = 0; ci < s.cg; ++ci) {
            const std::int64_t c = group * s.cg + ci;
            for (std::int64_t i = 0; i < kh; ++i) {
              const std::int64_t y = oy * s.axes[0].stride - s.axes[0].pad_begin + i * s.axes[0].dilation;
              if (y < 0 || y >= s.h) continue;
              for (std::int64_t j = 0; j < kw; ++j) {
                const std::int64_t xx = ox * s.axes[1].stride - s.axes[1].pad_begin + j * s.axes[1].dilation;
                if (xx < 0 || xx >= s.w) continue;
                acc += x[static_cast<std::size_t>(((n * s.c + c) * s.h + y) * s.w + xx)] *
                       w[static_cast<std::size_t>(((m * s.cg + ci) * kh + i) * kw + j)];
              }
            }
          }
          out.data[static_cast<std::size_t>(((n * s.m + m) * s.oh + oy) * s.ow + ox)] = acc;
        }
  return {};
}

Status reference_conv_transpose(std::span<const RefTensor> in, const OpAttrs& attrs, RefTensor& out) {
  VKFUSE_ASSIGN_OR_RETURN(ConvShape s, conv_transpose_shape(ref_infos(in), attrs));
  const std::vector<double>& x = in[0].data;
  const std::vector<double>& w = in[1].data;
  const std::int64_t kh = s.axes[0].kernel, kw = s.axes[1].kernel;
  for (std::int64_t n = 0; n < s.n; ++n)
    for (std::int64_t m = 0; m < s.m; ++m)
      for (std::int64_t p = 0; p < s.oh * s.ow; ++p)
        out.data[static_cast<std::size_t>((n * s.m + m) * s.oh * s.ow + p)] =
            s.has_bias ? in[2].data[static_cast<std::size_t>(m)] : 0.0;
  for (std::int64_t n = 0; n < s.n; ++n)
    for (std::int64_t c = 0; c < s.c; ++c) {
      const std::int64_t group = c / s.cg;
      for (std::int64_t iy = 0; iy < s.h; ++iy)
        for (std::int64_t ix = 0; ix < s.w; ++ix) {
          const double v = x[static_cast<std::size_t>(((n * s.c + c) * s.h + iy) * s.w + ix)];
          for (std::int64_t ml = 0; ml < s.mg; ++ml) {
            const std::int64_t m = group * s.mg + ml;
            for (std::int64_t i = 0; i < kh; ++i) {
              const std::int64_t oy = iy * s.axes[0].stride - s.axes[0].pad_begin + i * s.axes[0].dilation;
              if (oy < 0 || oy >= s.oh) continue;
              for (std::int64_t j = 0; j < kw; ++j) {
                const std::int64_t ox = ix * s.axes[1].stride - s.axes[1].pad_begin + j * s.axes[1].dilation;
                if (ox < 0 || ox >= s.ow) continue;
                out.data[static_cast<std::size_t>(((n * s.m + m) * s.oh + oy) * s.ow + ox)] +=
                    v * w[static_cast<std::size_t>(((c * s.mg + ml) * kh + i) * kw + j)];
              }
            }
          }
        }
    }
  return {};
}

constexpr TestDomain kDomain{-2.0f, 2.0f, 0.0f, false};

const OpDef kConvOps[] = {
    {.name = "Conv", .kind = OpKind::kKernel, .arity = 3,
     .input_class = {InputClass::kFloat, InputClass::kFloat, InputClass::kFloat}, .type_rule = TypeRule::kSameAsFirst,
     .attrs = kConvAttrs, .cost = 0.0f, .tolerance = Tolerance::kSmooth, .domain = kDomain, .list_attrs = kConvLists,
     .min_arity = 2, .infer = infer_conv, .launch = launch_conv, .reference_kernel = reference_conv, .scratch = 2,
     .element = conv_element, .vector_product = conv_vector_product},
    {.name = "ConvTranspose", .kind = OpKind::kKernel, .arity = 3,
     .input_class = {InputClass::kFloat, InputClass::kFloat, InputClass::kFloat}, .type_rule = TypeRule::kSameAsFirst,
     .attrs = kConvAttrs, .cost = 0.0f, .tolerance = Tolerance::kSmooth, .domain = kDomain,
     .list_attrs = kConvTransposeLists, .min_arity = 2, .infer = infer_conv_transpose, .launch = launch_conv_transpose,
     .reference_kernel = reference_conv_transpose},
};

}  // namespace

std::span<const OpDef> conv_ops() { return kConvOps; }

std::size_t conv_tile_count() { return std::size(kConvTiles); }

ScopedConvTile::ScopedConvTile(std::size_t index, std::int64_t parts) : saved_(g_forced_tile) {
  ConvTile tile = kConvTiles[std::min(index, std::size(kConvTiles) - 1)];
  tile.parts = std::max<std::int64_t>(parts, 1);
  g_forced_tile = tile;
}

ScopedConvTile::ScopedConvTile(const ConvTile& tile) : saved_(g_forced_tile) { g_forced_tile = tile; }

ScopedConvTile::~ScopedConvTile() { g_forced_tile = saved_; }

// The root steps its loads by invocations / BK and invocations / BN (roots/conv2d.glsl), with BK a power
// of two up to 64 (choose_conv_bk): the invocations must be a power of two of at least 64 (a 24x6 tile
// of 6x2 blocks, 12 invocations, computed wrong results), which also ends min_conv_bk's search.
bool conv_tile_usable(const ConvTile& t, const DevicePlan& device) {
  const bool shape = t.bm > 0 && t.bn > 0 && t.tm > 0 && t.tn > 0 && t.tm % 2 == 0 && t.tn % 2 == 0 &&
                     t.bm % t.tm == 0 && t.bn % t.tn == 0 && (t.split == 1 || t.split == 2 || t.split == 4) &&
                     t.parts >= 1 && t.parts <= 16;
  const std::int64_t invocations = shape ? t.invocations() : 0;
  return shape && invocations >= 64 && std::has_single_bit(static_cast<std::uint64_t>(invocations)) &&
         invocations % t.bn == 0 && conv_tile_fits(t, device);
}

}  // namespace vkfuse
