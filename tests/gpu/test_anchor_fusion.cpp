// Post-fusion on the GPU: elementwise chains after kernel anchors (Conv, Gemm, MatMul, pooling) run in
// the anchor's stores. Fused vs unfused vs the CPU reference, with odd channel counts, strides,
// dilations, groups and padding, broadcast operands, residual reads, and a second output.
#include <doctest/doctest.h>

#include <functional>
#include <random>

#include "host/context_impl.h"
#include "host/ops/nn_support.h"
#include "support/fusion_check.h"
#include "support/gpu_context.h"
#include "support/random_inputs.h"
#include "support/residual_stream.h"

namespace vkfuse::testing {
namespace {

using Ints = std::vector<std::int64_t>;
constexpr TestDomain kUnit{-1.0f, 1.0f, 0.0f, false};

}  // namespace

TEST_CASE("Conv -> scale -> shift -> Relu -> residual Add is one dispatch") {
  struct Case {
    Shape x, w;
    std::vector<Attr> attrs;
  };
  const Case cases[] = {
      {{1, 7, 9, 8}, {13, 7, 3, 3}, {{"pads", Ints{1, 1, 1, 1}}}},
      {{2, 7, 11, 10}, {13, 7, 3, 3}, {{"strides", Ints{2, 2}}, {"pads", Ints{1, 0, 2, 1}}}},
      {{1, 7, 12, 11}, {13, 7, 2, 3}, {{"dilations", Ints{2, 2}}, {"pads", Ints{1, 2, 1, 0}}}},
      {{1, 13, 7, 9}, {13, 1, 3, 3}, {{"group", 13.0f}, {"pads", Ints{1, 1, 1, 1}}}},
      {{1, 14, 7, 9}, {14, 7, 1, 1}, {{"group", 2.0f}}},
  };
  std::uint32_t seed = 100;
  for (const Case& c : cases) {
    CAPTURE(shape_to_string(c.x));
    CAPTURE(shape_to_string(c.w));
    GraphBuilder b;
    const Tensor x = b.input("x", c.x), w = b.input("w", c.w), bias = b.input("bias", {c.w[0]});
    const Tensor scale = b.input("scale", {1, c.w[0], 1, 1}), shift = b.input("shift", {c.w[0], 1, 1});
    const Tensor conv = b.op("Conv", {x, w, bias}, c.attrs);
    const Shape out = b.shape(conv);
    const Tensor skip = b.input("skip", out);
    const Tensor act = b.op("Relu", {b.op("Add", {b.op("Mul", {conv, scale}), shift})});
    b.output(b.op("Add", {act, skip}), "y");
    const Graph graph = build_graph(b);
    const FusionOutcome o = check_fused_unfused(
        graph,
        random_feeds({{"x", c.x}, {"w", c.w}, {"bias", {c.w[0]}}, {"scale", {1, c.w[0], 1, 1}}, {"shift", {c.w[0], 1, 1}},
                      {"skip", out}},
                     seed++, kUnit),
        1e-5, 1e-4);
    CHECK(o.fused_dispatches == 1);
    CHECK(o.unfused_dispatches == 5);
  }
}

TEST_CASE("Gemm -> residual Add -> Tanh, with the raw Gemm result as a second output") {
  GraphBuilder b;
  const Tensor a = b.input("a", {5, 33}), w = b.input("w", {13, 33}), c = b.input("c", {13});
  const Tensor r = b.input("r", {5, 13});
  const Tensor gemm = b.op("Gemm", {a, w, c}, {{"transB", 1.0f}, {"alpha", 0.5f}});
  b.output(gemm, "raw");
  b.output(b.op("Tanh", {b.op("Add", {gemm, r})}), "y");
  const Graph graph = build_graph(b);
  const FusionOutcome o = check_fused_unfused(
      graph, random_feeds({{"a", {5, 33}}, {"w", {13, 33}}, {"c", {13}}, {"r", {5, 13}}}, 7, kUnit), 1e-5, 1e-4);
  CHECK(o.fused_dispatches == 1);
  CHECK(o.unfused_dispatches == 3);
}

TEST_CASE("batched MatMul -> SiLU written as x * Sigmoid(x): a DAG in the store stage") {
  GraphBuilder b;
  const Tensor a = b.input("a", {3, 7, 13}), w = b.input("w", {13, 9});
  const Tensor m = b.op("MatMul", {a, w});
  b.output(b.op("Mul", {m, b.op("Sigmoid", {m})}), "y");
  const Graph graph = build_graph(b);
  const FusionOutcome o =
      check_fused_unfused(graph, random_feeds({{"a", {3, 7, 13}}, {"w", {13, 9}}}, 8, kUnit), 1e-5, 1e-4);
  CHECK(o.fused_dispatches == 1);
  CHECK(o.unfused_dispatches == 3);
}

TEST_CASE("pooling -> Clip, and anchors in a row each take their own chain") {
  //   x ─ Conv ─ Relu ─ MaxPool ─ Clip ─ Conv(k x k) ─ Neg ─ y   => 6 dispatches unfused; fused, a 3x3 Conv
  //   after: 3 ([Conv -> Relu] [MaxPool -> Clip] [Conv -> Neg]); a 1x1 Conv after: 2, the pool and its
  //   Clip computed in the 1x1 Conv's loads ([MaxPool -> Clip -> Conv -> Neg])
  for (const std::int64_t k : {3, 1}) {
    CAPTURE(k);
    GraphBuilder b;
    const Tensor x = b.input("x", {1, 7, 10, 9}), w1 = b.input("w1", {13, 7, 3, 3}), w2 = b.input("w2", {5, 13, k, k});
    const Tensor c1 = b.op("Relu", {b.op("Conv", {x, w1}, {{"pads", Ints{1, 1, 1, 1}}})});
    const Tensor pool = b.op("MaxPool", {c1}, {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}});
    const Tensor clipped = b.op("Clip", {pool}, {{"min", -0.5f}, {"max", 0.5f}});
    b.output(b.op("Neg", {b.op("Conv", {clipped, w2})}), "y");
    const Graph graph = build_graph(b);
    const FusionOutcome o = check_fused_unfused(
        graph, random_feeds({{"x", {1, 7, 10, 9}}, {"w1", {13, 7, 3, 3}}, {"w2", {5, 13, k, k}}}, 9, kUnit), 1e-5, 1e-4);
    CHECK(o.fused_dispatches == (k == 3 ? 3u : 2u));
    CHECK(o.unfused_dispatches == 6);
  }
}

}  // namespace vkfuse::testing

namespace vkfuse::testing {

TEST_CASE("pre-fusion: scale -> shift -> Relu before Conv, MatMul and MaxPool runs in their loads") {
  using Ints = std::vector<std::int64_t>;
  constexpr TestDomain kUnit{-1.0f, 1.0f, 0.0f, false};
  SUBCASE("Conv with padding, stride and groups: the pads stay zero, not Relu(shift)") {
    for (const std::vector<Attr>& attrs : {std::vector<Attr>{{"pads", Ints{1, 1, 1, 1}}},
                                           std::vector<Attr>{{"strides", Ints{2, 2}}, {"pads", Ints{2, 1, 0, 1}}},
                                           std::vector<Attr>{{"group", 7.0f}, {"pads", Ints{1, 1, 1, 1}}}}) {
      const bool depthwise = attrs[0].name == "group";
      const Shape wshape = depthwise ? Shape{7, 1, 3, 3} : Shape{13, 7, 3, 3};
      GraphBuilder b;
      const Tensor x = b.input("x", {1, 7, 9, 8}), w = b.input("w", wshape);
      const Tensor scale = b.input("scale", {1, 7, 1, 1}), shift = b.input("shift", {7, 1, 1});
      const Tensor act = b.op("Relu", {b.op("Add", {b.op("Mul", {x, scale}), shift})});
      b.output(b.op("Conv", {act, w}, attrs), "y");
      auto graph = b.build();
      REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
      // shift in [0.5, 1]: Relu(0 * scale + shift) would be visibly wrong in the padding.
      auto feeds = random_feeds({{"x", {1, 7, 9, 8}}, {"w", wshape}, {"scale", {1, 7, 1, 1}}}, 31, kUnit);
      feeds.merge(random_feeds({{"shift", {7, 1, 1}}}, 32, {0.5f, 1.0f, 0.0f, false}));
      const FusionOutcome o = check_fused_unfused(*graph, feeds, 1e-5, 1e-4);
      CHECK(o.fused_dispatches == 1);
      CHECK(o.unfused_dispatches == 4);
    }
  }
  SUBCASE("both MatMul operands computed in the loads, with a post-fused Add") {
    GraphBuilder b;
    const Tensor a = b.input("a", {2, 7, 13}), w = b.input("w", {13, 9}), s = b.input("s", {13}), r = b.input("r", {9});
    const Tensor left = b.op("Relu", {b.op("Mul", {a, s})});
    const Tensor right = b.op("Neg", {w});
    b.output(b.op("Add", {b.op("MatMul", {left, right}), r}), "y");
    auto graph = b.build();
    REQUIRE(graph.ok());
    const FusionOutcome o = check_fused_unfused(
        *graph, random_feeds({{"a", {2, 7, 13}}, {"w", {13, 9}}, {"s", {13}}, {"r", {9}}}, 33, kUnit), 1e-5, 1e-4);
    CHECK(o.fused_dispatches == 1);
    CHECK(o.unfused_dispatches == 5);
  }
  SUBCASE("MaxPool with padding reads Relu(x - 2) computed in its loads") {
    GraphBuilder b;
    const Tensor x = b.input("x", {1, 5, 7, 6});
    const Tensor act = b.op("Relu", {b.op("Sub", {x, b.scalar(2.0f)})});
    b.output(b.op("MaxPool", {act}, {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}}),
             "y");
    auto graph = b.build();
    REQUIRE(graph.ok());
    const FusionOutcome o = check_fused_unfused(*graph, random_feeds({{"x", {1, 5, 7, 6}}}, 34), 1e-6, 1e-6);
    CHECK(o.fused_dispatches == 1);
    CHECK(o.unfused_dispatches == 3);
  }
}

