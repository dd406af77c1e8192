// Gemm, Conv, ConvTranspose and pooling against their CPU references, and the errors their shape
// inference gives. Sizes are odd and small (lavapipe runs them on the CPU).
#include <doctest/doctest.h>

#include <iterator>
#include <string>

#include "backend/device_plan.h"
#include "host/op_registry.h"
#include "host/ops/nn_support.h"
#include "host/reference_eval.h"
#include "support/gpu_context.h"
#include "support/kernel_case.h"

namespace vkfuse::testing {

namespace {

using Ints = std::vector<std::int64_t>;

const std::vector<KernelCase> kNnCases = {
    // Gemm(A, B[, C]): transA / transB, alpha / beta, C of shape [M, N], [N], [M, 1], [1], none.
    {"Gemm", {{7, 13}, {13, 5}}},
    {"Gemm", {{7, 13}, {13, 5}, {7, 5}}, {{"alpha", 0.5f}, {"beta", -2.0f}}},
    {"Gemm", {{13, 7}, {13, 5}, {5}}, {{"transA", 1.0f}, {"alpha", 1.5f}}},
    {"Gemm", {{7, 13}, {5, 13}, {7, 1}}, {{"transB", 1.0f}, {"beta", 0.25f}}},
    {"Gemm", {{13, 7}, {5, 13}, {1}}, {{"transA", 1.0f}, {"transB", 1.0f}, {"alpha", -1.0f}, {"beta", 3.0f}}},
    {"Gemm", {{1, 1}, {1, 1}, {1, 1}}},
    {"Gemm", {{2, 130}, {130, 33}, {1, 33}}},
    // The GEMM roots (MatMul's tests cover every blocking): each transA / transB on 32x32 tiles with
    // edges in M, N and K, and on a few rows (the skinny root; with transB, B's K is contiguous, as in
    // the fully connected layers ONNX exports).
    {"Gemm", {{70, 33}, {33, 45}, {45}}, {{"alpha", 0.5f}}},
    {"Gemm", {{33, 70}, {33, 45}, {70, 45}}, {{"transA", 1.0f}, {"beta", -1.0f}}},
    {"Gemm", {{70, 33}, {45, 33}, {70, 1}}, {{"transB", 1.0f}}},
    {"Gemm", {{33, 70}, {45, 33}}, {{"transA", 1.0f}, {"transB", 1.0f}, {"alpha", 2.0f}}},
    {"Gemm", {{1, 300}, {10, 300}, {10}}, {{"transB", 1.0f}}},  // a flattened input into a classifier
    // Rows of whole 16-byte runs (K 304: 8 f16 or 4 f32): the skinny root reads A and B a run at a time,
    // four runs in flight and a tail of single runs (K 304 is 38 runs of 8 for 32 lanes).
    {"Gemm", {{2, 304}, {24, 304}, {24}}, {{"transB", 1.0f}}},
    {"Gemm", {{300, 3}, {300, 40}, {3, 40}}, {{"transA", 1.0f}}},
    {"Gemm", {{3, 300}, {40, 300}, {1, 40}}, {{"transB", 1.0f}, {"alpha", 0.5f}, {"beta", 2.0f}}},
    {"Gemm", {{300, 2}, {40, 300}}, {{"transA", 1.0f}, {"transB", 1.0f}}},
    // Rows of whole vec4s with ragged tile edges: f32 operands load as vec4s, along M (transA), along
    // K (A, and B with transB: four stores down the staged column) and along N.
    {"Gemm", {{36, 68}, {36, 44}, {44}}, {{"transA", 1.0f}}},
    {"Gemm", {{68, 36}, {44, 36}, {68, 44}}, {{"transB", 1.0f}, {"beta", 0.5f}}},
    {"Gemm", {{36, 68}, {44, 36}}, {{"transA", 1.0f}, {"transB", 1.0f}}},

    // Conv(X, W[, B]): 1x1, 3x3, 5x5, 2x3 kernels; strides, dilations, asymmetric pads; groups.
    {"Conv", {{1, 7, 5, 6}, {13, 7, 1, 1}, {13}}},
    {"Conv", {{2, 7, 9, 8}, {5, 7, 3, 3}}, {{"pads", Ints{1, 1, 1, 1}}}},
    {"Conv", {{1, 13, 11, 10}, {7, 13, 5, 5}, {7}}, {{"strides", Ints{2, 2}}, {"pads", Ints{2, 1, 0, 3}}}},
    {"Conv", {{1, 7, 12, 11}, {4, 7, 2, 3}}, {{"dilations", Ints{2, 2}}, {"pads", Ints{1, 2, 1, 0}}}},
    {"Conv", {{1, 7, 10, 9}, {3, 7, 3, 2}, {3}},
     {{"strides", Ints{1, 2}}, {"dilations", Ints{2, 1}}, {"pads", Ints{0, 1, 2, 0}}}},
    {"Conv", {{1, 14, 7, 9}, {6, 7, 3, 3}, {6}}, {{"group", 2.0f}, {"pads", Ints{1, 0, 1, 2}}}},
    {"Conv", {{2, 13, 7, 9}, {13, 1, 3, 3}, {13}}, {{"group", 13.0f}, {"strides", Ints{2, 1}}, {"pads", Ints{1, 1, 1, 1}}}},
    {"Conv", {{1, 7, 6, 5}, {14, 1, 3, 3}}, {{"group", 7.0f}, {"dilations", Ints{2, 2}}, {"pads", Ints{2, 2, 2, 2}}}},
    // Implicit GEMM (rows Cout/group, columns N*OH*OW, K Cin/group*KH*KW): none a multiple of a tile,
    // K below one BK step, several K steps, column tiles across images; 1x1 stride 1 (the pointwise
    // path), 1x1 stride 2, resnet's 7x7 stride 2 pad 3 stem on 3 channels, groups of 6 channels.
    {"Conv", {{1, 13, 9, 7}, {37, 13, 1, 1}, {37}}},
    {"Conv", {{2, 3, 5, 7}, {5, 3, 1, 1}}},
    {"Conv", {{1, 64, 32, 32}, {48, 64, 1, 1}, {48}}},
    {"Conv", {{1, 24, 11, 13}, {33, 24, 1, 1}}, {{"strides", Ints{2, 2}}}},
    {"Conv", {{1, 3, 32, 30}, {16, 3, 7, 7}, {16}}, {{"strides", Ints{2, 2}}, {"pads", Ints{3, 3, 3, 3}}}},
    {"Conv", {{2, 40, 16, 16}, {64, 40, 3, 3}, {64}}, {{"pads", Ints{1, 1, 1, 1}}}},
    {"Conv", {{2, 24, 9, 10}, {36, 6, 3, 3}, {36}}, {{"group", 4.0f}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}},
    // A resnet downsampling 3x3 (stride 2, K = 576: 18 steps whose (ci, kh, kw) walk wraps the window),
    // and a pointwise conv whose column tiles straddle the two images.
    {"Conv", {{1, 64, 15, 16}, {64, 64, 3, 3}, {64}}, {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}},
    {"Conv", {{2, 20, 7, 9}, {45, 20, 1, 1}, {45}}},
    {"Conv", {{1, 64, 8, 8}, {64, 64, 3, 3}, {64}}, {{"pads", Ints{1, 1, 1, 1}}}},  // split 4, 64 deep (K 576)
    // Dilated with an even output width, two images: the cooperative-matrix root (NVIDIA) gathers its
    // columns in pairs of one output row; roots/conv2d.glsl's column tiles straddle the images.
    {"Conv", {{2, 5, 10, 12}, {6, 5, 3, 3}, {6}}, {{"dilations", Ints{2, 2}}, {"pads", Ints{2, 2, 2, 2}}}},
    // Depthwise (one input channel per group): 3x3 and 5x5 stride 2, convnext's 7x7, rows narrower than
    // the outputs one invocation computes, and one input channel without groups.
    {"Conv", {{1, 32, 17, 16}, {32, 1, 3, 3}, {32}}, {{"group", 32.0f}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}},
    {"Conv", {{2, 24, 15, 14}, {24, 1, 5, 5}}, {{"group", 24.0f}, {"strides", Ints{2, 2}}, {"pads", Ints{2, 2, 2, 2}}}},
    {"Conv", {{1, 16, 14, 13}, {16, 1, 7, 7}, {16}}, {{"group", 16.0f}, {"pads", Ints{3, 3, 3, 3}}}},
    {"Conv", {{1, 8, 5, 3}, {8, 1, 3, 3}, {8}}, {{"group", 8.0f}, {"pads", Ints{1, 1, 1, 1}}}},
    {"Conv", {{1, 1, 9, 8}, {5, 1, 3, 3}}},

    // ConvTranspose(X, W[C, M/group, kh, kw][, B]): strides, dilations, pads, output_padding, groups.
    {"ConvTranspose", {{1, 7, 5, 6}, {7, 13, 1, 1}, {13}}},
    {"ConvTranspose", {{2, 7, 5, 4}, {7, 5, 3, 3}},
     {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"output_padding", Ints{1, 1}}}},
    {"ConvTranspose", {{1, 13, 4, 5}, {13, 3, 2, 3}, {3}},
     {{"strides", Ints{2, 3}}, {"dilations", Ints{2, 1}}, {"pads", Ints{0, 1, 2, 0}}}},
    {"ConvTranspose", {{1, 14, 5, 5}, {14, 3, 3, 3}}, {{"group", 2.0f}, {"strides", Ints{2, 2}}, {"output_padding", Ints{1, 0}}}},
    {"ConvTranspose", {{1, 13, 6, 5}, {13, 1, 5, 5}, {13}},
     {{"group", 13.0f}, {"dilations", Ints{2, 2}}, {"pads", Ints{2, 2, 1, 3}}}},

