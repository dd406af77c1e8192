// Fused vs unfused vs the CPU reference, for every fusion rule: elementwise chains and DAGs,
// multi-output groups, broadcast splits, views, and reductions with chains on both sides.
#include <doctest/doctest.h>

#include <random>

#include "host/context_impl.h"
#include "host/demo_models.h"
#include "support/fusion_check.h"
#include "support/gpu_context.h"

namespace vkfuse::testing {
TEST_CASE("random elementwise chains: one dispatch fused, one per op unfused, all equal") {
  const char* kUnary[] = {"Relu", "Abs", "Neg", "Sigmoid", "Tanh", "Softsign", "HardSigmoid", "HardSwish", "Silu", "Sin"};
  const char* kBinary[] = {"Add", "Sub", "Mul", "Max", "Min"};
  for (std::uint32_t seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    GraphBuilder b;
    const Tensor x = b.input("x", {7, 13});
    const Tensor y = b.input("y", {13});  // broadcast along rows
    Tensor t = x;
    const int length = 8 + static_cast<int>(seed);
    for (int i = 0; i < length; ++i) {
      if (rng() % 3 == 0) t = b.op(kBinary[rng() % 5], {t, rng() % 2 ? y : b.scalar(0.75f)});
      else t = b.op(kUnary[rng() % 10], {t});
    }
    b.output(t, "out");
    auto graph = b.build();
    REQUIRE(graph.ok());
    const FusionOutcome o = check_fused_unfused(*graph, random_feeds({{"x", {7, 13}}, {"y", {13}}}, seed), 1e-5, 1e-4);
    CHECK(o.fused_dispatches == 1);
    CHECK(o.unfused_dispatches == static_cast<std::size_t>(length));
  }
}

TEST_CASE("a diamond with an intermediate graph output is one group with two outputs") {
  GraphBuilder b;
  const Tensor x = b.input("x", {127});
  const Tensor e = b.op("Exp", {b.op("Mul", {x, b.scalar(0.5f)})});
  const Tensor left = b.op("Mul", {e, x});
  const Tensor right = b.op("Add", {e, b.scalar(1.0f)});
  b.output(e, "e");
  b.output(b.op("Div", {left, right}), "out");
  auto graph = b.build();
  REQUIRE(graph.ok());
  const FusionOutcome o = check_fused_unfused(*graph, random_feeds({{"x", {127}}}, 3), 1e-5, 1e-4);
  CHECK(o.fused_dispatches == 1);
  CHECK(o.unfused_dispatches == 5);
}

TEST_CASE("a cheap chain on a small tensor broadcast into a larger one is recomputed, not stored") {
  GraphBuilder b;
  const Tensor bias = b.input("bias", {1, 13});
  const Tensor x = b.input("x", {7, 13});
  const Tensor scaled = b.op("Tanh", {b.op("Mul", {bias, b.scalar(2.0f)})});
  b.output(b.op("Relu", {b.op("Add", {x, scaled})}), "out");
  auto graph = b.build();
  REQUIRE(graph.ok());
  const FusionOutcome o = check_fused_unfused(*graph, random_feeds({{"bias", {1, 13}}, {"x", {7, 13}}}, 4), 1e-5, 1e-4);
  CHECK(o.fused_dispatches == 1);
  CHECK(o.unfused_dispatches == 4);
}

TEST_CASE("views: slices with offsets, steps and reversal read the stored tensor in place") {
  GraphBuilder g;
  const Tensor x2 = g.input("x", {5, 13});
  const Tensor rev2 = g.op("Slice", {x2}, {{"axis", 1}, {"start", -1}, {"end", -100}, {"step", -1}});
  const Tensor odd2 = g.op("Slice", {x2}, {{"axis", 1}, {"start", 1}, {"end", 13}, {"step", 2}});
  const Tensor row2 = g.op("Slice", {x2}, {{"axis", 0}, {"start", 2}, {"end", 3}});
  g.output(g.op("Add", {g.op("Mul", {rev2, g.scalar(3.0f)}), row2}), "a");
  g.output(g.op("Sub", {odd2, g.scalar(1.0f)}), "b");
  auto graph = g.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  const FusionOutcome o = check_fused_unfused(*graph, random_feeds({{"x", {5, 13}}}, 5), 1e-6, 1e-6);
  CHECK(o.fused_dispatches == 2);  // two output shapes: [5,13] and [5,6]
}

TEST_CASE("reductions take the chains before and after them, over odd sizes and axes") {
  struct Case {
    const char* reduce;
    Shape shape;
    int axis;
    int keepdims;
  };
  const Case cases[] = {
      {"ReduceSum", {13}, 0, 0},          {"ReduceSum", {7, 13}, 1, 1},   {"ReduceMean", {3, 5, 127}, 1, 0},
      {"ReduceMax", {7, 13}, -1, 1},      {"ReduceMin", {2, 5000}, 1, 0}, {"ReduceMean", {1031}, 0, 1},
      {"ReduceSum", {4, 3, 7}, 2, 1},
  };
  std::uint32_t seed = 10;
  for (const Case& c : cases) {
    CAPTURE(c.reduce);
    CAPTURE(shape_to_string(c.shape));
    GraphBuilder b;
    const Tensor x = b.input("x", c.shape);
    const Tensor pre = b.op("Add", {b.op("Mul", {x, x}), b.scalar(0.5f)});  // x^2 + 0.5 > 0
    const Tensor reduced = b.op(c.reduce, {pre}, {{"axis", static_cast<float>(c.axis)}, {"keepdims", static_cast<float>(c.keepdims)}});
    b.output(b.op("Sqrt", {b.op("Mul", {reduced, b.scalar(2.0f)})}), "out");
    auto graph = b.build();
    REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
    const FusionOutcome o = check_fused_unfused(*graph, random_feeds({{"x", c.shape}}, seed++), 1e-5, 1e-5);
    CHECK(o.fused_dispatches == 1);
    CHECK(o.unfused_dispatches == 5);
  }
}

TEST_CASE("softmax: the exp before the reduction is recomputed after it instead of stored") {
  // Rows of 131: a second walk over each row in the same dispatch recomputes the exp and divides.
  // Rows of 5000: too long for walks; the second dispatch recomputes it.
  for (const std::int64_t n : {131, 5000}) {
    CAPTURE(n);
    GraphBuilder b;
    const Tensor x = b.input("x", {5, n});
    const Tensor e = b.op("Exp", {b.op("Sub", {x, b.scalar(1.0f)})});
    const Tensor sum = b.op("ReduceSum", {e}, {{"axis", 1}, {"keepdims", 1}});
    b.output(b.op("Div", {e, sum}), "softmax");
    auto graph = b.build();
    REQUIRE(graph.ok());
    const FusionOutcome o = check_fused_unfused(*graph, random_feeds({{"x", {5, n}}}, 31), 1e-6, 1e-5);
    // [Sub -> Exp -> ReduceSum -> Div], or [Sub -> Exp -> ReduceSum] and [Sub -> Exp -> Div]
    CHECK(o.fused_dispatches == (n == 131 ? 1u : 2u));
    CHECK(o.unfused_dispatches == 4);
  }
}

TEST_CASE("row walks: reductions that need each other's results, chains between and after, odd sizes") {
  //   x ─ Mul(w) ─ t ─ ReduceMean ─ m ─ Sub(t, m) ─ d ─ Abs ─ ReduceMax ─ a ─ Add(eps) ─┐
  //                                                └──────────────────────────────────Div ─ Mul(g) ─ Tanh ─ y
  // plus the raw mean as a second output (post stage) and t itself (stored in walk 0). Rows over one
  // and over two trailing axes, 1 to 4097 elements; where rows allow walks it is one dispatch. Each
  // case combines the walks' partial results both ways: with subgroup operations where the device has
  // them, and with the shared-memory tree (the test's context then plans as a device without them).
  struct Case {
    Shape shape;
    int axis;
    std::size_t fused;
  };
  const Case cases[] = {{{7, 13}, 1, 1}, {{3, 5, 127}, 1, 1}, {{4, 1}, 1, 1}, {{2, 4097}, 1, 3}, {{1031}, 0, 1}};
  DevicePlan& plan = gpu_context().impl()->plan;
  const bool has_subgroups = plan.subgroup_arithmetic;
  std::uint32_t seed = 60;
  for (const bool subgroups : {true, false})
  for (const Case& c : cases) {
    if (subgroups && !has_subgroups) continue;
    plan.subgroup_arithmetic = subgroups;
    CAPTURE(subgroups);
    CAPTURE(shape_to_string(c.shape));
    GraphBuilder b;
    const Shape row(c.shape.begin() + c.axis, c.shape.end());
    const Tensor x = b.input("x", c.shape), w = b.input("w", row), g = b.input("g", row);
    const std::vector<Attr> rows{{"axis", static_cast<float>(c.axis)}, {"keepdims", 1.0f}};
    const Tensor t = b.op("Mul", {x, w});
    const Tensor m = b.op("ReduceMean", {t}, rows);
    const Tensor d = b.op("Sub", {t, m});
    const Tensor a = b.op("ReduceMax", {b.op("Abs", {d})}, rows);
    const Tensor scale = b.op("Add", {a, b.scalar(0.25f)});
    b.output(b.op("Tanh", {b.op("Mul", {b.op("Div", {d, scale}), g})}), "y");
    b.output(m, "mean");
    b.output(t, "t");
    auto graph = b.build();
    REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
    const FusionOutcome o =
        check_fused_unfused(*graph, random_feeds({{"x", c.shape}, {"w", row}, {"g", row}}, seed++), 1e-5, 1e-4);
    CHECK(o.fused_dispatches == c.fused);
    CHECK(o.unfused_dispatches == 9);
  }
  plan.subgroup_arithmetic = has_subgroups;
}

TEST_CASE("two reductions share one dispatch, and a pre-reduction value can be an output") {
  GraphBuilder b;
  const Tensor x = b.input("x", {6, 77});
  const Tensor e = b.op("Exp", {b.op("Neg", {b.op("Abs", {x})})});
  const Tensor sum = b.op("ReduceSum", {e}, {{"axis", 1}, {"keepdims", 0}});
  const Tensor peak = b.op("ReduceMax", {e}, {{"axis", 1}, {"keepdims", 0}});
  b.output(b.op("Div", {peak, sum}), "ratio");
  b.output(e, "e");
  auto graph = b.build();
  REQUIRE(graph.ok());
  const FusionOutcome o = check_fused_unfused(*graph, random_feeds({{"x", {6, 77}}}, 21), 1e-6, 1e-5);
  CHECK(o.fused_dispatches == 1);
}

TEST_CASE("graph inputs, constants and views can be graph outputs") {
  GraphBuilder b;
  const Tensor x = b.input("x", {4, 9});
  b.output(x, "x_again");
  b.output(b.op("Slice", {x}, {{"axis", 1}, {"start", 2}, {"end", 7}, {"step", 2}}), "cols");
  b.output(b.op("Slice", {b.op("Exp", {x})}, {{"axis", 0}, {"start", -1}}), "last_row_exp");
  b.output(b.constant(HostTensor::from_floats({3}, {1, 2, 3})), "three");
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  check_fused_unfused(*graph, random_feeds({{"x", {4, 9}}}, 41), 1e-6, 1e-6);
}

TEST_CASE("the GIoU loss is one dispatch fused, one per op unfused, and matches the reference") {
  for (const auto& size : {std::pair<std::int64_t, std::int64_t>{1, 7}, {3, 256}, {16, 1000}}) {
    const std::int64_t batch = size.first, boxes = size.second;  // variables: CAPTURE's lambda takes them (clang)
    CAPTURE(batch);
    CAPTURE(boxes);
    auto graph = build_giou_loss_graph(batch, boxes);
    REQUIRE(graph.ok());
    const FusionOutcome o = check_fused_unfused(*graph, make_giou_inputs(batch, boxes, 99), 1e-6, 1e-5);
    CHECK(o.fused_dispatches <= 2);
    CHECK(o.unfused_dispatches == 40);  // every computing op; the 8 slices are views
  }
}

}  // namespace vkfuse::testing