TEST_CASE("a residual stream through channels-last MatMuls: each block's sum stored once") {
  // convnext_tiny's blocks with 13 channels (fusion_planner.cpp reads_no_more_than; tests/unit "a
  // residual stream is stored once, not recomputed from every earlier block").
  const Graph graph = build_residual_stream(13, 7, 5, 3);
  const FusionOutcome o = check_fused_unfused(
      graph, random_feeds({{"x", {1, 13, 7, 5}}, {"dw", {13, 1, 3, 3}}, {"w", {13, 13}}, {"s", {13, 1, 1}}}, 11, kUnit),
      1e-5, 1e-4);
  // Per block: Conv; MatMul (reading the Conv's transposed result in place) -> Mul -> Add (through the
  // Transpose after it: post-fusion through a view).
  CHECK(o.fused_dispatches == 6);
  CHECK(o.unfused_dispatches > o.fused_dispatches);
}

}  // namespace vkfuse::testing

namespace vkfuse::testing {

TEST_CASE("Concat written in place: Conv, MatMul, elementwise and reduce producers store into its slices") {
  // Fused, the Concat does not run: each producer stores its result into the Concat's slice (whole vec4s
  // where the slices allow, element by element where they do not; runs per image when the batch is > 1).
  // Against unfused (the Concat copies) and the CPU reference.
  struct Case {
    Shape x;  // [N, 3, H, W]
    std::size_t fused_dispatches;
  };
  for (const Case& c : {Case{{2, 3, 5, 4}, 4}, Case{{1, 3, 5, 3}, 4}, Case{{3, 3, 3, 5}, 4}}) {
    CAPTURE(shape_to_string(c.x));
    //   x ─ Conv(w1) ─ Relu ─┐
    //   x ─ Conv(w2) ────────┼─ Concat(axis 1) ─ Conv(w3) ─ y
    //   x ─ Sigmoid ─────────┘
    GraphBuilder b;
    const Tensor x = b.input("x", c.x), w1 = b.input("w1", {7, 3, 1, 1}), w2 = b.input("w2", {13, 3, 3, 3});
    const Tensor w3 = b.input("w3", {5, 23, 1, 1});
    const Tensor a = b.op("Relu", {b.op("Conv", {x, w1})});
    const Tensor conv = b.op("Conv", {x, w2}, {{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}});
    const Tensor cat = b.op("Concat", {a, conv, b.op("Sigmoid", {x})}, {{"axis", 1.0f}});
    b.output(b.op("Conv", {cat, w3}), "y");
    const Graph graph = build_graph(b);
    const auto feeds = random_feeds({{"x", c.x}, {"w1", {7, 3, 1, 1}}, {"w2", {13, 3, 3, 3}}, {"w3", {5, 23, 1, 1}}}, 500, kUnit);
    const FusionOutcome o = check_fused_unfused(graph, feeds, 1e-4, 1e-4);
    CHECK(o.fused_dispatches == c.fused_dispatches);
    CHECK(o.unfused_dispatches == 6);
  }
  SUBCASE("reduce and MatMul producers, along the last and the first axis, into a graph output") {
    //   x[2,3,5,4] ─ ReduceMean(axis 3, keepdims) ─┐
    //   x ─ Exp ───────────────────────────────────┴─ Concat(axis 3) ─ y1[2,3,5,5]
    //   p[5,7] ─ MatMul(q[7,6]) ─┐
    //   r[3,7] ─ MatMul(q) ──────┴─ Concat(axis 0) ─ y2[8,6]
    GraphBuilder b;
    const Tensor x = b.input("x", {2, 3, 5, 4}), p = b.input("p", {5, 7}), q = b.input("q", {7, 6}), r = b.input("r", {3, 7});
    const Tensor mean = b.op("ReduceMean", {x}, {{"axes", std::vector<std::int64_t>{3}}, {"keepdims", 1.0f}});
    b.output(b.op("Concat", {mean, b.op("Exp", {x})}, {{"axis", 3.0f}}), "y1");
    b.output(b.op("Concat", {b.op("MatMul", {p, q}), b.op("MatMul", {r, q})}, {{"axis", 0.0f}}), "y2");
    const Graph graph = build_graph(b);
    const auto feeds = random_feeds({{"x", {2, 3, 5, 4}}, {"p", {5, 7}}, {"q", {7, 6}}, {"r", {3, 7}}}, 501, kUnit);
    const FusionOutcome o = check_fused_unfused(graph, feeds, 1e-4, 1e-4);
    CHECK(o.fused_dispatches == 4);
    CHECK(o.unfused_dispatches == 6);
  }
}

}  // namespace vkfuse::testing