    // MaxPool(X): kernel_shape, strides, pads, dilations, ceil_mode.
    {"MaxPool", {{2, 7, 9, 8}}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}}},
    {"MaxPool", {{1, 13, 8, 10}}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", 1.0f}}},
    {"MaxPool", {{1, 7, 9, 11}},
     {{"kernel_shape", Ints{2, 3}}, {"strides", Ints{1, 2}}, {"dilations", Ints{2, 2}}, {"pads", Ints{1, 0, 2, 1}}}},
    // ceil_mode: height 5 + pads 1 + 1, window 2, stride 2 gives ceil(5 / 2) + 1 = 4 windows, but the 4th
    // would start in the end pad, so 3.
    {"MaxPool", {{1, 7, 5, 7}},
     {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 0, 1, 0}}, {"ceil_mode", 1.0f}}},
    {"MaxPool", {{1, 13, 7, 6}}, {{"kernel_shape", Ints{1, 1}}, {"strides", Ints{2, 2}}}},
    {"MaxPool", {{1, 7, 9, 9}}, {{"kernel_shape", Ints{5, 5}}, {"pads", Ints{2, 2, 2, 2}}}},

    // AveragePool(X): kernel_shape, strides, pads, ceil_mode, count_include_pad.
    {"AveragePool", {{2, 7, 9, 8}}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}},
    {"AveragePool", {{2, 7, 9, 8}},
     {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"count_include_pad", 1.0f}}},
    // The last windows reach past the end pad: with count_include_pad the divisor stops at the pad.
    {"AveragePool", {{1, 13, 9, 8}},
     {{"kernel_shape", Ints{3, 2}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 0, 0}}, {"ceil_mode", 1.0f},
      {"count_include_pad", 1.0f}}},
    {"AveragePool", {{1, 7, 5, 8}},
     {{"kernel_shape", Ints{2, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 0, 1, 0}}, {"ceil_mode", 1.0f}}},
    {"AveragePool", {{1, 13, 7, 7}}, {{"kernel_shape", Ints{5, 5}}, {"pads", Ints{2, 2, 2, 2}}}},
    {"AveragePool", {{1, 7, 6, 9}}, {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}},

    // Global pools: [N, C, spatial...] -> [N, C, 1, ...].
};

