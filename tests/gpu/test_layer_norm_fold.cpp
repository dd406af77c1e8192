// A LayerNorm folded into the product that reads it (host/passes/fold_layer_norm.h, LayerNormMatMul on
// roots/gemm_tiled.glsl): fused (folded) against unfused (the LayerNorm's own dispatches) against the
// CPU reference of the graph as built. Rows of whole vec4s (statistics summed with subgroup shuffles) and
// not (read back from shared memory), a channels-last view read in place (loads along M), rows that
// are not a whole tile, and rows whose mean is a thousand times their spread.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "support/compare.h"
#include "support/fusion_check.h"
#include "support/gpu_context.h"
#include "support/random_inputs.h"

namespace vkfuse::testing {
namespace {

constexpr TestDomain kUnit{-1.0f, 1.0f, 0.0f, false};

Tensor constant(GraphBuilder& b, const Shape& shape, std::mt19937& rng, float low = -1.0f, float high = 1.0f) {
  return b.constant(random_tensor(shape, DType::kF32, TestDomain{low, high, 0.0f, false}, rng));
}

// x -> LayerNormalization(gamma[, beta]) -> MatMul(W) [-> Add(bias)] -> Relu -> y, constants drawn from rng.
Graph layer_norm_product(const Shape& x_shape, const Shape& view_perm_of, std::int64_t n, bool beta, bool bias,
                         std::mt19937& rng, bool relu_first = false) {
  GraphBuilder b;
  Tensor x = b.input("x", x_shape);
  if (relu_first) x = b.op("Relu", {x});  // computed in the product's loads: A loads element by element
  if (!view_perm_of.empty()) x = b.op("Transpose", {x}, {{"perm", std::vector<std::int64_t>(view_perm_of.begin(), view_perm_of.end())}});
  const std::int64_t k = b.shape(x).back();
  std::vector<Tensor> ln = {x, constant(b, {k}, rng, 0.5f, 1.5f)};
  if (beta) ln.push_back(constant(b, {k}, rng));
  Tensor y = b.op("MatMul", {b.op("LayerNormalization", ln, {{"epsilon", 1e-5f}}), constant(b, {k, n}, rng)});
  if (bias) y = b.op("Add", {y, constant(b, {n}, rng)});
  b.output(b.op("Relu", {y}), "y");
  return build_graph(b);
}

}  // namespace

TEST_CASE("a LayerNorm folded into the product that reads it: fused against unfused against the CPU") {
  struct Case {
    Shape x, perm;
    std::int64_t n;
    bool beta, bias;
    std::size_t unfused;  // dispatches: the LayerNorm's 9 (8 without beta), the MatMul, the Add, the Relu
    bool relu_first = false;  // a Relu before the LayerNorm (+1 unfused)
  };
  const Case cases[] = {
      {{1, 37, 64}, {}, 48, true, true, 12},      // rows of whole vec4s: shuffled sums
      {{2, 45, 50}, {}, 24, true, false, 11},     // rows of 50: sums read back from shared memory
      {{3, 130}, {}, 40, false, true, 11},        // 3 rows (the tiled root), no LayerNorm bias
      {{1, 40, 5, 7}, {0, 2, 3, 1}, 24, true, true, 12},  // channels-last view: loads along M
      {{1, 37, 64}, {}, 48, true, true, 13, true},  // rows of whole vec4s, but A computed in the loads
  };
  std::uint32_t seed = 700;
  for (const Case& c : cases) {
    CAPTURE(shape_to_string(c.x));
    std::mt19937 rng(seed++);
    const Graph graph = layer_norm_product(c.x, c.perm, c.n, c.beta, c.bias, rng, c.relu_first);
    const FusionOutcome o = check_fused_unfused(graph, random_feeds({{"x", c.x}}, seed++, kUnit), 1e-4, 1e-4);
    CHECK(o.fused_dispatches == 1);
    CHECK(o.unfused_dispatches == c.unfused);
  }
}

TEST_CASE("a folded LayerNorm keeps its accuracy where a row's mean is a thousand times its spread") {
  // Unshifted, x W' - mean * C would cancel here (about 1e-3 of the result in fp32); the root subtracts
  // each row's first element as it stages it. Checked against LayerNorm(x) W + bias in double (the graph
  // reference rounds each op's result to f32, the mean of about 1000 too, and is no better than 1e-4
  // here), the unfused result printed beside it.
  for (const bool vec4_rows : {true, false}) {
    CAPTURE(vec4_rows);
    const std::int64_t rows = 70, k = vec4_rows ? 96 : 90, n = 32;
    std::mt19937 rng(vec4_rows ? 11 : 12);
    const TestDomain unit{-1.0f, 1.0f, 0.0f, false};
    const HostTensor gamma = random_tensor({k}, DType::kF32, TestDomain{0.5f, 1.5f, 0.0f, false}, rng);
    const HostTensor beta = random_tensor({k}, DType::kF32, unit, rng), w = random_tensor({k, n}, DType::kF32, unit, rng);
    const HostTensor bias = random_tensor({n}, DType::kF32, unit, rng);
    GraphBuilder b;
    const Tensor x = b.input("x", {rows, k});
    const Tensor ln = b.op("LayerNormalization", {x, b.constant(gamma), b.constant(beta)}, {{"epsilon", 1e-5f}});
    b.output(b.op("Add", {b.op("MatMul", {ln, b.constant(w)}), b.constant(bias)}), "y");
    const Graph graph = build_graph(b);
    std::vector<float> xs = random_tensor({rows, k}, DType::kF32, unit, rng).to_floats();
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < k; ++c) xs[static_cast<std::size_t>(r * k + c)] += 1000.0f * static_cast<float>(r % 2 ? -1 - r % 3 : 1 + r % 3);
    const std::map<std::string, HostTensor> feeds = {{"x", HostTensor::from_floats({rows, k}, xs)}};
    std::vector<float> want(static_cast<std::size_t>(rows * n));
    const std::vector<float> g = gamma.to_floats(), be = beta.to_floats(), ws = w.to_floats(), bs = bias.to_floats();
    for (std::int64_t r = 0; r < rows; ++r) {
      double mean = 0.0, var = 0.0;
      for (std::int64_t c = 0; c < k; ++c) mean += xs[static_cast<std::size_t>(r * k + c)];
      mean /= static_cast<double>(k);
      for (std::int64_t c = 0; c < k; ++c) var += std::pow(xs[static_cast<std::size_t>(r * k + c)] - mean, 2.0);
      const double scale = 1.0 / std::sqrt(var / static_cast<double>(k) + 1e-5);
      for (std::int64_t j = 0; j < n; ++j) {
        double y = bs[static_cast<std::size_t>(j)];
        for (std::int64_t c = 0; c < k; ++c) {
          const std::size_t i = static_cast<std::size_t>(c);
          y += ((xs[static_cast<std::size_t>(r * k + c)] - mean) * scale * g[i] + be[i]) * ws[static_cast<std::size_t>(c * n + j)];
        }
        want[static_cast<std::size_t>(r * n + j)] = static_cast<float>(y);
      }
    }
    std::size_t fused_dispatches = 0;
    const std::vector<float> f = run_graph(graph, true, feeds, &fused_dispatches).at("y").to_floats();
    const std::vector<float> u = run_graph(graph, false, feeds).at("y").to_floats();
    MESSAGE("nmse against double: fused " << nmse(f, want) << ", unfused " << nmse(u, want));
    const CloseReport fused_vs_exact = all_close(f, want, 2e-5, 2e-5);
    CHECK_MESSAGE(fused_vs_exact.ok, "fused vs exact: " << fused_vs_exact.describe());
    CHECK(fused_dispatches == 1);
  }
  CHECK(validation_errors() == 0);
}

}  // namespace vkfuse::testing