namespace vkfuse::testing {

// A dense block (densenet's) as its export has it: each layer's Concat repeats the inputs of the one
// before and adds the layer's output; a layer scales, shifts and activates the Concat (its BatchNorm)
// before its Conv, and the first layer reads the block's input directly.
//   x0 ─ Mul ─ Add ─ Relu ─ Conv ─ f1 ─┐
//   x0 ────────────────────────────────┴─ Concat ─ Mul ─ Add ─ Relu ─ Conv ─ f2 ─┐
//   x0, f1 ──────────────────────────────────────────────────────────────────────┴─ Concat ─ ... ─ y
// At batch 1 the Concats are the last one's leading elements: each layer's Conv stores into the last
// Concat's slice, the BatchNorms run in the next Conv's loads, and no Concat runs. At batch 2 the
// Concats' slices are runs per image, the layers' Concats run (they copy). With `most` set, a Concat of
// more features is chained as the ONNX importer chains Concats of more inputs than the op takes: its
// first `most` parts become the earlier Concat of exactly those, which then stands first, until `most`
// are left (with 3 and 6 layers: [[[x0, f1, f2], f3, f4], f5, f6], two leading Concats deep); the same
// at batch 1. Against unfused and the CPU reference, f32 and f16.
TEST_CASE("Concat written in place: a dense block's Concats share the last one's buffer, f32 and f16") {
  struct Case {
    std::int64_t n, c0, grow, h, w, layers;
    std::size_t fused_dispatches;
    std::size_t most = 0;
  };
  // Layers' Convs alternate 3x3 (pads 1) and 1x1; the block's input is a Conv -> Relu of x.
  for (const Case& c : {Case{1, 7, 5, 6, 5, 3, 5}, Case{1, 8, 4, 4, 4, 4, 6}, Case{2, 7, 5, 6, 5, 3, 8},
                        Case{1, 8, 4, 4, 4, 6, 8, 3}, Case{2, 7, 5, 6, 5, 4, 10, 2}}) {
    for (DType dtype : {DType::kF32, DType::kF16}) {
      const std::string what = std::string(dtype_name(dtype)) + " n" + std::to_string(c.n) + " c" + std::to_string(c.c0) +
                               " layers " + std::to_string(c.layers) + " most " + std::to_string(c.most);
      CAPTURE(what);
      GraphBuilder b;
      std::mt19937 rng(static_cast<std::uint32_t>(1300 + c.n * 10 + c.c0 + (dtype == DType::kF16 ? 1 : 0)));
      std::map<std::string, HostTensor> feeds;
      auto input = [&](const std::string& name, const Shape& shape) {
        feeds.emplace(name, random_tensor(shape, dtype, kUnit, rng));
        return b.input(name, shape, dtype);
      };
      const Tensor x0 = b.op("Relu", {b.op("Conv", {input("x", {c.n, 3, c.h, c.w}), input("w0", {c.c0, 3, 1, 1})})});
      std::vector<Tensor> features{x0};
      Tensor block = x0;
      std::map<std::vector<int>, Tensor> made;  // the Concats so far, by their parts' ids
      auto key_of = [](const std::vector<Tensor>& parts) {
        std::vector<int> key;
        for (const Tensor& t : parts) key.push_back(t.id);
        return key;
      };
      std::int64_t channels = c.c0;
      for (std::int64_t l = 0; l <= c.layers; ++l) {
        const std::string k = std::to_string(l);
        const Tensor bn = b.op("Relu", {b.op("Add", {b.op("Mul", {block, input("s" + k, {1, channels, 1, 1})}),
                                                     input("t" + k, {1, channels, 1, 1})})});
        if (l == c.layers) {
          b.output(b.op("Conv", {bn, input("wy", {3, channels, 1, 1})}), "y");
          break;
        }
        const std::int64_t kh = l % 2 == 0 ? 3 : 1;
        std::vector<Attr> attrs;
        if (kh == 3) attrs.push_back({"pads", Ints{1, 1, 1, 1}});
        features.push_back(b.op("Conv", {bn, input("w" + std::to_string(l + 1), {c.grow, channels, kh, kh})}, attrs));
        channels += c.grow;
        std::vector<Tensor> parts = features;
        while (c.most > 0 && parts.size() > c.most) {
          const std::vector<Tensor> head(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(c.most));
          REQUIRE(made.count(key_of(head)) == 1);  // an earlier layer's Concat
          parts.erase(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(c.most - 1));
          parts[0] = made.at(key_of(head));
        }
        block = b.op("Concat", parts, {{"axis", 1.0f}});
        made[key_of(parts)] = block;
      }
      const Graph graph = build_graph(b);
      const bool f16 = dtype == DType::kF16;
      const FusionOutcome o = check_fused_unfused(graph, feeds, f16 ? 3e-2 : 1e-5, f16 ? 1e-2 : 1e-4);
      CHECK(o.fused_dispatches == c.fused_dispatches);
      CHECK(o.unfused_dispatches == 2 + 4 * static_cast<std::size_t>(c.layers) + c.layers + 4);
    }
  }
}

// Two shufflenet units with odd channel counts: each unit's Concat is shuffled (Reshape, Transpose,
// Reshape: the builder copies the transpose), then split in halves. Fused, the Concats' inputs store
// straight into the copies' channels 2c and 2c + 1 (tests/unit "copies in place"), and neither the
// Concats nor the copies run; the second unit's first half is a view of the first copy, copied into
// its place by its own dispatch. Against unfused (every Concat and copy runs) and the CPU reference,
// f32 and f16, at batch 1 and 2.
TEST_CASE("copies in place: shufflenet units store their halves into the channel shuffle, f32 and f16") {
  constexpr std::int64_t kC = 7, kH = 6, kW = 5;
  for (std::int64_t n : {1, 2}) {
    for (DType dtype : {DType::kF32, DType::kF16}) {
      const std::string what = std::string(dtype_name(dtype)) + " n" + std::to_string(n);
      CAPTURE(what);
      GraphBuilder b;
      std::mt19937 rng(static_cast<std::uint32_t>(1500 + n * 10 + (dtype == DType::kF16 ? 1 : 0)));
      std::map<std::string, HostTensor> feeds;
      auto input = [&](const std::string& name, const Shape& shape) {
        feeds.emplace(name, random_tensor(shape, dtype, kUnit, rng));
        return b.input(name, shape, dtype);
      };
      const Ints pads{1, 1, 1, 1};
      auto shuffle = [&](const Tensor& cat) {
        const Tensor split = b.op("Reshape", {cat}, {{"shape", Ints{n, 2, kC, kH, kW}}});
        const Tensor t = b.op("Transpose", {split}, {{"perm", Ints{0, 2, 1, 3, 4}}});
        return b.op("Reshape", {t}, {{"shape", Ints{n, 2 * kC, kH, kW}}});
      };
      auto half = [&](const Tensor& t, float start) {
        return b.op("Slice", {t}, {{"axis", 1.0f}, {"start", start}, {"end", start + static_cast<float>(kC)}});
      };
      const Tensor x = input("x", {n, 3, kH, kW});
      const Tensor a = b.op("Relu", {b.op("Conv", {x, input("w1", {kC, 3, 1, 1})})});
      const Tensor c = b.op("Conv", {x, input("w2", {kC, 3, 3, 3})}, {{"pads", pads}});
      const Tensor t1 = shuffle(b.op("Concat", {a, c}, {{"axis", 1.0f}}));
      Tensor branch = b.op("Relu", {b.op("Conv", {half(t1, kC), input("w3", {kC, kC, 1, 1})})});
      branch = b.op("Conv", {branch, input("w4", {kC, 1, 3, 3})}, {{"pads", pads}, {"group", static_cast<float>(kC)}});
      branch = b.op("Relu", {b.op("Conv", {branch, input("w5", {kC, kC, 1, 1})})});
      const Tensor t2 = shuffle(b.op("Concat", {half(t1, 0.0f), branch}, {{"axis", 1.0f}}));
      b.output(b.op("Conv", {t2, input("wy", {3, 2 * kC, 1, 1})}), "y");
      const Graph graph = build_graph(b);
      const bool f16 = dtype == DType::kF16;
      const FusionOutcome o = check_fused_unfused(graph, feeds, f16 ? 3e-2 : 1e-5, f16 ? 1e-2 : 1e-4);
      // Conv -> Relu, Conv (into the first copy); the second unit's 1x1 Conv (reading its half through
      // the copy's pre-fused Identity), its depthwise and 1x1 Convs, the first half's copy (into the
      // second copy); the last Conv.
      CHECK(o.fused_dispatches == 6);
      CHECK(o.unfused_dispatches > o.fused_dispatches + 4);
    }
  }
}

namespace {

using InputMaker = std::function<Tensor(const std::string&, const Shape&)>;

// Builds the graph `make` describes in f32 and in f16 (its inputs random, from `seed`), runs it fused and
// unfused against the CPU reference, and checks the fused dispatches, fewer than unfused.
void check_f32_f16(const std::function<void(GraphBuilder&, const InputMaker&)>& make, std::size_t fused, std::uint32_t seed) {
  for (DType dtype : {DType::kF32, DType::kF16}) {
    const std::string what = dtype_name(dtype);
    CAPTURE(what);
    const bool f16 = dtype == DType::kF16;
    std::mt19937 rng(seed + (f16 ? 1u : 0u));
    std::map<std::string, HostTensor> feeds;
    GraphBuilder b;
    make(b, [&](const std::string& name, const Shape& shape) {
      feeds.emplace(name, random_tensor(shape, dtype, kUnit, rng));
      return b.input(name, shape, dtype);
    });
    const FusionOutcome o = check_fused_unfused(build_graph(b), feeds, f16 ? 3e-2 : 1e-5, f16 ? 1e-2 : 1e-4);
    CHECK(o.fused_dispatches == fused);
    CHECK(o.unfused_dispatches > o.fused_dispatches);
  }
}

}  // namespace

// A result read only through a copy of a reordering view is stored where the copy puts it, and the
// copy does not run (tests/unit "copies in place: a reordered result ..."): attention heads merged back
// (a MatMul's stores in blocks of runs, one block level more per image), a LayerNormalization's rows
// reordered (a reduce root's stores), a graph output through a Flatten; and a channels-last
// LayerNormalization read channels-first, whose runs of one element the copy keeps. Fused vs unfused
// vs the CPU reference, f32 and f16.
// Post-fusion through a view (host/view_reorder.h): a post chain that reads the anchor's result through
// a Transpose (and Reshapes) runs in the anchor's stores, its inputs read and its results stored in the
// view's order. Odd sizes, batches, vector and scalar stores, the anchor's own result stored as well;
// fused vs unfused vs the CPU reference, f32 and f16.
TEST_CASE("post-fusion through a view: MatMul and Conv chains after a Transpose run in their stores") {
  auto check = [](const std::function<void(GraphBuilder&, const InputMaker&)>& make, std::size_t fused) {
    check_f32_f16(make, fused, 1700);
  };
  SUBCASE("convnext's block tail: channels-last MatMul, bias, Transpose, layer scale, residual") {
    check([](GraphBuilder& b, const InputMaker& input) {
      const Tensor m = b.op("Add", {b.op("MatMul", {input("a", {1, 7, 5, 12}), input("w", {12, 13})}), input("bias", {13})});
      const Tensor t = b.op("Transpose", {m}, {{"perm", Ints{0, 3, 1, 2}}});
      b.output(b.op("Add", {b.op("Mul", {t, input("s", {13, 1, 1})}), input("r", {1, 13, 7, 5})}), "y");
    }, 1);
  }
  SUBCASE("batched: [2, 7, 9] -> [2, 9, 7], an activation and a residual") {
    check([](GraphBuilder& b, const InputMaker& input) {
      const Tensor m = b.op("MatMul", {input("a", {2, 7, 13}), input("w", {2, 13, 9})});
      const Tensor t = b.op("Transpose", {m}, {{"perm", Ints{0, 2, 1}}});
      b.output(b.op("Add", {b.op("Relu", {t}), input("r", {2, 9, 7})}), "y");
    }, 1);
  }
  SUBCASE("a Conv read channels-last: a per-channel scale broadcast along the last axis") {
    check([](GraphBuilder& b, const InputMaker& input) {
      const Tensor c = b.op("Conv", {input("x", {2, 5, 7, 6}), input("w", {13, 5, 3, 3})}, {{"pads", Ints{1, 1, 1, 1}}});
      const Tensor t = b.op("Transpose", {c}, {{"perm", Ints{0, 2, 3, 1}}});
      b.output(b.op("Sigmoid", {b.op("Mul", {t, input("g", {13})})}), "y");
    }, 1);
  }
  SUBCASE("a Reshape and a Transpose: heads split out of the columns, whole vec4s") {
    check([](GraphBuilder& b, const InputMaker& input) {
      const Tensor m = b.op("MatMul", {input("a", {6, 8}), input("w", {8, 12})});
      const Tensor t = b.op("Transpose", {b.op("Reshape", {m}, {{"shape", Ints{6, 3, 4}}})}, {{"perm", Ints{1, 0, 2}}});
      b.output(b.op("Add", {t, input("r", {3, 6, 4})}), "y");
    }, 1);
  }
  SUBCASE("one input read in both orders: a bias added to the result and to its transpose") {
    check([](GraphBuilder& b, const InputMaker& input) {
      const Tensor m = b.op("MatMul", {input("a", {2, 6, 9}), input("w", {9, 6})});
      const Tensor s = input("s", {6});
      b.output(b.op("Add", {m, s}), "z");
      b.output(b.op("Add", {b.op("Transpose", {m}, {{"perm", Ints{0, 2, 1}}}), s}), "y");
    }, 1);
  }
  SUBCASE("the anchor's own result is a graph output too: both orders stored") {
    check([](GraphBuilder& b, const InputMaker& input) {
      const Tensor m = b.op("Relu", {b.op("MatMul", {input("a", {5, 11}), input("w", {11, 7})})});
      b.output(m, "m");
      b.output(b.op("Mul", {b.op("Transpose", {m}, {{"perm", Ints{1, 0}}}), input("s", {7, 1})}), "y");
    }, 1);
  }
}

// Operand scales (host/fusion_planner.cpp): a product whose operand is a Mul or Div by a constant reads the
// operand's source in place and scales its result. Fused vs unfused vs the CPU reference, f32 and f16.
TEST_CASE("operand scales: products scale their results instead of their operands") {
  auto check = [](const std::function<void(GraphBuilder&, const InputMaker&)>& make, std::size_t fused) {
    check_f32_f16(make, fused, 1800);
  };
  SUBCASE("attention scores: q and k each scaled, k transposed") {
    check([](GraphBuilder& b, const InputMaker& input) {
      const Tensor x = input("q", {2, 3, 7, 5});
      const Tensor q = b.op("Mul", {x, b.scalar(0.6f, b.dtype(x))});
      const Tensor k = b.op("Transpose", {b.op("Mul", {b.scalar(0.7f, b.dtype(x)), input("k", {2, 3, 7, 5})})},
                            {{"perm", Ints{0, 1, 3, 2}}});
      b.output(b.op("MatMul", {q, k}), "y");
    }, 1);
  }
  SUBCASE("heads of a packed projection: sliced, split, transposed, divided") {
    check([](GraphBuilder& b, const InputMaker& input) {
      const Tensor qkv = b.op("MatMul", {input("x", {7, 9}), input("w", {9, 24})});
      auto heads = [&](float start) {
        const Tensor part = b.op("Slice", {qkv}, {{"axis", 1.0f}, {"start", start}, {"end", start + 8.0f}});
        return b.op("Transpose", {b.op("Reshape", {part}, {{"shape", Ints{7, 2, 4}}})}, {{"perm", Ints{1, 0, 2}}});
      };
      const Tensor q = b.op("Div", {heads(0.0f), b.scalar(1.5f, b.dtype(qkv))});
      const Tensor scores = b.op("MatMul", {q, b.op("Transpose", {heads(8.0f)}, {{"perm", Ints{0, 2, 1}}})});
      b.output(b.op("Relu", {b.op("MatMul", {scores, heads(16.0f)})}), "y");
    }, 3);
  }
}

TEST_CASE("copies in place: MatMul, LayerNormalization and graph-output stores through a reordering view") {
  auto check = [](const std::function<void(GraphBuilder&, const InputMaker&)>& make, std::size_t fused) {
    check_f32_f16(make, fused, 1600);
  };
  SUBCASE("heads merged back: [3, 7, 6] -> [7, 3, 6] -> [7, 18]") {
    check([](GraphBuilder& b, const InputMaker& input) {
      const Tensor h = b.op("MatMul", {b.op("MatMul", {input("q", {3, 7, 5}), input("k", {3, 5, 7})}), input("v", {3, 7, 6})});
      const Tensor t = b.op("Transpose", {h}, {{"perm", Ints{1, 0, 2}}});
      b.output(b.op("MatMul", {b.op("Reshape", {t}, {{"shape", Ints{7, 18}}}), input("w", {18, 5})}), "y");
    }, 3);
  }
  SUBCASE("heads of 8 merged back: whole vec4s") {
    check([](GraphBuilder& b, const InputMaker& input) {
      const Tensor h = b.op("MatMul", {input("p", {2, 9, 4}), input("v", {4, 8})});
      const Tensor t = b.op("Transpose", {h}, {{"perm", Ints{1, 0, 2}}});
      b.output(b.op("MatMul", {b.op("Reshape", {t}, {{"shape", Ints{9, 16}}}), input("w", {16, 3})}), "y");
    }, 2);
  }
  SUBCASE("heads merged back at batch 2: [2, 3, 7, 8] -> [2, 7, 3, 8] -> [2, 7, 24]") {
    check([](GraphBuilder& b, const InputMaker& input) {
      const Tensor h = b.op("MatMul", {input("p", {2, 3, 7, 5}), input("v", {2, 3, 5, 8})});
      const Tensor t = b.op("Transpose", {h}, {{"perm", Ints{0, 2, 1, 3}}});
      b.output(b.op("MatMul", {b.op("Reshape", {t}, {{"shape", Ints{2, 7, 24}}}), input("w", {24, 3})}), "y");
    }, 2);
  }
  SUBCASE("a LayerNormalization's rows reordered: [2, 5, 3, 12] -> [2, 3, 5, 12]") {
    check([](GraphBuilder& b, const InputMaker& input) {
      const Tensor ln = b.op("LayerNormalization", {input("x", {2, 5, 3, 12}), input("g", {12}), input("beta", {12})},
                             {{"axis", -1.0f}});
      const Tensor t = b.op("Transpose", {ln}, {{"perm", Ints{0, 2, 1, 3}}});
      b.output(b.op("MatMul", {b.op("Reshape", {t}, {{"shape", Ints{2, 3, 60}}}), input("w", {60, 5})}), "y");
    }, 2);
  }
  SUBCASE("a copy a depthwise Conv computes in its loads: the Relu's result stays where the Conv reads it") {
    check([](GraphBuilder& b, const InputMaker& input) {
      const Tensor tr = b.op("Transpose", {b.op("Relu", {input("x", {1, 8, 4, 16})})}, {{"perm", Ints{0, 2, 1, 3}}});
      b.output(b.op("Conv", {tr, input("w", {4, 1, 3, 3})}, {{"group", 4.0f}}), "y");
    }, 2);
  }
  SUBCASE("channels-last LayerNormalization, then a channels-first Conv: the copy runs") {
    check([](GraphBuilder& b, const InputMaker& input) {
      const Tensor x = b.op("Transpose", {input("x", {2, 13, 5, 3})}, {{"perm", Ints{0, 2, 3, 1}}});
      const Tensor ln = b.op("LayerNormalization", {x, input("g", {13}), input("beta", {13})}, {{"axis", -1.0f}});
      const Tensor back = b.op("Transpose", {ln}, {{"perm", Ints{0, 3, 1, 2}}});
      b.output(b.op("Conv", {back, input("w", {7, 13, 3, 3})}, {{"pads", Ints{1, 1, 1, 1}}}), "y");
    }, 3);
  }
  SUBCASE("a graph output through a Flatten") {
    check([](GraphBuilder& b, const InputMaker& input) {
      const Tensor m = b.op("Relu", {b.op("MatMul", {input("a", {3, 5, 7}), input("c", {7, 6})})});
      b.output(b.op("Flatten", {m}, {{"axis", 1.0f}}), "y");
    }, 1);
  }
}

// Plane sums (tests/unit "plane sums"): a ReduceMean or ReduceSum over the planes of a depthwise (or
// narrow-group) Conv's result, with or without a post chain, folded by the Conv's workgroups as they
// store; odd channel counts, strides, dilations, a channel multiplier, batch 2, keepdims 0, the Conv's
// result a graph output too, the mean the only output; and a few large planes, where the pooling keeps
// its dispatch. Fused vs unfused vs the CPU
// reference, f32 and f16.
TEST_CASE("plane sums: depthwise Convs fold a squeeze-and-excitation block's pooling as they store") {
  auto check = [](const std::function<void(GraphBuilder&, const InputMaker&)>& make, std::size_t fused) {
    check_f32_f16(make, fused, 1700);
  };
  SUBCASE("SiLU, mean, a squeeze-and-excitation block: 37 channels, stride 2, batch 2") {
    check([](GraphBuilder& b, const InputMaker& input) {
      const Tensor dw = b.op("Conv", {input("x", {2, 37, 15, 13}), input("wd", {37, 1, 3, 3}), input("bd", {37})},
                             {{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}, {"group", 37.0f}});
      const Tensor act = b.op("Mul", {dw, b.op("Sigmoid", {dw})});
      const Tensor pooled = b.op("ReduceMean", {act}, {{"axes", Ints{2, 3}}, {"keepdims", 1.0f}});
      const Tensor hidden = b.op("Relu", {b.op("Conv", {pooled, input("w1", {5, 37, 1, 1})})});
      const Tensor scale = b.op("Sigmoid", {b.op("Conv", {hidden, input("w2", {37, 5, 1, 1})})});
      b.output(b.op("Conv", {b.op("Mul", {act, scale}), input("w3", {7, 37, 1, 1})}), "y");
    }, 3);
  }
  SUBCASE("a plain sum, keepdims 0, dilation 2, two outputs per channel; the Conv's result a graph output") {
    check([](GraphBuilder& b, const InputMaker& input) {
      const Tensor dw = b.op("Conv", {input("x", {1, 13, 9, 11}), input("wd", {26, 1, 5, 5})},
                             {{"pads", Ints{4, 4, 4, 4}}, {"dilations", Ints{2, 2}}, {"group", 13.0f}});
      b.output(dw, "dw");
      b.output(b.op("ReduceSum", {dw}, {{"axes", Ints{2, 3}}, {"keepdims", 0.0f}}), "sum");
    }, 1);
  }
  SUBCASE("groups of 3 channels, the mean the group's only output") {
    check([](GraphBuilder& b, const InputMaker& input) {
      const Tensor conv = b.op("Conv", {input("x", {1, 15, 9, 8}), input("w", {10, 3, 3, 3})},
                               {{"pads", Ints{1, 1, 1, 1}}, {"group", 5.0f}});
      b.output(b.op("ReduceMean", {b.op("Sigmoid", {conv})}, {{"axes", Ints{2, 3}}, {"keepdims", 1.0f}}), "y");
    }, 1);
  }
  SUBCASE("a few large planes: the pooling keeps its dispatch") {
    check([](GraphBuilder& b, const InputMaker& input) {
      const Tensor dw = b.op("Conv", {input("x", {1, 3, 48, 64}), input("wd", {3, 1, 3, 3})},
                             {{"pads", Ints{1, 1, 1, 1}}, {"group", 3.0f}});
      b.output(b.op("ReduceMean", {b.op("Relu", {dw})}, {{"axes", Ints{2, 3}}, {"keepdims", 1.0f}}), "y");
    }, 2);
  }
}

// Plane sums on the implicit-GEMM Conv (tests/unit "plane sums: a network's final pooling joins the
// implicit-GEMM Conv"): one image, the pooling over planes that span one column tile or several (each
// tile's row sums handed to the last of the block's tiles through the split scratch), a 3x3 stride-2
// Conv with pads, odd channel counts, keepdims 0, a plain sum; where the Conv's result is an output too,
// or at batch 2, the pooling stays apart. Then (the next case) every tile of the table, K whole and split over
// workgroups. Fused vs unfused vs the CPU reference, f32 and f16 (the tile sweep f32).
TEST_CASE("plane sums: the implicit-GEMM Conv folds a network's final pooling as it stores") {
  auto head = [](std::int64_t batch, std::int64_t c, std::int64_t hw) {
    return [=](GraphBuilder& b, const InputMaker& input) {
      const Tensor conv = b.op("Conv", {input("x", {batch, 19, hw, hw}), input("w", {c, 19, 1, 1}), input("bias", {c})});
      const Tensor pooled = b.op("ReduceMean", {b.op("Relu", {conv})}, {{"axes", Ints{2, 3}}, {"keepdims", 1.0f}});
      b.output(b.op("Gemm", {b.op("Flatten", {pooled}, {{"axis", 1.0f}}), input("fc", {7, c})}, {{"transB", 1.0f}}), "y");
    };
  };
  SUBCASE("1x1 Conv -> Relu -> mean -> Gemm, 37 channels of 7x7") { check_f32_f16(head(1, 37, 7), 2, 1800); }
  SUBCASE("the same over 13x13 planes, 70 channels") { check_f32_f16(head(1, 70, 13), 2, 1802); }
  SUBCASE("batch 2: the pooling stays apart (with the Gemm, a vector chain)") { check_f32_f16(head(2, 37, 7), 2, 1804); }
  auto strided = [](bool result_too) {
    return [=](GraphBuilder& b, const InputMaker& input) {
      const Tensor conv = b.op("Conv", {input("x", {1, 13, 15, 17}), input("w", {29, 13, 3, 3})},
                               {{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}});
      const Tensor act = b.op("Sigmoid", {conv});
      if (result_too) b.output(act, "act");
      b.output(b.op("ReduceSum", {act}, {{"axes", Ints{2, 3}}, {"keepdims", 0.0f}}), "sum");
    };
  };
  SUBCASE("a 3x3 stride-2 Conv with pads, a plain sum, keepdims 0") { check_f32_f16(strided(false), 1, 1806); }
  SUBCASE("the same with the Conv's result an output too: the pooling keeps its dispatch") {
    check_f32_f16(strided(true), 2, 1808);
  }
}

TEST_CASE("plane sums on every implicit-GEMM tile, K whole and split over workgroups") {
  std::uint32_t seed = 1810;
  for (std::size_t run = 0; run < 2 * conv_tile_count(); ++run) {
    const std::size_t tile = run / 2;
    const ScopedConvTile forced(tile, run % 2 ? 3 : 1);
    CAPTURE(tile);
    CAPTURE(run % 2);
    GraphBuilder b;
    const Tensor conv = b.op("Conv", {b.input("x", {1, 21, 11, 9}), b.input("w", {45, 21, 3, 3}), b.input("bias", {45})},
                             {{"pads", Ints{1, 1, 1, 1}}});
    b.output(b.op("ReduceMean", {b.op("Relu", {conv})}, {{"axes", Ints{2, 3}}, {"keepdims", 1.0f}}), "y");
    const auto feeds = random_feeds({{"x", {1, 21, 11, 9}}, {"w", {45, 21, 3, 3}}, {"bias", {45}}}, seed++, kUnit);
    const FusionOutcome o = check_fused_unfused(build_graph(b), feeds, 1e-5, 1e-4);
    CHECK(o.fused_dispatches == 1);
  }
}

// Attention (tests/unit "attention: a product, the Softmax of its rows and the product that reads it
// are one dispatch"): a product, the Softmax of its rows (scaled, masked) and the product that reads
// it, one dispatch: rows that span several query blocks, a batch of heads, odd
// sizes, batches broadcast between the operands, more keys than one staged chunk, a chain of two
// walks' reductions (a LayerNormalization's), an operand scale and multi-head views of one packed
// tensor as vit_b_16 exports them (heads merged back through a copy the second product stores in
// place), a post chain after the second product. Fused vs unfused vs the CPU reference, f32 and f16.
TEST_CASE("attention: a product, the Softmax of its rows and the product that reads it run as one dispatch") {
  SUBCASE("Softmax(Q K^T) V, 2 heads, 37 queries, 45 keys, depth 24, 16 values") {
    check_f32_f16([](GraphBuilder& b, const InputMaker& input) {
      const Tensor s = b.op("MatMul", {input("q", {2, 37, 24}), input("kt", {2, 24, 45})});
      b.output(b.op("MatMul", {b.op("Softmax", {s}, {{"axis", -1.0f}}), input("v", {2, 45, 16})}), "y");
    }, 1, 1900);
  }
  SUBCASE("150 keys: more than one staged chunk, the last one partial") {
    check_f32_f16([](GraphBuilder& b, const InputMaker& input) {
      const Tensor s = b.op("MatMul", {input("q", {3, 21, 16}), input("kt", {3, 16, 150})});
      b.output(b.op("MatMul", {b.op("Softmax", {s}, {{"axis", -1.0f}}), input("v", {3, 150, 8})}), "y");
    }, 1, 1901);
  }
  SUBCASE("scores scaled and masked, one head broadcast over 3 value batches, a post chain") {
    check_f32_f16([](GraphBuilder& b, const InputMaker& input) {
      const Tensor q = input("q", {3, 19, 8});
      const Tensor s = b.op("Mul", {b.op("MatMul", {q, input("kt", {1, 8, 23})}), b.scalar(0.35f, b.dtype(q))});
      const Tensor p = b.op("Softmax", {b.op("Add", {s, input("mask", {19, 23})})}, {{"axis", -1.0f}});
      b.output(b.op("Relu", {b.op("Add", {b.op("MatMul", {p, input("v", {3, 23, 32})}), input("bias", {32})})}), "y");
    }, 1, 1902);
  }
  SUBCASE("4-D batches broadcast between the operands; a LayerNormalization-like chain over the rows") {
    check_f32_f16([](GraphBuilder& b, const InputMaker& input) {
      const Tensor s = b.op("MatMul", {input("q", {2, 1, 9, 12}), input("kt", {1, 3, 12, 30})});
      const Tensor centred = b.op("Sub", {s, b.op("ReduceMean", {s}, {{"axes", Ints{-1}}, {"keepdims", 1.0f}})});
      const Tensor variance = b.op("ReduceMean", {b.op("Mul", {centred, centred})}, {{"axes", Ints{-1}}, {"keepdims", 1.0f}});
      const Tensor normed = b.op("Div", {centred, b.op("Sqrt", {b.op("Add", {variance, input("eps", {1})})})});
      b.output(b.op("MatMul", {normed, input("v", {2, 3, 30, 4})}), "y");
    }, 1, 1903);
  }
  SUBCASE("vit_b_16's heads: q, k, v views of one packed tensor, q scaled, heads merged back") {
    check_f32_f16([](GraphBuilder& b, const InputMaker& input) {
      const std::int64_t tokens = 21, heads = 3, depth = 8, width = heads * depth;
      const Tensor qkv = b.op("Add", {input("x", {tokens, 3 * width}), input("bias", {3 * width})});
      auto head_split = [&](std::int64_t part) {
        const float start = static_cast<float>(part * width);
        const Tensor slice = b.op("Slice", {qkv}, {{"axis", 1.0f}, {"start", start}, {"end", start + static_cast<float>(width)}});
        return b.op("Transpose", {b.op("Reshape", {slice}, {{"shape", Ints{tokens, heads, depth}}})}, {{"perm", Ints{1, 0, 2}}});
      };
      const Tensor q = b.op("Div", {head_split(0), b.scalar(2.828f, b.dtype(qkv))});
      const Tensor kt = b.op("Transpose", {head_split(1)}, {{"perm", Ints{0, 2, 1}}});
      const Tensor p = b.op("Softmax", {b.op("MatMul", {q, kt})}, {{"axis", -1.0f}});
      const Tensor o = b.op("MatMul", {p, head_split(2)});
      const Tensor merged = b.op("Reshape", {b.op("Transpose", {o}, {{"perm", Ints{1, 0, 2}}})}, {{"shape", Ints{tokens, width}}});
      b.output(b.op("MatMul", {merged, input("w", {width, 5})}), "y");
    }, 3, 1904);
  }
}

// Concats that share inputs or read each other (tests/unit "Concat in place: a value goes into one Concat
// only"): two starting with the same value, a dense block whose member an earlier Concat reads, a Concat
// that reads one with its own leading inputs, a Concat that leads another and lies further on in it too
// ("... lies further on in the root too leaves the root to copy"). Fused vs unfused vs the CPU reference.
TEST_CASE("Concat written in place: Concats that share inputs or read each other") {
  for (int which = 0; which < 4; ++which) {
    CAPTURE(which);
    GraphBuilder b;
    std::vector<std::pair<std::string, Shape>> shapes{{"in", {1, 3, 4, 4}}};
    const Tensor in = b.input("in", {1, 3, 4, 4});
    auto conv = [&](const std::string& w, std::int64_t c) {
      shapes.push_back({w, {c, 3, 1, 1}});
      return b.op("Conv", {in, b.input(w, {c, 3, 1, 1})});
    };
    auto head = [&](const Tensor& t, std::int64_t channels, const char* name) {
      shapes.push_back({std::string("h") + name, {2, channels, 1, 1}});
      b.output(b.op("Conv", {t, b.input(std::string("h") + name, {2, channels, 1, 1})}), name);
    };
    const Tensor x = conv("wx", 2), y = conv("wy", 3);
    if (which == 0) {
      b.output(b.op("Concat", {x, y}, {{"axis", 1.0f}}), "ya");
      b.output(b.op("Concat", {x, conv("wz", 5)}, {{"axis", 1.0f}}), "yb");
    } else if (which == 1) {
      head(b.op("Concat", {b.op("Concat", {x, y}, {{"axis", 1.0f}}), conv("ww", 2)}, {{"axis", 1.0f}}), 7, "a");
      head(b.op("Concat", {x, y, conv("wz", 4)}, {{"axis", 1.0f}}), 9, "b");
    } else if (which == 2) {
      head(b.op("Concat", {x, y, b.op("Concat", {x, y}, {{"axis", 1.0f}})}, {{"axis", 1.0f}}), 10, "a");
    } else {
      const Tensor lead = b.op("Concat", {x, y}, {{"axis", 1.0f}});
      head(b.op("Concat", {lead, conv("wz", 4), lead}, {{"axis", 1.0f}}), 14, "a");
    }
    check_fused_unfused(build_graph(b), random_feeds(shapes, 1400 + static_cast<std::uint32_t>(which), kUnit), 1e-5, 1e-4);
  }
}

TEST_CASE("vector stores: GEMM and Conv roots store four neighbouring outputs at once, through post chains and slices") {
  // Where an anchor's output rows are whole vec4s (N, or a Conv's positions per channel, a multiple of 4),
  // its root stores four neighbouring elements per call (VKF_OUT0_X4): the post chain's same-shaped
  // inputs load as vec4s, broadcast ones lane by lane, and the results store as one vec4, or element by
  // element into a Concat slice whose vec4s straddle its rows.
  SUBCASE("Conv -> scale -> residual Add -> Relu, 12x12 positions") {
    GraphBuilder b;
    const Tensor x = b.input("x", {2, 8, 12, 12}), w = b.input("w", {12, 8, 3, 3}), bias = b.input("bias", {12});
    const Tensor scale = b.input("scale", {1, 12, 1, 1}), skip = b.input("skip", {2, 12, 12, 12});
    const Tensor conv = b.op("Conv", {x, w, bias}, {{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}});
    b.output(b.op("Relu", {b.op("Add", {b.op("Mul", {conv, scale}), skip})}), "y");
    const Graph graph = build_graph(b);
    const FusionOutcome o = check_fused_unfused(
        graph,
        random_feeds({{"x", {2, 8, 12, 12}}, {"w", {12, 8, 3, 3}}, {"bias", {12}}, {"scale", {1, 12, 1, 1}},
                      {"skip", {2, 12, 12, 12}}},
                     600, kUnit),
        1e-5, 1e-4);
    CHECK(o.fused_dispatches == 1);
  }
  SUBCASE("batched MatMul -> bias -> residual Add -> Relu, with the raw product as a second output") {
    GraphBuilder b;
    const Tensor a = b.input("a", {3, 20, 24}), w = b.input("w", {24, 36}), bias = b.input("bias", {36});
    const Tensor r = b.input("r", {3, 20, 36});
    const Tensor m = b.op("MatMul", {a, w});
    b.output(m, "raw");
    b.output(b.op("Relu", {b.op("Add", {b.op("Add", {m, bias}), r})}), "y");
    const Graph graph = build_graph(b);
    const FusionOutcome o = check_fused_unfused(
        graph, random_feeds({{"a", {3, 20, 24}}, {"w", {24, 36}}, {"bias", {36}}, {"r", {3, 20, 36}}}, 601, kUnit), 1e-5,
        1e-4);
    CHECK(o.fused_dispatches == 1);
  }
  SUBCASE("a Gram matrix, Gemm(x, x) with transB: both operands read one binding as vec4s") {
    GraphBuilder b;
    const Tensor x = b.input("x", {20, 36});
    b.output(b.op("Relu", {b.op("Gemm", {x, x}, {{"transB", 1.0f}})}), "y");
    const Graph graph = build_graph(b);
    const FusionOutcome o = check_fused_unfused(graph, random_feeds({{"x", {20, 36}}}, 603, kUnit), 1e-5, 1e-4);
    CHECK(o.fused_dispatches == 1);
  }
  SUBCASE("MatMuls and Convs into Concat slices, aligned and straddling") {
    //   p[5,7] ─ MatMul(q[7,8]) ─ Relu ─┐
    //   p ─ MatMul(q2[7,6]) ────────────┴─ Concat(axis 1) ─ y1[5,14]   (slice 8 of rows of 14)
    //   x[2,4,6,6] ─ Conv(w1) ─ Relu ─┐
    //   x ─ Conv(w2) ─────────────────┴─ Concat(axis 1) ─ y2[2,9,6,6]  (slices of 5*36 and 4*36)
    GraphBuilder b;
    const Tensor p = b.input("p", {5, 7}), q = b.input("q", {7, 8}), q2 = b.input("q2", {7, 6});
    const Tensor x = b.input("x", {2, 4, 6, 6}), w1 = b.input("w1", {5, 4, 3, 3}), w2 = b.input("w2", {4, 4, 1, 1});
    b.output(b.op("Concat", {b.op("Relu", {b.op("MatMul", {p, q})}), b.op("MatMul", {p, q2})}, {{"axis", 1.0f}}), "y1");
    const Tensor c1 = b.op("Relu", {b.op("Conv", {x, w1}, {{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}})});
    b.output(b.op("Concat", {c1, b.op("Conv", {x, w2})}, {{"axis", 1.0f}}), "y2");
    const Graph graph = build_graph(b);
    const auto feeds = random_feeds(
        {{"p", {5, 7}}, {"q", {7, 8}}, {"q2", {7, 6}}, {"x", {2, 4, 6, 6}}, {"w1", {5, 4, 3, 3}}, {"w2", {4, 4, 1, 1}}}, 602,
        kUnit);
    const FusionOutcome o = check_fused_unfused(graph, feeds, 1e-5, 1e-4);
    CHECK(o.fused_dispatches == 4);
  }
}

// Pointwise Convs over planes of whole vec4s (8x8, 6x6) stage X four positions per load (roots/conv2d.glsl,
// VKF_B_VEC), a chain in the loads reading its per-channel or per-image operands once for the four.
// Every implicit-GEMM tile, K whole and split over workgroups, so that the by-fours staging runs with
// vec2 and vec4 fragments, with every invocation staging B and with only BN*BK/4 of them (where plain
// X goes one position at a time, and chains with shared operands by fours); batch 2, groups 2, a slice of
// channels 3.. read in place; planes of 25 (one position at a time) beside them. f32 and f16 in turn.
TEST_CASE("vector loads: pointwise Convs stage X four positions at a time on every implicit-GEMM tile, f32 and f16") {
  struct Case {
    Shape x;
    std::int64_t m, group;
    const char* chain;  // "", "bn" (scale, shift, Relu), "se" (a per-image scale), "slice" (channels 3.. and bn)
  };
  const Case cases[] = {{{2, 64, 8, 8}, 24, 1, ""},    {{1, 64, 8, 8}, 24, 1, "bn"},  {{2, 32, 6, 6}, 12, 2, "se"},
                        {{1, 64, 8, 8}, 24, 1, "slice"}, {{1, 16, 5, 5}, 24, 1, "bn"}};
  constexpr std::int64_t kParts[] = {2, 3, 4};
  std::uint32_t seed = 950;
  SUBCASE("every implicit-GEMM tile, K whole and split over workgroups") {
    for (std::size_t run = 0; run < 2 * conv_tile_count(); ++run) {
      const std::size_t tile = run / 2;
      const std::int64_t parts = run % 2 ? kParts[tile % std::size(kParts)] : 1;
      const ScopedConvTile forced(tile, parts);
      const DType dtype = (tile + run) % 2 ? DType::kF16 : DType::kF32;
      for (const Case& c : cases) {
        const std::string chain = c.chain;
        const std::string what = std::string(dtype_name(dtype)) + " tile " + std::to_string(tile) + " parts " +
                                 std::to_string(parts) + " " + shape_to_string(c.x) + " " + chain;
        CAPTURE(what);
        const std::int64_t n = c.x[0], ch = c.x[1];
        GraphBuilder b;
        std::map<std::string, Shape> shapes{{"w", {c.m, ch / c.group, 1, 1}}, {"bias", {c.m}}};
        Tensor x;
        if (chain == "slice") {
          const Shape whole{n, ch + 5, c.x[2], c.x[3]};
          shapes["x"] = whole;
          const float end = 3.0f + static_cast<float>(ch);
          x = b.op("Slice", {b.input("x", whole, dtype)}, {{"axis", 1.0f}, {"start", 3.0f}, {"end", end}});
        } else {
          shapes["x"] = c.x;
          x = b.input("x", c.x, dtype);
        }
        if (chain == "bn" || chain == "slice") {
          shapes["scale"] = {ch, 1, 1};
          shapes["shift"] = {1, ch, 1, 1};
          x = b.op("Relu", {b.op("Add", {b.op("Mul", {x, b.input("scale", shapes["scale"], dtype)}),
                                         b.input("shift", shapes["shift"], dtype)})});
        }
        if (chain == "se") {
          shapes["se"] = {n, ch, 1, 1};
          x = b.op("Mul", {x, b.input("se", shapes["se"], dtype)});
        }
        b.output(b.op("Conv", {x, b.input("w", shapes["w"], dtype), b.input("bias", shapes["bias"], dtype)},
                      {{"group", static_cast<float>(c.group)}}),
                 "y");
        const Graph graph = build_graph(b);
        std::mt19937 rng(seed++);
        std::map<std::string, HostTensor> feeds;
        for (const auto& [name, shape] : shapes) feeds.emplace(name, random_tensor(shape, dtype, kUnit, rng));
        const bool f16 = dtype == DType::kF16;
        const FusionOutcome o = check_fused_unfused(graph, feeds, f16 ? 3e-2 : 1e-5, f16 ? 1e-2 : 1e-4);
        // The cooperative-matrix root (f16 where the device has it) takes no chains in its loads.
        if (!(f16 && gpu_context().impl()->plan.coopmat_f16)) CHECK(o.fused_dispatches == 1u);
      }
    }
  }
  SUBCASE("the tiles the Conv chooses itself, 56x56 planes") {
    for (const char* chain : {"", "bn"}) {
      CAPTURE(chain);
      GraphBuilder b;
      Tensor x = b.input("x", {1, 64, 56, 56});
      if (std::string(chain) == "bn")
        x = b.op("Relu", {b.op("Add", {b.op("Mul", {x, b.input("scale", {64, 1, 1})}), b.input("shift", {64, 1, 1})})});
      b.output(b.op("Conv", {x, b.input("w", {64, 64, 1, 1}), b.input("bias", {64})}), "y");
      const auto feeds = random_feeds(
          {{"x", {1, 64, 56, 56}}, {"w", {64, 64, 1, 1}}, {"bias", {64}}, {"scale", {64, 1, 1}}, {"shift", {64, 1, 1}}},
          seed++, kUnit);
      std::map<std::string, HostTensor> used;
      for (const auto& [name, tensor] : feeds)
        if (std::string(chain) == "bn" || (name != "scale" && name != "shift")) used.emplace(name, tensor);
      const FusionOutcome o = check_fused_unfused(build_graph(b), used, 1e-5, 1e-4);
      CHECK(o.fused_dispatches == 1u);
    }
  }
}

TEST_CASE("elements in loads: a depthwise Conv -> Clip runs in the pointwise Conv's loads, f32 and f16") {
  // x ─ Conv(depthwise) ─ Clip ─ Conv(1x1) ─ Add(skip) ─ y: one dispatch, the depthwise output never
  // stored. 96 channels: K split across workgroups (choose_computed_parts) on the f32 implicit GEMM.
  struct Case {
    std::int64_t n, c, h, w, m, kh;
    std::vector<Attr> window;
    bool bias, clip;
  };
  const Case cases[] = {
      {1, 7, 9, 8, 13, 3, {{"pads", Ints{1, 1, 1, 1}}}, true, true},
      {2, 13, 11, 10, 7, 3, {{"strides", Ints{2, 2}}, {"pads", Ints{2, 1, 0, 1}}, {"dilations", Ints{2, 1}}}, false, true},
      {1, 13, 7, 9, 5, 5, {{"pads", Ints{2, 0, 2, 1}}}, true, false},
      {1, 96, 6, 5, 9, 3, {{"pads", Ints{1, 1, 1, 1}}}, true, true},
  };
  std::uint32_t seed = 900;
  for (DType dtype : {DType::kF32, DType::kF16}) {
    for (const Case& c : cases) {
      const std::string what = std::string(dtype_name(dtype)) + " n" + std::to_string(c.n) + " c" + std::to_string(c.c);
      CAPTURE(what);
      const Shape xs{c.n, c.c, c.h, c.w}, dws{c.c, 1, c.kh, 3}, pws{c.m, c.c, 1, 1};
      GraphBuilder b;
      const Tensor x = b.input("x", xs, dtype), dw = b.input("dw", dws, dtype), pw = b.input("pw", pws, dtype);
      std::vector<Attr> attrs = c.window;
      attrs.push_back({"group", static_cast<float>(c.c)});
      std::vector<Tensor> dw_inputs{x, dw};
      if (c.bias) dw_inputs.push_back(b.input("db", {c.c}, dtype));
      Tensor mid = b.op("Conv", dw_inputs, attrs);
      if (c.clip) mid = b.op("Clip", {mid}, {{"min", -0.5f}, {"max", 0.75f}});
      const Tensor y = b.op("Conv", {mid, pw, b.input("pb", {c.m}, dtype)});
      const Shape ys = b.shape(y);
      b.output(b.op("Add", {y, b.input("skip", ys, dtype)}), "y");
      const Graph graph = build_graph(b);
      std::mt19937 rng(seed++);
      std::map<std::string, HostTensor> feeds;
      for (const auto& [name, shape] : std::vector<std::pair<std::string, Shape>>{
               {"x", xs}, {"dw", dws}, {"pw", pws}, {"db", {c.c}}, {"pb", {c.m}}, {"skip", ys}})
        if (name != "db" || c.bias) feeds.emplace(name, random_tensor(shape, dtype, kUnit, rng));
      const bool f16 = dtype == DType::kF16;
      const FusionOutcome o = check_fused_unfused(graph, feeds, f16 ? 3e-2 : 1e-5, f16 ? 1e-2 : 1e-4);
      // The cooperative-matrix root (f16 where the device has it) takes no elements in its loads.
      const bool coopmat = f16 && gpu_context().impl()->plan.coopmat_f16;
      CHECK(o.fused_dispatches == (coopmat ? 2u : 1u));
      CHECK(o.unfused_dispatches == (c.clip ? 4u : 3u));
    }
  }
}

TEST_CASE("elements in loads: a MaxPool or AveragePool runs in the 1x1 Conv's loads, f32 and f16") {
  // x ─ MaxPool / AveragePool ─ Conv(1x1, bias) ─ Relu ─ y: one dispatch, the pooled tensor never stored.
  // Windows with padding, strides, dilation, ceil_mode (a window past the end pad) and count_include_pad;
  // odd channel counts; 96 channels split K across workgroups on the f32 implicit GEMM.
  struct Case {
    const char* op;
    std::int64_t n, c, h, w, m;
    std::vector<Attr> window;
  };
  const Case cases[] = {
      {"MaxPool", 1, 13, 9, 8, 7, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{1, 1}}, {"pads", Ints{1, 1, 1, 1}}}},
      {"MaxPool", 2, 7, 11, 10, 13,
       {{"kernel_shape", Ints{3, 2}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 0, 0, 1}}, {"dilations", Ints{2, 1}},
        {"ceil_mode", 1.0f}}},
      {"AveragePool", 1, 13, 10, 9, 5,
       {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}, {"ceil_mode", 1.0f},
        {"count_include_pad", 1.0f}}},
      {"AveragePool", 2, 96, 6, 7, 9, {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"pads", Ints{0, 1, 0, 1}}}},
  };
  std::uint32_t seed = 920;
  for (DType dtype : {DType::kF32, DType::kF16}) {
    for (const Case& c : cases) {
      const std::string what = std::string(dtype_name(dtype)) + " " + c.op + " n" + std::to_string(c.n) + " c" + std::to_string(c.c);
      CAPTURE(what);
      const Shape xs{c.n, c.c, c.h, c.w}, ws{c.m, c.c, 1, 1};
      GraphBuilder b;
      const Tensor x = b.input("x", xs, dtype);
      const Tensor pooled = b.op(c.op, {x}, c.window);
      b.output(b.op("Relu", {b.op("Conv", {pooled, b.input("w", ws, dtype), b.input("bias", {c.m}, dtype)})}), "y");
      const Graph graph = build_graph(b);
      std::mt19937 rng(seed++);
      std::map<std::string, HostTensor> feeds;
      feeds.emplace("x", random_tensor(xs, dtype, kUnit, rng));
      feeds.emplace("w", random_tensor(ws, dtype, kUnit, rng));
      feeds.emplace("bias", random_tensor({c.m}, dtype, kUnit, rng));
      const bool f16 = dtype == DType::kF16;
      const FusionOutcome o = check_fused_unfused(graph, feeds, f16 ? 3e-2 : 1e-5, f16 ? 1e-2 : 1e-4);
      // The cooperative-matrix root (f16 where the device has it) takes no elements in its loads.
      const bool coopmat = f16 && gpu_context().impl()->plan.coopmat_f16;
      CHECK(o.fused_dispatches == (coopmat ? 2u : 1u));
      CHECK(o.unfused_dispatches == 3u);
    }
  }
}