// The error GraphBuilder reports for one node, or "" when it builds.
std::string build_error(const char* op, const std::vector<Shape>& shapes, const std::vector<Attr>& attrs = {}) {
  GraphBuilder b;
  std::vector<Tensor> inputs;
  for (std::size_t k = 0; k < shapes.size(); ++k) inputs.push_back(b.input("in" + std::to_string(k), shapes[k]));
  b.output(b.op(op, inputs, attrs), "out");
  auto graph = b.build();
  return graph.ok() ? "" : graph.status().to_string();
}

// The output shape GraphBuilder infers for one node.
Shape built_shape(const char* op, const std::vector<Shape>& shapes, const std::vector<Attr>& attrs = {}) {
  GraphBuilder b;
  std::vector<Tensor> inputs;
  for (std::size_t k = 0; k < shapes.size(); ++k) inputs.push_back(b.input("in" + std::to_string(k), shapes[k]));
  const Tensor out = b.op(op, inputs, attrs);
  REQUIRE_MESSAGE(b.status().ok(), b.status().to_string());
  return b.shape(out);
}

// Runs one node over given f32 inputs on the GPU and through the CPU reference; both must give `want`.
void check_values(const char* op, const std::vector<HostTensor>& inputs, const std::vector<Attr>& attrs,
                  const Shape& shape, const std::vector<float>& want) {
  GraphBuilder b;
  std::vector<Tensor> tensors;
  std::map<std::string, HostTensor> feeds;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const std::string name = "in" + std::to_string(k);
    tensors.push_back(b.input(name, inputs[k].shape));
    feeds.emplace(name, inputs[k]);
  }
  b.output(b.op(op, tensors, attrs), "out");
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  const auto got = run_graph(*graph, true, feeds);
  auto reference = evaluate_reference(*graph, feeds);
  REQUIRE_MESSAGE(reference.ok(), reference.status().to_string());
  REQUIRE(got.at("out").shape == shape);
  const std::vector<float> gpu = got.at("out").to_floats(), cpu = reference->at("out").to_floats();
  for (std::size_t i = 0; i < want.size(); ++i) {
    CAPTURE(i);
    CHECK(gpu[i] == doctest::Approx(want[i]).epsilon(1e-6));  // GPU division may be off by an ulp or two
    CHECK(cpu[i] == want[i]);
  }
}

