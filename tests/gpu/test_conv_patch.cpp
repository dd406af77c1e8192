// The direct Conv root with staged input patches (roots/conv2d_patch.glsl): which Convs take it and with
// which tile, every tile shape against the CPU reference (odd channels, strides, dilations, pads, K
// whole and split over workgroups, f32 and f16), and post-fused chains in its stores, fused vs unfused.
#include <doctest/doctest.h>

#include <iterator>
#include <string>

#include "backend/device_plan.h"
#include "host/op_registry.h"
#include "host/ops/nn_support.h"
#include "support/fusion_check.h"
#include "support/gpu_context.h"
#include "support/kernel_case.h"

namespace vkfuse::testing {

namespace {

using Ints = std::vector<std::int64_t>;

DevicePlan h100_plan() {
  DevicePlan plan;
  plan.shared_memory_bytes = 49152;
  plan.max_workgroup_invocations = 1024;
  plan.subgroup_size = 32;
  plan.max_groups_x = 2147483647u;
  return plan;
}

// The root Conv takes for X and W (pads of half the window, `stride`) on `plan`, and for the patch root
// its tile, parts and grid: "patch 32/4 8x16/4 ck8 p4 224x256" (BM/RM THxTW/RW, CK, parts, workgroups
// x invocations).
std::string conv_root(const Shape& x, const Shape& w, const DevicePlan& plan, std::int64_t stride = 1, float group = 1.0f,
                      DType dtype = DType::kF32) {
  const OpDef* op = find_op("Conv");
  REQUIRE(op != nullptr);
  const std::vector<TensorInfo> in = {{x, dtype}, {w, dtype}};
  AttrLists lists;
  const std::int64_t pad = w[2] / 2;
  lists.emplace("pads", Ints{pad, pad, pad, pad});
  lists.emplace("strides", Ints{stride, stride});
  const float groups[] = {group};
  auto launch = op->launch(in, TensorInfo{}, OpAttrs{groups, lists}, plan);
  REQUIRE_MESSAGE(launch.ok(), launch.status().to_string());
  if (launch->root != "roots/conv2d_patch.glsl") return launch->root;
  auto define = [&](std::string_view name) { return launch_define(*launch, name); };
  const std::string parts = define("VKF_SPLIT_GROUPS");
  CHECK((parts == "1") == (launch->split_counters == 0));
  return "patch " + define("VKF_BM") + "/" + define("VKF_RM") + " " + define("VKF_TH") + "x" + define("VKF_TW") + "/" +
         define("VKF_RW") + " ck" + define("VKF_CK") + " p" + parts + " " + std::to_string(launch->workgroups[0]) + "x" +
         std::to_string(launch->workgroup_size);
}

}  // namespace

TEST_CASE("Conv picks the patch root for batch-1 layers of one group, the implicit GEMM elsewhere") {
  const DevicePlan h100 = h100_plan();
  // resnet's 3x3 layers at batch 1: 8 x 16 blocks of 32 channels, 4 x 4 outputs per invocation; 7-row
  // blocks where they tile the height exactly (28, 14, 7); 8-wide blocks on 7x7 outputs; blocks of 64
  // channels for 512. K goes over the most workgroups (of 16, 8, 4, 2) that stay within four per SM
  // (528) with two steps of 8 channels each.
  CHECK(conv_root({1, 64, 56, 56}, {64, 64, 3, 3}, h100) == "patch 32/4 8x16/4 ck8 p4 224x256");
  CHECK(conv_root({1, 128, 28, 28}, {128, 128, 3, 3}, h100) == "patch 32/4 7x16/4 ck8 p8 256x224");
  CHECK(conv_root({1, 256, 14, 14}, {256, 256, 3, 3}, h100) == "patch 32/4 7x16/4 ck8 p16 256x224");
  CHECK(conv_root({1, 512, 7, 7}, {512, 512, 3, 3}, h100) == "patch 64/4 7x8/4 ck8 p16 128x224");
  CHECK(conv_root({1, 64, 56, 56}, {128, 64, 3, 3}, h100, 2) == "patch 32/4 7x16/4 ck8 p4 128x224");
  // vgg11's second layer: 392 blocks, no split. Batch 8's 14x14 layers: K over two workgroups (up to
  // four per SM).
  CHECK(conv_root({1, 64, 112, 112}, {128, 64, 3, 3}, h100) == "patch 32/4 8x16/4 ck8 p1 392x256");
  CHECK(conv_root({8, 160, 14, 14}, {320, 160, 3, 3}, h100) == "patch 32/4 7x16/4 ck8 p2 320x224");  // googlenet
  // Not taken: windows that do not overlap (1x1, convnext's 2x2 stride 2), groups, inputs of fewer than
  // 32 channels (stems), and layers where the implicit GEMM fills the GPU with 8x8 blocks (batch 8);
  // nor with the patch root turned off.
  CHECK(conv_root({1, 96, 56, 56}, {192, 96, 2, 2}, h100, 2) == "roots/conv2d.glsl");
  CHECK(conv_root({1, 3, 224, 224}, {64, 3, 7, 7}, h100, 2) == "roots/conv2d.glsl");
  CHECK(conv_root({1, 16, 55, 55}, {64, 16, 3, 3}, h100) == "roots/conv2d.glsl");  // squeezenet1_1
  CHECK(conv_root({1, 256, 56, 56}, {64, 256, 1, 1}, h100) == "roots/conv2d.glsl");
  CHECK(conv_root({1, 24, 9, 10}, {36, 6, 3, 3}, h100, 1, 4.0f) == "roots/conv2d.glsl");
  CHECK(conv_root({8, 64, 112, 112}, {128, 64, 3, 3}, h100) == "roots/conv2d.glsl");
  {
    const ScopedPatchTile off(std::nullopt);
    CHECK(conv_root({1, 64, 56, 56}, {64, 64, 3, 3}, h100) == "roots/conv2d.glsl");
  }
  // Layers that would leave less than half the GPU busy: steps of 4 channels (more parts), then blocks of
  // 16 channels; still short, the implicit GEMM (densenet121's 7x7 3x3 layers).
  CHECK(conv_root({1, 32, 27, 27}, {128, 32, 3, 3}, h100) == "patch 32/4 7x16/4 ck4 p4 128x224");  // squeezenet1_1
  CHECK(conv_root({1, 128, 28, 28}, {32, 128, 3, 3}, h100) == "patch 32/4 7x16/4 ck4 p16 128x224");  // densenet121
  CHECK(conv_root({1, 128, 7, 7}, {32, 128, 3, 3}, h100) == "roots/conv2d.glsl");
  // No room for the split-K scratch: K whole, where that still fills the GPU. 16 KB of shared memory:
  // fewer channels a step.
  DevicePlan four = h100;
  four.max_bindings = 4;
  CHECK(conv_root({1, 64, 112, 112}, {128, 64, 3, 3}, four) == "patch 32/4 8x16/4 ck8 p1 392x256");
  CHECK(conv_root({1, 64, 56, 56}, {64, 64, 3, 3}, four) == "roots/conv2d.glsl");
  DevicePlan small = h100;
  small.shared_memory_bytes = 16384;
  small.max_workgroup_invocations = 256;
  CHECK(conv_root({1, 512, 7, 7}, {512, 512, 3, 3}, small) == "patch 64/4 7x8/4 ck4 p16 128x224");
}

TEST_CASE("a forced patch tile takes every Conv it fits, cooperative matrices or not, and no other") {
  DevicePlan coopmat = h100_plan();
  coopmat.coopmat_f16 = true;
  coopmat.f16_storage = true;
  CHECK(conv_root({1, 64, 28, 28}, {64, 64, 3, 3}, coopmat, 1, 1.0f, DType::kF16) == "roots/gemm_coopmat.glsl");
  {
    const ScopedPatchTile forced(PatchTile{.bm = 16, .rm = 4, .th = 4, .tw = 8, .rw = 4, .ck = 4, .parts = 2});
    CHECK(conv_root({1, 64, 28, 28}, {64, 64, 3, 3}, coopmat, 1, 1.0f, DType::kF16) == "patch 16/4 4x8/4 ck4 p2 224x32");
    CHECK(conv_root({1, 3, 28, 28}, {8, 3, 3, 3}, coopmat) == "patch 16/4 4x8/4 ck4 p1 28x32");  // below 32 channels too
    CHECK(conv_root({1, 64, 28, 28}, {64, 64, 1, 1}, coopmat) == "roots/conv2d.glsl");           // windows apart
  }
  // A tile of one invocation would stage 1296 weights each per step on a 9x9 window: it does not fit
  // (its unrolled loads would take minutes to compile), so the Conv keeps its own rule.
  {
    const ScopedPatchTile forced(PatchTile{.bm = 4, .rm = 4, .th = 1, .tw = 1, .rw = 1, .ck = 4, .parts = 1});
    CHECK(conv_root({1, 64, 28, 28}, {8, 64, 9, 9}, h100_plan()) == "roots/conv2d.glsl");
  }
  // Tiles of no size, negative sizes or shapes the root cannot take are not usable.
  const DevicePlan plan = h100_plan();
  CHECK(patch_tile_usable(PatchTile{.bm = 32, .rm = 4, .th = 8, .tw = 16, .rw = 4, .ck = 8}, plan));
  CHECK_FALSE(patch_tile_usable(PatchTile{.bm = 0, .rm = 4, .th = 8, .tw = 16, .rw = 4, .ck = 8}, plan));
  CHECK_FALSE(patch_tile_usable(PatchTile{.bm = 32, .rm = 4, .th = 8, .tw = 0, .rw = 4, .ck = 8}, plan));
  CHECK_FALSE(patch_tile_usable(PatchTile{.bm = -4, .rm = 4, .th = 8, .tw = 16, .rw = 4, .ck = 8}, plan));
  CHECK_FALSE(patch_tile_usable(PatchTile{.bm = 32, .rm = 2, .th = 8, .tw = 16, .rw = 4, .ck = 8}, plan));
  CHECK_FALSE(patch_tile_usable(PatchTile{.bm = 32, .rm = 4, .th = 8, .tw = 10, .rw = 4, .ck = 8}, plan));
  CHECK_FALSE(patch_tile_usable(PatchTile{.bm = 32, .rm = 4, .th = 8, .tw = 16, .rw = 4, .ck = 8, .parts = 17}, plan));
  CHECK_FALSE(patch_tile_usable(PatchTile{.bm = 256, .rm = 4, .th = 8, .tw = 16, .rw = 4, .ck = 8}, plan));  // 2048 invocations
}

// Tiles of every shape the root takes: 4 or 8 channels per invocation, 1, 2 or 4 outputs of a row,
// blocks narrower and wider than the outputs, 1 to 8 channels a step (K steps with channels past C),
// and K over 1, 2, 3 or 16 workgroups (fewer where C has fewer steps). Each runs every Conv case of one
// group with a window of more than one tap, in f32 and f16 by turns.
TEST_CASE("Conv matches its CPU reference on the patch root with every tile shape, K whole and split over workgroups") {
  const PatchTile tiles[] = {{.bm = 32, .rm = 4, .th = 8, .tw = 16, .rw = 4, .ck = 8, .parts = 1},
                             {.bm = 64, .rm = 8, .th = 4, .tw = 8, .rw = 4, .ck = 4, .parts = 3},
                             {.bm = 32, .rm = 4, .th = 3, .tw = 8, .rw = 2, .ck = 2, .parts = 2},
                             {.bm = 16, .rm = 4, .th = 5, .tw = 3, .rw = 1, .ck = 1, .parts = 16},
                             {.bm = 64, .rm = 4, .th = 2, .tw = 12, .rw = 4, .ck = 8, .parts = 2}};
  std::uint32_t seed = 700;
  int runs = 0;
  for (const PatchTile& tile : tiles) {
    const ScopedPatchTile forced(tile);
    CAPTURE(tile.bm);
    CAPTURE(tile.th);
    CAPTURE(tile.tw);
    CAPTURE(tile.parts);
    for (const KernelCase& c : nn_cases()) {
      if (std::string_view(c.op) != "Conv" || c.inputs[0][1] != c.inputs[1][1] || c.inputs[1][2] * c.inputs[1][3] == 1) continue;
      CAPTURE(shape_to_string(c.inputs[0]));
      CAPTURE(shape_to_string(c.inputs[1]));
      check_kernel_case(c, runs++ % 2 ? DType::kF16 : DType::kF32, seed++);
    }
  }
  CHECK(runs >= 5 * 10);
  CHECK(validation_errors() == 0);
}

// Post-fusion: the scale, shift, Relu and residual Add run in the patch root's stores, as vec4s where
// the output width is a multiple of 4 (and element by element where it is not), with K whole and split.
TEST_CASE("Conv -> scale -> shift -> Relu -> residual Add on the patch root is one dispatch") {
  struct Case {
    Shape x, w;
    std::int64_t stride;
    std::int64_t parts;
  };
  const Case cases[] = {{{1, 13, 16, 16}, {7, 13, 3, 3}, 1, 1},
                        {{1, 13, 16, 16}, {7, 13, 3, 3}, 1, 2},
                        {{1, 20, 11, 13}, {9, 20, 3, 3}, 2, 3},
                        {{2, 9, 12, 8}, {16, 9, 5, 5}, 1, 2}};
  std::uint32_t seed = 300;
  for (const Case& c : cases) {
    CAPTURE(shape_to_string(c.x));
    CAPTURE(c.parts);
    const ScopedPatchTile forced(PatchTile{.bm = 16, .rm = 4, .th = 4, .tw = 8, .rw = 4, .ck = 4, .parts = c.parts});
    const std::int64_t pad = c.w[2] / 2;
    GraphBuilder b;
    const Tensor x = b.input("x", c.x), w = b.input("w", c.w), bias = b.input("bias", {c.w[0]});
    const Tensor scale = b.input("scale", {1, c.w[0], 1, 1}), shift = b.input("shift", {c.w[0], 1, 1});
    const Tensor conv =
        b.op("Conv", {x, w, bias}, {{"pads", Ints{pad, pad, pad, pad}}, {"strides", Ints{c.stride, c.stride}}});
    const Shape out = b.shape(conv);
    const Tensor skip = b.input("skip", out);
    b.output(b.op("Add", {b.op("Relu", {b.op("Add", {b.op("Mul", {conv, scale}), shift})}), skip}), "y");
    auto graph = b.build();
    REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
    const FusionOutcome o = check_fused_unfused(
        *graph,
        random_feeds({{"x", c.x}, {"w", c.w}, {"bias", {c.w[0]}}, {"scale", {1, c.w[0], 1, 1}}, {"shift", {c.w[0], 1, 1}},
                      {"skip", out}},
                     seed++, TestDomain{-1.0f, 1.0f, 0.0f, false}),
        1e-5, 1e-4);
    CHECK(o.fused_dispatches == 1);
    CHECK(o.unfused_dispatches == 5);
  }
}

}  // namespace vkfuse::testing