TEST_CASE("a squeeze-and-excitation block: its 1x1 Convs over the pooled vector, f32 and f16") {
  // x ─ GlobalAveragePool ─ Conv(1x1) ─ act ─ Conv(1x1) ─ gate ─ Mul(x) ─ Conv(1x1) ─ y. The small blocks
  // run the pooling and both Convs as one vector group (roots/vector_chain.glsl), then Mul -> Conv: two
  // dispatches. The 576-channel block is past the vector stages' limits: up to 4 images its two Convs
  // over 1x1 images run on the skinny GEMM root, with their bias and activation in its stores (tests/unit
  // "a 1x1 Conv over 1x1 images runs on the skinny GEMM root" checks the root). Odd channel counts and
  // hidden widths (13, 7); the 576-channel block's first Conv without a bias.
  struct Case {
    std::int64_t n, c, hidden;
    bool silu;  // SiLU (Sigmoid -> Mul) and Sigmoid as efficientnet_b0's; else Relu and HardSigmoid
  };
  const Case cases[] = {{1, 52, 13, false}, {3, 30, 7, true}, {1, 576, 144, false}, {5, 52, 13, true}};
  std::uint32_t seed = 950;
  for (DType dtype : {DType::kF32, DType::kF16}) {
    for (const Case& c : cases) {
      const std::string what = std::string(dtype_name(dtype)) + " n" + std::to_string(c.n) + " c" + std::to_string(c.c);
      CAPTURE(what);
      const Shape xs{c.n, c.c, 5, 3}, w1s{c.hidden, c.c, 1, 1}, w2s{c.c, c.hidden, 1, 1}, w3s{7, c.c, 1, 1};
      GraphBuilder b;
      const Tensor x = b.input("x", xs, dtype);
      const Tensor pooled = b.op("GlobalAveragePool", {x});
      const bool fc1_bias = c.c != 576;
      std::vector<Tensor> fc1_inputs{pooled, b.input("w1", w1s, dtype)};
      if (fc1_bias) fc1_inputs.push_back(b.input("b1", {c.hidden}, dtype));
      const Tensor fc1 = b.op("Conv", fc1_inputs);
      const Tensor hidden = c.silu ? b.op("Mul", {fc1, b.op("Sigmoid", {fc1})}) : b.op("Relu", {fc1});
      const Tensor fc2 = b.op("Conv", {hidden, b.input("w2", w2s, dtype), b.input("b2", {c.c}, dtype)});
      const Tensor gate = c.silu ? b.op("Sigmoid", {fc2}) : b.op("HardSigmoid", {fc2});
      b.output(b.op("Conv", {b.op("Mul", {x, gate}), b.input("w3", w3s, dtype)}), "y");
      const Graph graph = build_graph(b);
      std::mt19937 rng(seed++);
      std::map<std::string, HostTensor> feeds;
      for (const auto& [name, shape] : std::vector<std::pair<std::string, Shape>>{
               {"x", xs}, {"w1", w1s}, {"b1", {c.hidden}}, {"w2", w2s}, {"b2", {c.c}}, {"w3", w3s}})
        if (name != "b1" || fc1_bias) feeds.emplace(name, random_tensor(shape, dtype, kUnit, rng));
      const bool f16 = dtype == DType::kF16;
      const FusionOutcome o = check_fused_unfused(graph, feeds, f16 ? 3e-2 : 1e-5, f16 ? 1e-2 : 1e-4);
      CHECK(o.fused_dispatches == (c.c == 576 ? 4u : 2u));
      CHECK(o.unfused_dispatches == (c.silu ? 8u : 7u));
    }
  }
}