// The implicit-GEMM tile, micro-tile, split-K slices, BK, workgroup grid and invocations per workgroup
// Conv picks for X and W (pads 1 for a 3x3) on `plan`, e.g. "32x32 2x2 s1 bk32 98x2x1 256", with the
// patch root (tests/gpu/test_conv_patch.cpp) turned off.
std::string conv_tile(const Shape& x, const Shape& w, const DevicePlan& plan) {
  const ScopedPatchTile off(std::nullopt);
  const OpDef* op = find_op("Conv");
  REQUIRE(op != nullptr);
  const std::vector<TensorInfo> in = {{x, DType::kF32}, {w, DType::kF32}};
  AttrLists lists;
  if (w[2] == 3) lists.emplace("pads", Ints{1, 1, 1, 1});
  const float group[] = {1.0f};
  auto launch = op->launch(in, TensorInfo{}, OpAttrs{group, lists}, plan);
  REQUIRE_MESSAGE(launch.ok(), launch.status().to_string());
  REQUIRE(launch->root == "roots/conv2d.glsl");
  auto define = [&](std::string_view name) { return launch_define(*launch, name); };
  const std::string parts = define("VKF_SPLIT_GROUPS");
  CHECK((parts == "1") == (launch->split_counters == 0));
  return define("VKF_BM") + "x" + define("VKF_BN") + " " + define("VKF_TM") + "x" + define("VKF_TN") + " s" +
         define("VKF_SPLIT_K") + (parts == "1" ? "" : " p" + parts) + " bk" + define("VKF_BK") + " " +
         std::to_string(launch->workgroups[0]) + "x" +
         std::to_string(launch->workgroups[1]) + "x" + std::to_string(launch->workgroups[2]) + " " +
         std::to_string(launch->workgroup_size);
}

