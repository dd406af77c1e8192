// Kernel ops (their own root templates) against their CPU references, and a check that every kernel
// op of the table has test cases. The cases live beside each table's tests (test_*_ops.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "host/context_impl.h"
#include "host/op_registry.h"
#include "host/ops/kernel_support.h"
#include "support/compare.h"
#include "support/fusion_check.h"
#include "support/gpu_context.h"
#include "support/kernel_case.h"

namespace vkfuse::testing {

namespace {

// The GEMM roots' edges: sizes that are not multiples of a tile in any dimension, K below one slice
// (8 or 16) and far above it, every blocking (the tests below check which one each size picks, and
// force the ones lavapipe's limits do not pick), batches broadcast either way, and the skinny root's
// few rows.
const std::vector<KernelCase> kMatMulCases = {
    {"MatMul", {{7, 13}, {13, 5}}},
    {"MatMul", {{1, 1}, {1, 1}}},
    {"MatMul", {{3, 1, 4, 6}, {2, 6, 5}}},  // batch broadcast, 4 rows: skinny
    {"MatMul", {{3, 1, 3, 9}, {2, 9, 40}}},  // the same, 3 rows of 2 workgroups
    {"MatMul", {{13}, {13, 7}}},            // 1-D left operand: skinny, one row
    {"MatMul", {{4, 13}, {13}}},            // 1-D right operand: one column
    {"MatMul", {{2, 33, 130}, {130, 31}}},
    {"MatMul", {{32, 129, 7}, {7, 129}}},              // 128x128 tiles (forced): 2x2 per batch with 1-row / 1-column edges; K < 8
    {"MatMul", {{2, 4, 200, 33}, {4, 33, 200}}},       // 64x64 tiles (forced); B's batch broadcast over A's first dimension
    {"MatMul", {{37, 1000}, {1000, 45}}},              // 32x32 tiles split over 16 workgroups (the rule)
    {"MatMul", {{64, 16}, {16, 96}}},                  // whole 32x32 tiles: no bounds checks, one K step
    {"MatMul", {{256, 48}, {48, 256}}},                // whole tiles of every size, K of 3 (or 6) steps
    {"MatMul", {{5, 130}, {130, 7}}},                  // one row past the skinny root
    {"MatMul", {{1, 777}, {777, 50}}},                 // one row, long K split over the lanes
    {"MatMul", {{2, 1, 37, 9}, {3, 9, 40}}},           // batches broadcast both ways, tiled
    {"MatMul", {{9, 1, 40}, {40, 33}}},                // one B for all: 9 one-row products as 9 rows, tiled
    {"MatMul", {{1, 5, 3, 130}, {1, 130, 31}}},        // one B (batch dimension of 1): 15 rows of 5 products
    // A LayerNorm folded into the product: the row statistics summed from shared memory (K not whole
    // vec4s; f16), or from registers with subgroup shuffles (rows of whole vec4s, f32); rows that are
    // not a whole tile; 3 rows (the tiled root, never the skinny one); batches stacked into rows; K split
    // across workgroups.
    {"LayerNormMatMul", {{7, 13}, {13, 5}, {5}, {5}}},
    {"LayerNormMatMul", {{3, 130}, {130, 40}, {40}, {40}}},
    {"LayerNormMatMul", {{2, 33, 64}, {64, 31}, {31}, {31}}, {{"epsilon", 1e-3f}}},
    {"LayerNormMatMul", {{1, 197, 256}, {256, 96}, {96}, {96}}},
    {"LayerNormMatMul", {{37, 1000}, {1000, 45}, {45}, {45}}},  // K split across workgroups: parts' row sums added
};

// The root and blocking MatMul picks for these operands on `plan`, e.g. "tiled 128x128x16 2" (tile,
// stages), "tiled 32x32x16 2 split 4" (split K inside the workgroup), "tiled 32x32x16 2 over 4 workgroups"
// (split K across workgroups) or "skinny 4x32" (rows x columns per workgroup).
// With `layer_norm`, the same for LayerNormMatMul (its C and Bias vectors beside).
std::string matmul_blocking(const Shape& a, const Shape& b, const DevicePlan& plan, DType dtype = DType::kF32,
                            bool layer_norm = false) {
  const OpDef* op = find_op(layer_norm ? "LayerNormMatMul" : "MatMul");
  REQUIRE(op != nullptr);
  std::vector<TensorInfo> in = {{a, dtype}, {b, dtype}};
  if (layer_norm) in.insert(in.end(), 2, TensorInfo{{b.back()}, dtype});
  const AttrLists lists;
  std::vector<float> defaults;
  for (const AttrDef& attr : op->attrs) defaults.push_back(attr.default_value);
  auto launch = op->launch(in, TensorInfo{}, OpAttrs{defaults, lists}, plan);
  REQUIRE_MESSAGE(launch.ok(), launch.status().to_string());
  auto define = [&](std::string_view name) {
    for (const auto& [key, value] : launch->defines)
      if (key == name) return value.back() == 'u' ? value.substr(0, value.size() - 1) : value;
    FAIL("no define " << name);
    return std::string();
  };
  if (launch->root == "roots/gemm_skinny.glsl") return "skinny " + define("VKF_ROWS") + "x" + define("VKF_COLS");
  if (launch->root == "roots/gemm_coopmat.glsl")
    return "coopmat " + define("VKF_BM") + "x" + define("VKF_BN") + "x" + define("VKF_BK") + " " + define("VKF_WARPS_M") +
           "x" + define("VKF_WARPS_N") + "x" + define("VKF_WARPS_K") + " of " + std::to_string(launch->workgroup_size);
  REQUIRE(launch->root == "roots/gemm_tiled.glsl");
  const std::string split = define("VKF_SPLIT_K"), groups = define("VKF_SPLIT_GROUPS");
  return "tiled " + define("VKF_BM") + "x" + define("VKF_BN") + "x" + define("VKF_BK") + " " + define("VKF_STAGES") +
         (split == "1" ? "" : " split " + split) + (groups == "1" ? "" : " over " + groups + " workgroups");
}

// Clears force_gemm_tile's setting however the test leaves its scope.
struct ForcedTileReset {
  ForcedTileReset() = default;
  ForcedTileReset(const ForcedTileReset&) = delete;
  ForcedTileReset& operator=(const ForcedTileReset&) = delete;
  ~ForcedTileReset() { (void)force_gemm_tile(std::nullopt, DevicePlan{}); }
};

DevicePlan plan_with(std::uint32_t shared_memory_bytes, std::uint32_t max_workgroup_invocations) {
  DevicePlan plan;
  plan.shared_memory_bytes = shared_memory_bytes;
  plan.max_workgroup_invocations = max_workgroup_invocations;
  return plan;
}

}  // namespace

std::span<const KernelCase> matmul_cases() { return kMatMulCases; }

TEST_CASE("MatMul matches its CPU reference in f32 and f16") {
  std::uint32_t seed = 1;
  for (const KernelCase& c : matmul_cases()) {
    CAPTURE(shape_to_string(c.inputs[0]));
    check_kernel_case(c, DType::kF32, seed++);
    check_kernel_case(c, DType::kF16, seed++);
  }
  CHECK(validation_errors() == 0);
}

TEST_CASE("MatMul picks each GEMM blocking from its sizes and the device") {
  // Fill first (kernel_support.cpp choose_gemm_tiling): tiles whose invocations with real outputs reach
  // 132 x 256 (8x8 blocks without split K: 2^14, in 132 workgroups or more; 4x8 blocks, up to 256 rows: 24K) compete on outputs per invocation, else the most invocations win; split K (over slices of
  // a workgroup or over workgroups) where K gives each slice or workgroup two steps. 16-deep slices for the tiles of 64 invocations per slice where two stages fit;
  // the 128x128 tile 16 deep in one stage (on the H100 two stages cost it registers: tile_stages); the
  // 128x256 one (8x16 blocks) where its workgroups fill their rounds of 132.
  const DevicePlan lavapipe = plan_with(32768, 1024), h100 = plan_with(49152, 1024);
  for (const DevicePlan& plan : {lavapipe, h100}) {
    CAPTURE(plan.shared_memory_bytes);
    const std::string large = "tiled 128x256x16 1";
    CHECK(matmul_blocking({32, 129, 7}, {7, 129}, plan) == "tiled 32x32x16 2");  // 33K invocations of 4x4: the most
    CHECK(matmul_blocking({2, 4, 200, 33}, {4, 33, 200}, plan) == "tiled 32x32x16 2");  // K too short to split
    // Few outputs, long K: 32x32 tiles split over up to 16 workgroups, each part two steps or more.
    CHECK(matmul_blocking({37, 1000}, {1000, 45}, plan) == "tiled 32x32x16 2 over 16 workgroups");  // 4 tiles
    CHECK(matmul_blocking({5, 130}, {130, 7}, plan) == "tiled 32x32x16 2 over 3 workgroups");  // 4 asked; parts of 48
    CHECK(matmul_blocking({8192, 8192}, {8192, 8192}, plan) == large);
    CHECK(matmul_blocking({4096, 4096}, {4096, 4096}, plan) == large);
    CHECK(matmul_blocking({2048, 2048}, {2048, 2048}, plan) == large);  // 128 workgroups: 97% of a round
    // 8x16 blocks (one workgroup per SM) only where their last round is 85% full: 3072^2 is 288 of 3 x 132.
    CHECK(matmul_blocking({3072, 3072}, {3072, 3072}, plan) == "tiled 128x128x16 1");
    CHECK(matmul_blocking({1576, 768}, {768, 2304}, plan) == large);  // vit_b_16 batch 8: 117 workgroups
    CHECK(matmul_blocking({1576, 768}, {768, 3072}, plan) == "tiled 64x64x16 2");  // 156: 59% of 2 rounds
    // 8x8 blocks without split K: filled from 16K busy invocations in at least one workgroup per SM.
    CHECK(matmul_blocking({1024, 1024}, {1024, 1024}, plan) == "tiled 64x64x16 2");  // 256 workgroups; 128x128: 64
    CHECK(matmul_blocking({3136, 96}, {96, 384}, plan) == "tiled 64x64x16 2");  // convnext_tiny: 18.8K, 294
    CHECK(matmul_blocking({992, 1024}, {1024, 1024}, plan) == "tiled 32x32x16 2");  // 8x8: 15.9K, not filled
    // Batch-1 ViT (vit_b_16): 197 x 768 outputs are 37.8K busy invocations (43K launched: 7 x 24 tiles,
    // each over 4 workgroups of 64) only with K split 4 ways; 197 x 3072 outputs fill with 4x4 alone.
    CHECK(matmul_blocking({197, 768}, {768, 768}, plan) == "tiled 32x32x16 2 over 4 workgroups");  // 672 workgroups
    CHECK(matmul_blocking({197, 3072}, {3072, 768}, plan) == "tiled 32x32x16 2 over 4 workgroups");
    CHECK(matmul_blocking({1, 7, 7, 3072}, {3072, 768}, plan) == "tiled 32x32x16 2 over 16 workgroups");  // convnext_tiny
    // The other few-tile products of vit_b_16 and convnext_tiny (bench/results/h100_2026-11-23_534e55b.md).
    // 4x8 blocks fill from 24K busy invocations (in products of up to 256 rows over K of 128 or more):
    // 197 x 2304 and 197 x 3072 outputs over 2 workgroups.
    CHECK(matmul_blocking({197, 768}, {768, 2304}, plan) == "tiled 32x64x16 2 over 2 workgroups");
    CHECK(matmul_blocking({49, 768}, {768, 3072}, plan) == "tiled 32x32x16 2 over 4 workgroups");
    CHECK(matmul_blocking({196, 1536}, {1536, 384}, plan) == "tiled 32x32x16 2 over 8 workgroups");
    CHECK(matmul_blocking({196, 384}, {384, 1536}, plan) == "tiled 32x32x32 2 split 2");
    CHECK(matmul_blocking({784, 768}, {768, 192}, plan) == "tiled 32x32x16 2 over 4 workgroups");
    CHECK(matmul_blocking({3136, 384}, {384, 96}, plan) == "tiled 32x32x32 2 split 2");
    CHECK(matmul_blocking({197, 768}, {768, 3072}, plan) == "tiled 32x64x16 2 over 2 workgroups");
    CHECK(matmul_blocking({1, 777}, {777, 50}, plan) == "skinny 1x32");
    CHECK(matmul_blocking({3, 1, 3, 9}, {2, 9, 40}, plan) == "skinny 3x32");
    CHECK(matmul_blocking({2, 1, 37, 9}, {3, 9, 40}, plan) == "tiled 32x32x16 2");
    CHECK(matmul_blocking({4, 13}, {13}, plan) == "skinny 4x8");  // one column: 32 lanes of K for it
    // One B for every product: the batches' rows are one problem's rows. vit_b_16's QKV projection is
    // 197 products of one row (skinny, B re-read 197 times, before), convnext_tiny's last stage 7
    // products of 7 rows; each now picks what its stacked rows pick.
    CHECK(matmul_blocking({197, 1, 768}, {768, 2304}, plan) == matmul_blocking({197, 768}, {768, 2304}, plan));
    CHECK(matmul_blocking({197, 1, 768}, {768, 2304}, plan) != "skinny 1x32");
    CHECK(matmul_blocking({1, 7, 7, 3072}, {3072, 768}, plan) == matmul_blocking({49, 3072}, {3072, 768}, plan));
    CHECK(matmul_blocking({9, 1, 40}, {1, 40, 33}, plan) == "tiled 32x32x16 2");
  }
  // The Vulkan minimums (16 KB, 128 invocations): no 128x128 tile, no split 4, and 8-deep 64x64 slices
  // (two stages of 64x64x16 take 17 KB); 16 KB and 256 invocations: 128x128x8 in one stage.
  CHECK(matmul_blocking({4096, 4096}, {4096, 4096}, plan_with(16384, 128)) == "tiled 64x64x8 2");
  CHECK(matmul_blocking({4096, 4096}, {4096, 4096}, plan_with(16384, 256)) == "tiled 128x128x8 1");
  CHECK(matmul_blocking({37, 1000}, {1000, 45}, plan_with(16384, 128)) == "tiled 32x32x16 2 over 16 workgroups");
  CHECK(matmul_blocking({1, 777}, {777, 50}, plan_with(16384, 128)) == "skinny 1x32");
}

TEST_CASE("LayerNormMatMul always takes the tiled root, with the blocking MatMul would take there") {
  // Its row statistics live in the tiled root: no skinny root for few rows, no cooperative matrices for
  // f16; K split across workgroups as MatMul's (the parts' row sums meet in the scratch).
  DevicePlan h100 = plan_with(49152, 1024);
  h100.subgroup_size = 32;
  h100.subgroup_shuffle = true;
  CHECK(matmul_blocking({3, 130}, {130, 40}, h100, DType::kF32, true) == "tiled 32x32x16 2 over 3 workgroups");
  CHECK(matmul_blocking({197, 768}, {768, 2304}, h100, DType::kF32, true) == "tiled 32x64x16 2 over 2 workgroups");
  CHECK(matmul_blocking({197, 768}, {768, 3072}, h100, DType::kF32, true) == "tiled 32x64x16 2 over 2 workgroups");
  CHECK(matmul_blocking({3136, 96}, {96, 384}, h100, DType::kF32, true) == "tiled 64x64x16 2");
  h100.f16_storage = true;
  h100.coopmat_f16 = true;
  CHECK(matmul_blocking({1024, 1024}, {1024, 1024}, h100, DType::kF16).rfind("coopmat", 0) == 0);
  CHECK(matmul_blocking({1024, 1024}, {1024, 1024}, h100, DType::kF16, true) == "tiled 64x64x16 2");
}

// f16 operands on a device with NV cooperative matrices (16x16x16 fp16 products; the H100): 128x128x64
// tiles of 2 x 2 subgroups where they give 132 SMs a workgroup each (32 deep where 64 does not fit the
// shared memory), else 64x64 or 32x32 tiles, 64 deep (two buffers of staged slices) where that pads K no
// more than 32 deep; f32 operands, a few rows and a forced tile keep their roots.
TEST_CASE("f16 MatMul picks the cooperative-matrix root where the device has one") {
  const ForcedTileReset reset;
  DevicePlan h100 = plan_with(49152, 1024);
  h100.subgroup_size = 32;
  CHECK(matmul_blocking({4096, 4096}, {4096, 4096}, h100, DType::kF16) == "tiled 128x256x16 1");  // no coopmat
  h100.coopmat_f16 = true;
  // Large products: 128x128 tiles (1024 or 256 of them, each SM sub-partition busy); 1024^3: 64x64.
  CHECK(matmul_blocking({4096, 4096}, {4096, 4096}, h100, DType::kF16) == "coopmat 128x128x64 2x2x1 of 128");
  CHECK(matmul_blocking({2048, 2048}, {2048, 2048}, h100, DType::kF16) == "coopmat 128x128x64 2x2x1 of 128");
  CHECK(matmul_blocking({1024, 1024}, {1024, 1024}, h100, DType::kF16) == "coopmat 64x64x64 2x2x1 of 128");
  // vit_b_16's 197 x 768 outputs: 32x32 tiles fill the GPU (672 subgroups); a 7x7 layer's 49 x 512
  // outputs over K = 4608 cannot: the most subgroups, 4 along K on each 16x16 block.
  CHECK(matmul_blocking({197, 768}, {768, 768}, h100, DType::kF16) == "coopmat 32x32x64 2x2x1 of 128");
  CHECK(matmul_blocking({512, 4608}, {4608, 49}, h100, DType::kF16) == "coopmat 32x32x128 2x2x4 of 512");
  CHECK(matmul_blocking({512, 200}, {200, 49}, h100, DType::kF16) == "coopmat 32x32x64 2x2x2 of 256");
  // K under 2 x 64: no subgroups along K; 64 deep pads K 100 to 128 as 32 deep does, in fewer steps.
  CHECK(matmul_blocking({512, 100}, {100, 49}, h100, DType::kF16) == "coopmat 32x32x64 2x2x1 of 128");
  CHECK(matmul_blocking({512, 96}, {96, 49}, h100, DType::kF16) == "coopmat 32x32x32 2x2x1 of 128");  // 64 deep pads more
  DevicePlan smaller = h100;
  smaller.shared_memory_bytes = 32768;
  CHECK(matmul_blocking({4096, 4096}, {4096, 4096}, smaller, DType::kF16) == "coopmat 128x128x32 2x2x1 of 128");
  CHECK(matmul_blocking({4096, 4096}, {4096, 4096}, h100) == "tiled 128x256x16 1");
  CHECK(matmul_blocking({1, 777}, {777, 50}, h100, DType::kF16) == "skinny 1x32");
  REQUIRE(force_gemm_tile(GemmTile{64, 64, 16, 8, 8}, h100).ok());
  CHECK(matmul_blocking({4096, 4096}, {4096, 4096}, h100, DType::kF16) == "tiled 64x64x16 2");
}

TEST_CASE("a forced GEMM tile replaces the rule's choice until cleared, and must fit the device") {
  const ForcedTileReset reset;
  const DevicePlan lavapipe = plan_with(32768, 1024), h100 = plan_with(49152, 1024), small = plan_with(16384, 1024);
  // The rule's choices, before any tile is forced ("MatMul picks each GEMM blocking ..." pins them).
  const std::string rule_h100 = matmul_blocking({1024, 1024}, {1024, 1024}, h100);
  const std::string rule_small = matmul_blocking({1024, 1024}, {1024, 1024}, small);
  REQUIRE(force_gemm_tile(GemmTile{128, 256, 8, 8, 16}, h100).ok());
  CHECK(matmul_blocking({1024, 1024}, {1024, 1024}, h100) == "tiled 128x256x8 1");
  CHECK(matmul_blocking({1024, 1024}, {1024, 1024}, h100) != rule_h100);
  CHECK(matmul_blocking({4, 13}, {13}, h100) == "skinny 4x8");  // a few rows stay skinny
  REQUIRE(force_gemm_tile(GemmTile{128, 256, 16, 8, 16}, lavapipe).ok());  // 25 KB: fits lavapipe's 32
  CHECK(matmul_blocking({1024, 1024}, {1024, 1024}, lavapipe) == "tiled 128x256x16 1");
  REQUIRE(force_gemm_tile(GemmTile{128, 128, 16, 8, 8}, lavapipe).ok());
  CHECK(matmul_blocking({1024, 1024}, {1024, 1024}, lavapipe) == "tiled 128x128x16 1");  // 256 invocations: one stage
  CHECK(matmul_blocking({1024, 1024}, {1024, 1024}, h100) == "tiled 128x128x16 1");  // 256 invocations: one stage
  CHECK(matmul_blocking({1024, 1024}, {1024, 1024}, small) == rule_small);  // no fit: the rule
  REQUIRE(force_gemm_tile(GemmTile{32, 32, 8, 4, 4, 4}, h100).ok());  // split K, whatever K is
  CHECK(matmul_blocking({7, 13}, {13, 5}, h100) == "tiled 32x32x8 2 split 4");
  REQUIRE(force_gemm_tile(std::nullopt, h100).ok());
  CHECK(matmul_blocking({1024, 1024}, {1024, 1024}, h100) == rule_h100);
  // Rejected, and the rule stays: a block that is not vec4s, a slice the invocations do not divide, a
  // tile past the device.
  CHECK_FALSE(force_gemm_tile(GemmTile{64, 64, 8, 6, 8}, h100).ok());
  CHECK_FALSE(force_gemm_tile(GemmTile{128, 128, 4, 4, 4}, h100).ok());  // 1024 invocations, 512 elements of A
  CHECK_FALSE(force_gemm_tile(GemmTile{64, 64, 12, 8, 8}, h100).ok());   // runs of 8 k
  CHECK_FALSE(force_gemm_tile(GemmTile{256, 256, 32, 8, 8}, lavapipe).ok());  // 65 KB
  CHECK_FALSE(force_gemm_tile(GemmTile{256, 256, 8, 4, 4}, h100).ok());  // 4096 invocations
  CHECK_FALSE(force_gemm_tile(GemmTile{32, 32, 16, 4, 4, 3}, h100).ok());  // split 1, 2 or 4
  CHECK_FALSE(force_gemm_tile(GemmTile{32, 32, 2, 4, 4, 4}, h100).ok());   // split dividing bk
  CHECK_FALSE(force_gemm_tile(GemmTile{64, 64, 8, 8, 8, 4}, lavapipe).ok());  // 48 KB of partial sums
  CHECK(matmul_blocking({1024, 1024}, {1024, 1024}, h100) == rule_h100);
}

// The blockings the device above does not pick run here too: the test's context plans as a device with
// the Vulkan minimums would (restored after).
TEST_CASE("MatMul matches its CPU reference with the blockings of minimum devices") {
  DevicePlan& plan = gpu_context().impl()->plan;
  const DevicePlan saved = plan;
  std::uint32_t seed = 500;
  for (const DevicePlan& small : {plan_with(16384, 256), plan_with(16384, 128)}) {
    plan.shared_memory_bytes = small.shared_memory_bytes;
    plan.max_workgroup_invocations = small.max_workgroup_invocations;
    for (const KernelCase& c : matmul_cases()) {
      CAPTURE(shape_to_string(c.inputs[0]));
      CAPTURE(plan.max_workgroup_invocations);
      check_kernel_case(c, DType::kF32, seed++);
    }
  }
  plan = saved;
  CHECK(validation_errors() == 0);
}

// Where the device has fp16 cooperative matrices (not lavapipe: there the test says so and checks
// nothing), every tile of the cooperative-matrix root runs the f16 MatMul cases and the Conv cases of
// one group against their CPU references, and so do tiles that split K across 2, 3 and 16 workgroups
// (with 1 and 2 subgroups along K inside).
TEST_CASE("f16 MatMul and Conv match their references with every cooperative-matrix tile") {
  const DevicePlan& plan = gpu_context().impl()->plan;
  if (!plan.coopmat_f16) {
    MESSAGE("this device has no fp16 cooperative matrices: the cooperative-matrix tiles are not run");
    return;
  }
  struct Reset {
    ~Reset() { (void)force_coopmat_tile(std::nullopt, DevicePlan{}); }
  } reset;
  std::uint32_t seed = 700;
  std::vector<CoopmatTile> tiles(coopmat_tiles().begin(), coopmat_tiles().end());
  tiles.insert(tiles.end(), {CoopmatTile{32, 32, 1, 2, 2, 3}, CoopmatTile{64, 32, 1, 2, 2, 2},
                             CoopmatTile{32, 64, 2, 2, 2, 2}, CoopmatTile{32, 32, 1, 2, 2, 16}});
  for (const CoopmatTile& tile : tiles) {
    CAPTURE(tile.tile);
    CAPTURE(tile.bk);
    CAPTURE(tile.warps_k);
    CAPTURE(tile.groups);
    REQUIRE(force_coopmat_tile(tile, plan).ok());
    for (const std::span<const KernelCase> cases : {matmul_cases(), nn_cases()})
      for (const KernelCase& c : cases) {
        if (std::string_view(c.op) == "Conv" ? c.inputs[1][1] != c.inputs[0][1] : std::string_view(c.op) != "MatMul")
          continue;  // Conv of one group only
        CAPTURE(shape_to_string(c.inputs[0]));
        CAPTURE(shape_to_string(c.inputs[1]));
        check_kernel_case(c, DType::kF16, seed++);
      }
  }
  CHECK(validation_errors() == 0);
}

// Every blocking on the small products of the cases, which the rule would give other tiles: 128x128x16
// (one stage), 128x256 with 16 columns per invocation (8 and 16 deep), and 64x64x16 in f16
// too; and every split-K tile (32x32 4x4 with 2 and 4 slices, 8, 16, 32 and 64
// deep (64: one stage here, two on an H100), 64x64 8x8 with 2), in f16 too, whatever K; and split K
// across 3, 4 (with 2 slices inside) and 16 workgroups per tile. MatMul's cases and Gemm's (every
// transA / transB, so each operand is read along K and across it).
// The kernel cases of `ops` (MatMul's and nn's tables) with each forced GEMM tile: f32, and f16 on the
// 64-row tiles and the split ones.
void check_forced_tiles(std::initializer_list<std::string_view> ops, std::uint32_t seed) {
  const ForcedTileReset reset;
  const DevicePlan& plan = gpu_context().impl()->plan;
  for (const GemmTile& tile : {GemmTile{128, 128, 16, 8, 8}, GemmTile{128, 256, 8, 8, 16}, GemmTile{128, 256, 16, 8, 16},
                               GemmTile{64, 64, 16, 8, 8}, GemmTile{128, 32, 16, 8, 8},
                               GemmTile{32, 32, 16, 4, 4, 2}, GemmTile{32, 32, 16, 4, 4, 4}, GemmTile{32, 32, 8, 4, 4, 4},
                               GemmTile{64, 64, 16, 8, 8, 2}, GemmTile{64, 64, 8, 8, 8, 2}, GemmTile{32, 32, 32, 4, 4, 2},
                               GemmTile{32, 32, 32, 4, 4, 4}, GemmTile{32, 32, 64, 4, 4, 4},
                               GemmTile{64, 64, 16, 8, 8, 1, 3}, GemmTile{32, 32, 16, 4, 4, 2, 4},
                               GemmTile{32, 32, 8, 4, 4, 1, 16}}) {
    REQUIRE(force_gemm_tile(tile, plan).ok());
    CAPTURE(tile.bm);
    CAPTURE(tile.bn);
    CAPTURE(tile.bk);
    CAPTURE(tile.split);
    CAPTURE(tile.groups);
    for (auto cases : {matmul_cases(), nn_cases()})
      for (const KernelCase& c : cases) {
        if (std::find(ops.begin(), ops.end(), std::string_view(c.op)) == ops.end()) continue;
        CAPTURE(c.op);
        CAPTURE(shape_to_string(c.inputs[0]));
        check_kernel_case(c, DType::kF32, seed++);
        if (tile.bm == 64 || tile.split > 1) check_kernel_case(c, DType::kF16, seed++);
      }
  }
  REQUIRE(force_gemm_tile(std::nullopt, plan).ok());
  CHECK(validation_errors() == 0);
}

TEST_CASE("MatMul and Gemm match their CPU references with forced GEMM tiles") {
  check_forced_tiles({"MatMul", "Gemm"}, 900);
}

// (128x32 of 8x8 blocks: 64 invocations for 128 rows, each summing two rows' statistics where shuffles
// do not; 64 deep on lavapipe: 16 lanes per row, more than its subgroup of 8.)
TEST_CASE("LayerNormMatMul matches its CPU reference with forced GEMM tiles") {
  check_forced_tiles({"LayerNormMatMul"}, 1900);
}

TEST_CASE("split K across workgroups: counters are left zero for the next run and the next such group") {
  //   x[45,300] ─ MatMul(w1[300,37]) ─ Add(b) ─ Relu ─ MatMul(w2[37,29]) ─ Add(x2) ─ y
  // Both MatMuls split K over 3 workgroups per tile (forced); they share the session's counters
  // and partial sums. Three runs of one session, each with new inputs, must all match the reference: a
  // counter left non-zero would make the next run's tiles store before all their parts have arrived.
  const ForcedTileReset reset;
  const DevicePlan& plan = gpu_context().impl()->plan;
  REQUIRE(force_gemm_tile(GemmTile{32, 32, 16, 4, 4, 1, 3}, plan).ok());
  GraphBuilder b;
  const Tensor x = b.input("x", {45, 300}), w1 = b.input("w1", {300, 37}), bias = b.input("b", {37});
  const Tensor w2 = b.input("w2", {37, 29}), x2 = b.input("x2", {45, 29});
  const Tensor h = b.op("Relu", {b.op("Add", {b.op("MatMul", {x, w1}), bias})});
  b.output(b.op("Add", {b.op("MatMul", {h, w2}), x2}), "y");
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  CHECK(matmul_blocking({45, 300}, {300, 37}, plan) == "tiled 32x32x16 2 over 3 workgroups");
  CHECK(matmul_blocking({45, 37}, {37, 29}, plan) == "tiled 32x32x16 2 over 3 workgroups");
  auto session = Session::create(gpu_context(), *graph, SessionOptions{});
  REQUIRE_MESSAGE(session.ok(), session.status().to_string());
  CHECK(session->dispatch_count() == 2);
  for (std::uint32_t run = 0; run < 3; ++run) {
    CAPTURE(run);
    const auto feeds = random_feeds({{"x", {45, 300}}, {"w1", {300, 37}}, {"b", {37}}, {"w2", {37, 29}}, {"x2", {45, 29}}},
                                    70 + run);
    auto got = session->run(feeds);
    REQUIRE_MESSAGE(got.ok(), got.status().to_string());
    const std::vector<float> want = run_graph(*graph, false, feeds).at("y").to_floats();
    const CloseReport report = all_close(got->at("y").to_floats(), want, 1e-4, 1e-4);
    CHECK_MESSAGE(report.ok, report.describe());
  }
  REQUIRE(force_gemm_tile(std::nullopt, plan).ok());
  CHECK(validation_errors() == 0);
}

TEST_CASE("split K across workgroups: groups of one level get scratch of their own and run without a barrier") {
  //   x[45,300] ─ MatMul(w1[300,37]) ─ Add(b) ─ y1
  //   x[45,300] ─ MatMul(w2[300,29]) ────────── y2
  // Independent, so both groups are in level 0 (host/fusion_planner.cpp, waves), both split K over 3
  // workgroups per tile (forced). Each gets counters and partial sums of its own
  // (session.cpp, allocate_split_buffers), so nothing orders them: no barrier between the two dispatches,
  // and both must match the reference over three runs.
  const ForcedTileReset reset;
  const DevicePlan& plan = gpu_context().impl()->plan;
  REQUIRE(force_gemm_tile(GemmTile{32, 32, 16, 4, 4, 1, 3}, plan).ok());
  GraphBuilder b;
  const Tensor x = b.input("x", {45, 300}), w1 = b.input("w1", {300, 37}), bias = b.input("b", {37});
  const Tensor w2 = b.input("w2", {300, 29});
  b.output(b.op("Add", {b.op("MatMul", {x, w1}), bias}), "y1");
  b.output(b.op("MatMul", {x, w2}), "y2");
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  CHECK(matmul_blocking({45, 300}, {300, 29}, plan) == "tiled 32x32x16 2 over 3 workgroups");
  auto session = Session::create(gpu_context(), *graph, SessionOptions{.fusion = true, .profile = false});
  REQUIRE_MESSAGE(session.ok(), session.status().to_string());
  CHECK(session->dispatch_count() == 2);
  CHECK(session->barrier_count() == 0);
  for (std::uint32_t run = 0; run < 3; ++run) {
    CAPTURE(run);
    const auto feeds = random_feeds({{"x", {45, 300}}, {"w1", {300, 37}}, {"b", {37}}, {"w2", {300, 29}}}, 80 + run);
    auto got = session->run(feeds);
    REQUIRE_MESSAGE(got.ok(), got.status().to_string());
    const auto want = run_graph(*graph, false, feeds);
    for (const char* name : {"y1", "y2"}) {
      CAPTURE(name);
      const CloseReport report = all_close(got->at(name).to_floats(), want.at(name).to_floats(), 1e-4, 1e-4);
      CHECK_MESSAGE(report.ok, report.describe());
    }
  }
  REQUIRE(force_gemm_tile(std::nullopt, plan).ok());
  CHECK(validation_errors() == 0);
}

TEST_CASE("every kernel op in the table has at least one test case") {
  for (const OpDef& op : all_ops()) {
    if (op.kind != OpKind::kKernel) continue;
    bool covered = false;
    for (auto cases : {matmul_cases(), nn_cases(), tensor_cases()})
      for (const KernelCase& c : cases) covered |= op.name == c.op;
    CHECK_MESSAGE(covered, std::string(op.name) << " has no test case");
  }
}

}  // namespace vkfuse::testing