TEST_CASE("vector chains: reductions and products per image in one dispatch, f32 and f16") {
  // Each graph is one vector group fused (one dispatch) against one dispatch per op unfused and the CPU
  // reference: a max over the spatial axes then two 1x1 Convs (3 images, one without a bias), Gemms
  // with B either way round and a per-row scale after (2 rows), a sum over the last axis of a 3-D tensor
  // feeding a Gemm with C. Rows long (300 elements) and short (300 rows of 6), so that both ways of
  // folding a row (a subgroup each, an invocation each) run where the device has subgroup arithmetic.
  using Inputs = std::vector<std::pair<std::string, Shape>>;
  std::uint32_t seed = 980;
  auto check = [&](DType dtype, const Inputs& inputs, const std::function<Tensor(GraphBuilder&, std::map<std::string, Tensor>&)>& body,
                   std::uint32_t unfused, double atol) {
    GraphBuilder b;
    std::map<std::string, Tensor> in;
    std::map<std::string, HostTensor> feeds;
    std::mt19937 rng(seed++);
    for (const auto& [name, shape] : inputs) {
      in[name] = b.input(name, shape, dtype);
      feeds.emplace(name, random_tensor(shape, dtype, kUnit, rng));
    }
    b.output(body(b, in), "y");
    const bool f16 = dtype == DType::kF16;
    const FusionOutcome o = check_fused_unfused(build_graph(b), feeds, f16 ? 5e-2 : atol, f16 ? 1e-2 : 1e-4);
    CHECK(o.fused_dispatches == 1);
    CHECK(o.unfused_dispatches == unfused);
  };
  for (DType dtype : {DType::kF32, DType::kF16}) {
    CAPTURE(dtype_name(dtype));
    check(dtype, Inputs{{"x", {3, 13, 5, 3}}, {"w1", {7, 13, 1, 1}}, {"w2", {13, 7, 1, 1}}, {"b2", {13}}},
          [](GraphBuilder& b, std::map<std::string, Tensor>& in) {
            const Tensor m = b.op("ReduceMax", {in["x"]}, {{"axes", Ints{2, 3}}, {"keepdims", 1.0f}});
            const Tensor h = b.op("Relu", {b.op("Conv", {m, in["w1"]})});
            return b.op("Sigmoid", {b.op("Conv", {h, in["w2"], in["b2"]})});
          },
          5, 1e-5);
    check(dtype, Inputs{{"x", {2, 300}}, {"w1", {300, 24}}, {"c1", {24}}, {"w2", {9, 24}}, {"scale", {9}}},
          [](GraphBuilder& b, std::map<std::string, Tensor>& in) {
            const Tensor h = b.op("Tanh", {b.op("Gemm", {in["x"], in["w1"], in["c1"]})});
            return b.op("Mul", {b.op("Gemm", {h, in["w2"]}, {{"transB", 1.0f}}), in["scale"]});
          },
          4, 1e-5);
    check(dtype, Inputs{{"x", {2, 6, 300}}, {"w", {6, 300}}, {"c", {1, 300}}},
          [](GraphBuilder& b, std::map<std::string, Tensor>& in) {
            const Tensor s = b.op("ReduceSum", {in["x"]}, {{"axes", Ints{2}}, {"keepdims", 0.0f}});
            return b.op("Gemm", {s, in["w"], in["c"]});
          },
          2, 1e-4);
  }
}