DevicePlan conv_plan(std::uint32_t shared_memory_bytes, std::uint32_t max_workgroup_invocations) {
  DevicePlan plan;
  plan.shared_memory_bytes = shared_memory_bytes;
  plan.max_workgroup_invocations = max_workgroup_invocations;
  plan.subgroup_size = 32;
  plan.max_groups_x = 2147483647u;
  return plan;
}

}  // namespace

std::span<const KernelCase> nn_cases() { return kNnCases; }

TEST_CASE("Conv picks its implicit-GEMM tile from the layer and the device") {
  const DevicePlan h100 = conv_plan(49152, 1024);
  // Batch-1 layers fill the GPU first (>= 132 x 256 invocations with real outputs), then reuse: 2x2
  // micro-tiles on resnet50's 56x56 layers (64 x 3136 outputs: 50K invocations; 4x4 would be 12.5K).
  CHECK(conv_tile({1, 64, 56, 56}, {64, 64, 3, 3}, h100) == "32x32 2x2 s1 bk32 98x2x1 256");     // resnet50 layer1 3x3
  CHECK(conv_tile({1, 256, 56, 56}, {64, 256, 1, 1}, h100) == "32x32 2x2 s1 bk32 98x2x1 256");   // resnet50 1x1 reduce
  CHECK(conv_tile({1, 128, 28, 28}, {128, 128, 3, 3}, h100) == "32x32 2x2 s2 p2 bk32 50x4x1 512");   // resnet50 layer2 3x3
  CHECK(conv_tile({1, 256, 14, 14}, {256, 256, 3, 3}, h100) == "32x32 2x2 s4 p4 bk32 28x8x1 1024");   // resnet50 layer3 3x3
  // Too small to fill it even with 2x2: the most invocations, here 2x2 with K split over 4 slices. Split
  // K with fewer workgroups than SMs (132) steps 64 deep where K gives each slice two such steps. Few
  // blocks: K also goes over up to 16 workgroups per block (pN), one per SM with two steps each, or two
  // per SM with eight steps each (the layer2 and layer3 3x3 layers above: p2 and p4, 32 deep).
  CHECK(conv_tile({1, 512, 7, 7}, {512, 512, 3, 3}, h100) == "32x32 2x2 s4 p8 bk32 16x16x1 1024");     // resnet50 layer4 3x3
  CHECK(conv_tile({1, 2048, 7, 7}, {512, 2048, 1, 1}, h100) == "32x32 2x2 s4 p8 bk32 16x16x1 1024");   // resnet50 layer4 1x1 reduce
  CHECK(conv_tile({1, 64, 8, 8}, {64, 64, 3, 3}, conv_plan(32768, 1024)) == "32x32 2x2 s4 p6 bk32 12x2x1 1024");  // lavapipe: 8 parts of 96 are 6
  // mobilenet_v2's last 7x7 1x1 Convs (10 blocks, K 960) go over 8 workgroups per block, densenet121's
  // last 3x3 Convs (2 blocks, K 1152) over 12 (16 parts of whole 32-deep steps make 12).
  CHECK(conv_tile({1, 960, 7, 7}, {160, 960, 1, 1}, h100) == "32x32 2x2 s4 p8 bk32 16x5x1 1024");  // mobilenet_v2
  CHECK(conv_tile({1, 128, 7, 7}, {32, 128, 3, 3}, h100) == "32x32 2x2 s4 p12 bk32 24x1x1 1024");  // densenet121
  CHECK(conv_tile({1, 32, 8, 8}, {64, 32, 3, 3}, conv_plan(32768, 1024)) == "32x32 2x2 s4 p3 bk32 6x2x1 1024");  // K 288: 3 parts of 3 steps
  // Large enough for more reuse: vgg11 conv2 fills it with 8x4, conv3 with 4x4.
  CHECK(conv_tile({1, 64, 112, 112}, {128, 64, 3, 3}, h100) == "128x64 8x4 s1 bk16 196x1x1 256");  // vgg11 conv2
  CHECK(conv_tile({1, 256, 56, 56}, {256, 256, 3, 3}, h100) == "64x64 4x4 s1 bk32 49x4x1 256");  // vgg11 conv4
  // 64 rows: 128x128 8x8 would reuse as much but pad half its rows, so 64x128 4x8.
  CHECK(conv_tile({1, 3, 224, 224}, {64, 3, 3, 3}, h100) == "64x128 4x8 s1 bk16 392x1x1 256");    // vgg11 conv1
  // Many waves: the largest micro-tile.
  CHECK(conv_tile({8, 64, 112, 112}, {128, 64, 3, 3}, h100) == "128x128 8x8 s1 bk16 784x1x1 256");
  // 512 invocations: split 2 at most; 128 (Vulkan's minimum) and 64: only the tiles that fit, with
  // ties in invocations going to less padding; 16 KB: BK halves until A and B take at most half of it.
  CHECK(conv_tile({1, 512, 7, 7}, {512, 512, 3, 3}, conv_plan(49152, 512)) == "32x32 2x2 s2 p8 bk32 16x16x1 512");
  CHECK(conv_tile({1, 64, 56, 56}, {64, 64, 3, 3}, conv_plan(16384, 128)) == "64x32 4x4 s1 p2 bk16 196x1x1 128");
  CHECK(conv_tile({1, 64, 56, 56}, {32, 64, 3, 3}, conv_plan(16384, 128)) == "32x64 4x4 s1 p4 bk16 196x1x1 128");
  CHECK(conv_tile({1, 64, 56, 56}, {64, 64, 3, 3}, conv_plan(16384, 64)) == "32x32 4x4 s1 bk16 98x2x1 64");
  CHECK(conv_tile({8, 64, 112, 112}, {128, 64, 3, 3}, conv_plan(16384, 1024)) == "128x128 8x8 s1 bk8 784x1x1 256");
  // 16 KB: split 4's partial sums (12 KB) and its 32-deep slices do not fit, split 2 at BK 16 does.
  CHECK(conv_tile({1, 512, 7, 7}, {512, 512, 3, 3}, conv_plan(16384, 1024)) == "32x32 2x2 s2 p8 bk16 16x16x1 512");
  // No room for the split-K scratch (4 bindings per group): no parts.
  DevicePlan four = h100;
  four.max_bindings = 4;
  CHECK(conv_tile({1, 512, 7, 7}, {512, 512, 3, 3}, four) == "32x32 2x2 s4 bk64 2x16x1 1024");
  // A tile forced for the tests below.
  {
    const ScopedConvTile forced(0);
    CHECK(conv_tile({1, 64, 56, 56}, {64, 64, 3, 3}, h100) == "128x128 8x8 s1 bk16 25x1x1 256");
  }
  CHECK(conv_tile({1, 64, 56, 56}, {64, 64, 3, 3}, h100) == "32x32 2x2 s1 bk32 98x2x1 256");
}

// Lavapipe-sized layers mostly pick 2x2 micro-tiles split over K; every tile of the table (4x4 and larger
// with vec4 fragments, 4x2 / 2x4 / 2x2 with vec2 ones, split 2 and 4) runs the Conv cases here, once
// whole and once with K split over 2, 3, 4, 8 or 16 workgroups per block (fewer where K has fewer steps).
TEST_CASE("Conv matches its CPU reference with every implicit-GEMM tile, K whole and split over workgroups") {
  std::uint32_t seed = 900;
  for (std::size_t run = 0; run < 2 * conv_tile_count(); ++run) {
    const std::size_t tile = run / 2;
    constexpr std::int64_t kParts[] = {2, 3, 4, 8, 16};
    const std::int64_t parts = run % 2 ? kParts[tile % std::size(kParts)] : 1;
    const ScopedConvTile forced(tile, parts);
    CAPTURE(tile);
    CAPTURE(parts);
    for (const KernelCase& c : nn_cases()) {
      if (std::string_view(c.op) != "Conv" || c.inputs[1][1] == 1) continue;  // depthwise: its own root
      CAPTURE(shape_to_string(c.inputs[0]));
      CAPTURE(shape_to_string(c.inputs[1]));
      check_kernel_case(c, (tile + run) % 2 ? DType::kF16 : DType::kF32, seed++);
    }
  }
  CHECK(validation_errors() == 0);
}