// Graphs where a vector chain must not form (tests/unit "vector chains: ..." pins the groups): a stage's
// vector also read as the product's matrix, a product group storing two values, a product computed in
// another Conv's loads. Each must still run and match, fused and unfused (the review of 99ba5bc found
// the first crashing and the other two failing session creation).
TEST_CASE("vector chains: graphs that keep their groups still run and match") {
  SUBCASE("a Gram matrix of a reduction: Gemm(s, s, transB)") {
    GraphBuilder b;
    const Tensor s = b.op("ReduceSum", {b.input("x", {4, 4, 8})}, {{"axes", Ints{2}}, {"keepdims", 0.0f}});
    b.output(b.op("Gemm", {s, s}, {{"transB", 1.0f}}), "y");
    const FusionOutcome o = check_fused_unfused(build_graph(b), random_feeds({{"x", {4, 4, 8}}}, 990, kUnit), 1e-5, 1e-4);
    CHECK(o.fused_dispatches == 2);
  }
  SUBCASE("logits and their Tanh both graph outputs") {
    GraphBuilder b;
    const Tensor flat = b.op("Flatten", {b.op("GlobalAveragePool", {b.input("x", {2, 13, 4, 4})})}, {{"axis", 1.0f}});
    const Tensor logits = b.op("Gemm", {flat, b.input("w", {10, 13})}, {{"transB", 1.0f}});
    b.output(logits, "raw");
    b.output(b.op("Tanh", {logits}), "y");
    const FusionOutcome o =
        check_fused_unfused(build_graph(b), random_feeds({{"x", {2, 13, 4, 4}}, {"w", {10, 13}}}, 991, kUnit), 1e-5, 1e-4);
    CHECK(o.fused_dispatches == 2);
  }
  SUBCASE("a one-channel Conv computed in the next Conv's loads") {
    GraphBuilder b;
    const Tensor m = b.op("ReduceMean", {b.input("x", {1, 1, 4, 4})}, {{"axes", Ints{2, 3}}, {"keepdims", 1.0f}});
    const Tensor h = b.op("Relu", {b.op("Conv", {m, b.input("w1", {8, 1, 1, 1})})});
    b.output(b.op("Conv", {h, b.input("w2", {5, 8, 1, 1})}), "y");
    const FusionOutcome o = check_fused_unfused(
        build_graph(b), random_feeds({{"x", {1, 1, 4, 4}}, {"w1", {8, 1, 1, 1}}, {"w2", {5, 8, 1, 1}}}, 992, kUnit), 1e-5, 1e-4);
    CHECK(o.fused_dispatches == 2);
  }
}