TEST_CASE("Gemm, Conv, ConvTranspose and pooling match their CPU references in f32 and f16") {
  std::uint32_t seed = 100;
  for (const KernelCase& c : nn_cases()) {
    CAPTURE(std::string(c.op));
    CAPTURE(shape_to_string(c.inputs[0]));
    check_kernel_case(c, DType::kF32, seed++);
    check_kernel_case(c, DType::kF16, seed++);
  }
  CHECK(validation_errors() == 0);
}

TEST_CASE("ConvTranspose and pooling give hand-worked values") {
  const HostTensor x3 = HostTensor::from_floats({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  // ceil_mode windows reach past the input (and its zero end pads): count_include_pad counts the taps
  // inside the padded input only, as onnxruntime does (the ONNX Python reference would divide by 4).
  check_values("AveragePool", {x3},
               {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"ceil_mode", 1.0f}, {"count_include_pad", 1.0f}},
               {1, 1, 2, 2}, {3.0f, 4.5f, 7.5f, 9.0f});
  check_values("AveragePool", {x3},
               {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"count_include_pad", 1.0f}},
               {1, 1, 2, 2}, {12.0f / 9, 16.0f / 9, 24.0f / 9, 28.0f / 9});
  check_values("AveragePool", {x3}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}},
               {1, 1, 2, 2}, {3.0f, 4.0f, 6.0f, 7.0f});
  check_values("MaxPool", {x3}, {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"ceil_mode", 1.0f}}, {1, 1, 2, 2},
               {5, 6, 8, 9});
  // Each input value fills its 2x2 block; output_padding adds a last row and column of bias only.
  check_values("ConvTranspose",
               {HostTensor::from_floats({1, 1, 2, 2}, {1, 2, 3, 4}), HostTensor::from_floats({1, 1, 2, 2}, {1, 1, 1, 1}),
                HostTensor::from_floats({1}, {0.5f})},
               {{"strides", Ints{2, 2}}, {"output_padding", Ints{1, 1}}}, {1, 1, 5, 5},
               {1.5f, 1.5f, 2.5f, 2.5f, 0.5f, 1.5f, 1.5f, 2.5f, 2.5f, 0.5f, 3.5f, 3.5f, 4.5f, 4.5f, 0.5f,
                3.5f, 3.5f, 4.5f, 4.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f});
  CHECK(validation_errors() == 0);
}

TEST_CASE("Conv, ConvTranspose and pooling output sizes follow ONNX") {
  CHECK(built_shape("Conv", {{1, 7, 11, 10}, {5, 7, 5, 5}}, {{"strides", Ints{2, 2}}, {"pads", Ints{2, 1, 0, 3}}}) ==
        Shape{1, 5, 5, 5});
  CHECK(built_shape("ConvTranspose", {{1, 7, 5, 4}, {7, 3, 3, 3}},
                    {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"output_padding", Ints{1, 1}}}) ==
        Shape{1, 3, 10, 8});
  CHECK(built_shape("ConvTranspose", {{1, 4, 5, 4}, {4, 3, 3, 3}}, {{"group", 2.0f}, {"dilations", Ints{2, 1}}}) ==
        Shape{1, 6, 9, 6});
  // floor vs ceil, and the ceil_mode window that would start in the end pad.
  CHECK(built_shape("MaxPool", {{1, 1, 8, 8}}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}}) == Shape{1, 1, 3, 3});
  CHECK(built_shape("MaxPool", {{1, 1, 8, 8}}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", 1.0f}}) ==
        Shape{1, 1, 4, 4});
  CHECK(built_shape("AveragePool", {{1, 1, 5, 5}},
                    {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"ceil_mode", 1.0f}}) ==
        Shape{1, 1, 3, 3});
  CHECK(built_shape("MaxPool", {{1, 1, 9, 9}}, {{"kernel_shape", Ints{3, 3}}, {"dilations", Ints{2, 2}}}) == Shape{1, 1, 5, 5});
  CHECK(built_shape("GlobalAveragePool", {{2, 3, 5, 7}}) == Shape{2, 3, 1, 1});
  CHECK(built_shape("GlobalMaxPool", {{2, 3, 5}}) == Shape{2, 3, 1});
}

TEST_CASE("nn ops' shape errors name the input, the shape and the attribute") {
  auto has = [](const std::string& error, const char* text) {
    CAPTURE(error);
    CHECK(error.find(text) != std::string::npos);
  };
  has(build_error("Gemm", {{7, 13}, {12, 5}}), "A [7,13] with transA 0 has K = 13 but B [12,5] with transB 0 has K = 12");
  has(build_error("Gemm", {{7, 13}, {13, 5}, {7, 4}}), "C [7,4] does not broadcast to the output [7,5]");
  has(build_error("Gemm", {{7, 13, 1}, {13, 5}}), "A must be 2-D, got [7,13,1]");
  has(build_error("Gemm", {{7, 13}, {13, 5}}, {{"transA", 2.0f}}), "transA = 2, expected 0 or 1");
  has(build_error("Conv", {{1, 4, 8, 8}, {5, 3, 3, 3}}),
      "W [5,3,3,3] has 3 input channels per group, X [1,4,8,8] has 4 channels with group 1");
  has(build_error("Conv", {{1, 6, 8, 8}, {5, 3, 3, 3}}, {{"group", 2.0f}}),
      "W [5,3,3,3] has 5 output channels, not divisible by group 2");
  has(build_error("Conv", {{1, 7, 8, 8}, {4, 3, 3, 3}}, {{"group", 2.0f}}), "7 channels, not divisible by group 2");
  has(build_error("Conv", {{1, 4, 8, 8}, {5, 4, 3, 3}, {4}}), "B has shape [4], expected [5]");
  has(build_error("Conv", {{1, 4, 8}, {5, 4, 3}}), "X must be 4-D [N, C, H, W] (2-D Conv only), got [1,4,8]");
  has(build_error("Conv", {{1, 4, 8, 8}, {5, 4, 3, 3}}, {{"pads", Ints{1, 1}}}), "pads [1,1] has 2 values, expected 4");
  has(build_error("Conv", {{1, 4, 8, 8}, {5, 4, 3, 3}}, {{"strides", Ints{1, 0}}}), "strides[1] = 0, expected >= 1");
  has(build_error("Conv", {{1, 4, 5, 8}, {5, 4, 3, 3}}, {{"dilations", Ints{3, 1}}}),
      "the window spans 7 along the height (kernel 3, dilation 3) but the padded input has 5");
  has(build_error("Conv", {{1, 4, 5, 8}, {5, 4, 3, 3}}, {{"group", 1.5f}}), "group = 1.5, expected a whole number >= 1");
  has(build_error("ConvTranspose", {{1, 4, 5, 5}, {3, 2, 3, 3}}), "W [3,2,3,3] has 3 input channels, X [1,4,5,5] has 4");
  has(build_error("ConvTranspose", {{1, 4, 1, 5}, {4, 2, 1, 3}}, {{"pads", Ints{1, 0, 0, 0}}}),
      "the output height would be 0");
  has(build_error("MaxPool", {{1, 4, 5, 5}}), "kernel_shape is required");
  has(build_error("MaxPool", {{1, 4, 5, 5}}, {{"kernel_shape", Ints{2, 2}}, {"pads", Ints{0, 0, -1, 0}}}),
      "pads[2] = -1, expected >= 0");
  has(build_error("AveragePool", {{1, 4, 5, 5}}, {{"kernel_shape", Ints{2, 2}}, {"dilations", Ints{2, 2}}}),
      "unknown list attribute 'dilations'");
  has(build_error("AveragePool", {{1, 4, 5, 5}}, {{"kernel_shape", Ints{2, 2}}, {"count_include_pad", 3.0f}}),
      "count_include_pad = 3, expected 0 or 1");
  has(build_error("GlobalAveragePool", {{4, 5}}), "X must be [N, C, spatial...] (rank >= 3), got [4,5]");
}

}  // namespace vkfuse::testing