TEST_CASE("elements in loads: a depthwise multiplier, a scalar constant bias, and a consumer reading it twice") {
  SUBCASE("two output channels per input channel (W [14, 1, 3, 3], group 7)") {
    GraphBuilder b;
    const Tensor x = b.input("x", {2, 7, 6, 7}), dw = b.input("dw", {14, 1, 3, 3}), pw = b.input("pw", {6, 14, 1, 1});
    const Tensor mid = b.op("Conv", {x, dw}, {{"group", 7.0f}, {"strides", Ints{1, 2}}, {"pads", Ints{1, 1, 1, 1}}});
    b.output(b.op("Conv", {b.op("Relu", {mid}), pw}), "y");
    const FusionOutcome o = check_fused_unfused(
        build_graph(b), random_feeds({{"x", {2, 7, 6, 7}}, {"dw", {14, 1, 3, 3}}, {"pw", {6, 14, 1, 1}}}, 910, kUnit), 1e-5, 1e-4);
    CHECK(o.fused_dispatches == 1);
    CHECK(o.unfused_dispatches == 3);
  }
  SUBCASE("one channel, its bias a scalar constant, into a MatMul's A: the element still binds the bias") {
    GraphBuilder b;
    const Tensor x = b.input("x", {1, 1, 8, 8}), dw = b.input("dw", {1, 1, 3, 3}), m = b.input("m", {8, 16});
    const Tensor bias = b.constant(HostTensor::from_floats({1}, {0.375f}), "bias");
    const Tensor mid = b.op("Conv", {x, dw, bias}, {{"group", 1.0f}, {"pads", Ints{1, 1, 1, 1}}});
    b.output(b.op("MatMul", {mid, m}), "y");
    const FusionOutcome o = check_fused_unfused(
        build_graph(b), random_feeds({{"x", {1, 1, 8, 8}}, {"dw", {1, 1, 3, 3}}, {"m", {8, 16}}}, 911, kUnit), 1e-5, 1e-4);
    CHECK(o.fused_dispatches == 1);
  }
  SUBCASE("a MatMul reading the depthwise result at both arguments keeps it stored") {
    GraphBuilder b;
    const Tensor x = b.input("x", {1, 1, 8, 8}), dw = b.input("dw", {1, 1, 3, 3});
    const Tensor d = b.op("Conv", {x, dw}, {{"group", 1.0f}, {"pads", Ints{1, 1, 1, 1}}});
    b.output(b.op("MatMul", {b.op("Clip", {d}, {{"min", -0.5f}, {"max", 0.5f}}), d}), "y");
    const FusionOutcome o =
        check_fused_unfused(build_graph(b), random_feeds({{"x", {1, 1, 8, 8}}, {"dw", {1, 1, 3, 3}}}, 912, kUnit), 1e-5, 1e-4);
    CHECK(o.fused_dispatches == 2);
  }
}

// Element rows (tests/unit "element rows: a depthwise Conv and the LayerNormalization of its
// channels-last view are one dispatch"): the Conv's elements computed into blocks of rows in shared
// memory and walked through the LayerNormalization, one dispatch: one element at a time (47 positions
// a row, odd channels, blocks of 32 rows), runs of 2 (a 5x5 window over rows of 26) and runs of 4 (two
// images, stride 2 to rows of 20, blocks of 8 rows), a MaxPool's elements. Fused vs unfused vs the CPU
// reference, f32 and f16.
TEST_CASE("element rows: a depthwise Conv and the LayerNormalization of its channels-last view run as one dispatch") {
  auto block = [](Shape x, std::int64_t k, std::vector<Attr> window) {
    return [=](GraphBuilder& b, const InputMaker& input) {
      const std::int64_t c = x[1];
      std::vector<Attr> attrs = window;
      attrs.push_back({"group", static_cast<float>(c)});
      const Tensor conv = b.op("Conv", {input("x", x), input("dw", {c, 1, k, k}), input("db", {c})}, attrs);
      const Tensor t = b.op("Transpose", {conv}, {{"perm", Ints{0, 2, 3, 1}}});
      b.output(b.op("LayerNormalization", {t, input("g", {c}), input("beta", {c})}, {{"axis", -1.0f}}), "y");
    };
  };
  SUBCASE("13 channels, 48 x 47 positions: one element at a time") {
    check_f32_f16(block({1, 13, 48, 47}, 3, {{"pads", Ints{1, 1, 1, 1}}}), 1, 2000);
  }
  SUBCASE("a 5x5 window over rows of 26: runs of 2") {
    check_f32_f16(block({1, 5, 30, 26}, 5, {{"pads", Ints{2, 2, 2, 2}}}), 1, 2001);
  }
  SUBCASE("2 images of 7 channels, stride 2 to rows of 20: runs of 4") {
    check_f32_f16(block({2, 7, 40, 40}, 3, {{"strides", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}), 1, 2002);
  }
  SUBCASE("a MaxPool's elements (no runs)") {
    check_f32_f16([](GraphBuilder& b, const InputMaker& input) {
      const Tensor pool = b.op("MaxPool", {input("x", {1, 9, 32, 32})},
                               {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{1, 1}}, {"pads", Ints{1, 1, 1, 1}}});
      const Tensor t = b.op("Transpose", {pool}, {{"perm", Ints{0, 2, 3, 1}}});
      b.output(b.op("LayerNormalization", {t, input("g", {9}), input("beta", {9})}, {{"axis", -1.0f}}), "y");
    }, 1, 2003);
  }
}

// Graphs near element rows that must plan and run as before: the LayerNormalization's values also
// recomputed by another reader's group; a Relu between the Conv and a view whose shape is the Conv's
// (square planes, Transpose(0, 1, 3, 2)). Fused vs unfused vs the CPU reference, f32 and f16.
TEST_CASE("element rows: graphs that keep the Conv and the chain apart still run and match") {
  SUBCASE("the chain's values read by a pooling of another group") {
    check_f32_f16([](GraphBuilder& b, const InputMaker& input) {
      const Tensor conv = b.op("Conv", {input("x", {1, 6, 24, 24}), input("dw", {6, 1, 3, 3})},
                               {{"group", 6.0f}, {"pads", Ints{1, 1, 1, 1}}});
      const Tensor t = b.op("Transpose", {conv}, {{"perm", Ints{0, 2, 3, 1}}});
      const Tensor y = b.op("LayerNormalization", {t, input("g", {6}), input("beta", {6})}, {{"axis", -1.0f}});
      b.output(y, "y");
      b.output(b.op("ReduceMean", {y}, {{"axes", Ints{1, 2}}, {"keepdims", 1.0f}}), "pooled");
    }, 2, 2004);
  }
  SUBCASE("a Relu between the Conv and a view of the Conv's shape") {
    check_f32_f16([](GraphBuilder& b, const InputMaker& input) {
      const Tensor conv = b.op("Conv", {input("x", {1, 24, 24, 24}), input("dw", {24, 1, 3, 3})},
                               {{"group", 24.0f}, {"pads", Ints{1, 1, 1, 1}}});
      const Tensor t = b.op("Transpose", {b.op("Relu", {conv})}, {{"perm", Ints{0, 1, 3, 2}}});
      b.output(b.op("LayerNormalization", {t, input("g", {24}), input("beta", {24})}, {{"axis", -1.0f}}), "y");
    }, 2, 2005);
  }
}

}  // namespace vkfuse::testing
