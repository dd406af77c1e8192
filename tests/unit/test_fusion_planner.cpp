// FusionPlanner: group counts, labels, roots, domains and group inputs/outputs for each fusion rule
// (host/fusion_planner.h names these test cases), fused and unfused, with default and fake limits.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "backend/device_plan.h"
#include "host/demo_models.h"
#include "host/element_rows_kernel.h"
#include "host/fusion_planner.h"
#include "host/graph.h"
#include "host/passes/image_outputs.h"
#include "support/residual_stream.h"

namespace vkfuse {
namespace {

Graph build_graph(GraphBuilder& b) {
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  return std::move(graph).value();
}

FusionPlan plan(const Graph& graph, FusionMode mode = FusionMode::kFused, const DevicePlan& device = {}) {
  auto result = plan_fusion(graph_ir(graph), device, mode);
  REQUIRE_MESSAGE(result.ok(), result.status().to_string());
  return std::move(result).value();
}

// "Relu -> Mul | Add": every group's label (strings print readably when a CHECK fails).
std::string labels_of(const FusionPlan& p) {
  std::string out;
  for (const FusionGroup& g : p.groups) out += (out.empty() ? "" : " | ") + g.label;
  return out;
}

// "x, y": names of the values a group reads or writes.
std::string names(const Graph& graph, const std::vector<ValueId>& values) {
  std::string out;
  for (ValueId v : values) out += (out.empty() ? "" : ", ") + graph_ir(graph).value(v).name;
  return out;
}

}  // namespace

TEST_CASE("elementwise chain fuses into one group") {
  GraphBuilder b;
  const Tensor x = b.input("x", {7, 13}), y = b.input("y", {7, 13}), z = b.input("z", {13});  // values 0-2
  const Tensor s = b.op("Sub", {x, y});
  const Tensor m = b.op("Mul", {s, b.scalar(0.5f)});
  b.output(b.op("Add", {m, z}), "out");
  const Graph graph = build_graph(b);

  const FusionPlan fused = plan(graph);
  REQUIRE(fused.groups.size() == 1);
  const FusionGroup& g = fused.groups[0];
  CHECK(g.label == "Sub -> Mul -> Add");
  CHECK(g.root == GroupRoot::kElementwise);
  CHECK(g.domain == Shape{7, 13});
  CHECK(g.nodes == std::vector<NodeId>{0, 1, 2});
  CHECK(names(graph, g.inputs) == "x, y, const_4, z");
  CHECK(names(graph, g.outputs) == "out");
  CHECK(count_group_bindings(graph_ir(graph), g) == 4);  // x, y, z, out; the scalar is a literal
  CHECK(fused.op_count == 3);

  const FusionPlan unfused = plan(graph, FusionMode::kUnfused);
  CHECK(labels_of(unfused) == "Sub | Mul | Add");
  CHECK(unfused.op_count == 3);
  CHECK(names(graph, unfused.groups[0].outputs) == "Sub_0");
  CHECK(names(graph, unfused.groups[1].inputs) == "Sub_0, const_4");
}

TEST_CASE("multi-consumer value inside one group is not stored") {
  //   x ─ Exp ─┬─ Mul ─┐
  //            └─ Add ─┴─ Add ─ y
  GraphBuilder b;
  const Tensor x = b.input("x", {127});
  const Tensor e = b.op("Exp", {x});
  const Tensor m = b.op("Mul", {e, e});
  const Tensor a = b.op("Add", {e, b.scalar(1.0f)});
  b.output(b.op("Add", {m, a}), "y");
  const Graph graph = build_graph(b);

  const FusionPlan p = plan(graph);
  REQUIRE(p.groups.size() == 1);
  CHECK(p.groups[0].label == "Exp -> Mul -> Add -> Add");
  CHECK(names(graph, p.groups[0].inputs) == "x, const_3");
  CHECK(names(graph, p.groups[0].outputs) == "y");
  CHECK(plan(graph, FusionMode::kUnfused).groups.size() == 4);
}

TEST_CASE("value needed outside the group is a second output") {
  GraphBuilder b;
  const Tensor x = b.input("x", {3});
  const Tensor e = b.op("Exp", {x});
  b.output(e, "e");
  b.output(b.op("Neg", {b.op("Mul", {e, x})}), "y");
  const Graph graph = build_graph(b);

  const FusionPlan p = plan(graph);
  REQUIRE(p.groups.size() == 1);
  CHECK(p.groups[0].label == "Exp -> Mul -> Neg");
  CHECK(names(graph, p.groups[0].outputs) == "e, y");
  CHECK(count_group_bindings(graph_ir(graph), p.groups[0]) == 3);
}

TEST_CASE("broadcast to a larger shape starts a new group") {
  //   a[1,4] ─ Exp ─ Tanh ─ Sigmoid ─┐
  //                    b[8,4] ───────Add ─ Neg ─ y[8,4]   => [Exp -> Tanh -> Sigmoid] [Add -> Neg]
  // (the small chain costs more than recomputing it per element of [8,4] is worth)
  GraphBuilder b;
  const Tensor a = b.input("a", {1, 4}), big = b.input("b", {8, 4});
  const Tensor small = b.op("Sigmoid", {b.op("Tanh", {b.op("Exp", {a})})});
  b.output(b.op("Neg", {b.op("Add", {small, big})}), "y");
  const Graph graph = build_graph(b);

  const FusionPlan p = plan(graph);
  CHECK(labels_of(p) == "Exp -> Tanh -> Sigmoid | Add -> Neg");
  REQUIRE(p.groups.size() == 2);
  CHECK(p.groups[0].domain == Shape{1, 4});
  CHECK(p.groups[1].domain == Shape{8, 4});
  CHECK(names(graph, p.groups[0].outputs) == "Sigmoid_2");
  CHECK(names(graph, p.groups[1].inputs) == "Sigmoid_2, b");
}

TEST_CASE("cheap producers are recomputed instead of stored") {
  //   bias[1,13] ─ Mul(2) ─ Tanh ─┐
  //   x[7,13] ───────────────────Add ─ Relu ─ y    => [Mul -> Tanh -> Add -> Relu]
  GraphBuilder b;
  const Tensor bias = b.input("bias", {1, 13}), x = b.input("x", {7, 13});
  const Tensor t = b.op("Tanh", {b.op("Mul", {bias, b.scalar(2.0f)})});
  b.output(b.op("Relu", {b.op("Add", {t, x})}), "y");

  SUBCASE("the producer group disappears") {
    const Graph graph = build_graph(b);
    const FusionPlan p = plan(graph);
    CHECK(labels_of(p) == "Mul -> Tanh -> Add -> Relu");
    REQUIRE(p.groups.size() == 1);
    CHECK(p.groups[0].domain == Shape{7, 13});
    CHECK(names(graph, p.groups[0].inputs) == "bias, const_2, x");
    CHECK(names(graph, p.groups[0].outputs) == "y");
    CHECK(p.op_count == 4);
    CHECK(labels_of(plan(graph, FusionMode::kUnfused)) == "Mul | Tanh | Add | Relu");
  }
  SUBCASE("a producer that is also a graph output is stored by its own group") {
    b.output(t, "t");
    const Graph graph = build_graph(b);
    const FusionPlan p = plan(graph);
    CHECK(labels_of(p) == "Mul -> Tanh | Mul -> Tanh -> Add -> Relu");
    REQUIRE(p.groups.size() == 2);
    CHECK(names(graph, p.groups[0].outputs) == "t");
    CHECK(names(graph, p.groups[1].inputs) == "bias, const_2, x");  // recomputed, not read back
    CHECK(names(graph, p.groups[1].outputs) == "y");
    CHECK(p.op_count == 4);
  }
}

TEST_CASE("post-fusion: an elementwise chain joins a kernel op's stores") {
  //   x ─ Conv ─ Mul(scale) ─ Add(shift) ─ Relu ─ Add(skip) ─ y   => [Conv -> Mul -> Add -> Relu -> Add]
  GraphBuilder b;
  const Tensor x = b.input("x", {1, 7, 9, 9}), w = b.input("w", {13, 7, 3, 3});
  const Tensor scale = b.input("scale", {1, 13, 1, 1}), shift = b.input("shift", {13, 1, 1});
  const Tensor skip = b.input("skip", {1, 13, 9, 9});
  const Tensor conv = b.op("Conv", {x, w}, {{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}});
  const Tensor act = b.op("Relu", {b.op("Add", {b.op("Mul", {conv, scale}), shift})});

  SUBCASE("bias, activation and residual in one dispatch") {
    b.output(b.op("Add", {act, skip}), "y");
    const Graph graph = build_graph(b);
    const FusionPlan p = plan(graph);
    REQUIRE(p.groups.size() == 1);
    CHECK(p.groups[0].label == "Conv -> Mul -> Add -> Relu -> Add");
    CHECK(p.groups[0].root == GroupRoot::kKernel);
    CHECK(names(graph, p.groups[0].inputs) == "x, w, scale, shift, skip");
    CHECK(names(graph, p.groups[0].outputs) == "y");
    CHECK(labels_of(plan(graph, FusionMode::kUnfused)) == "Conv | Mul | Add | Relu | Add");
  }
  SUBCASE("the anchor's raw result, read elsewhere, is a second output") {
    b.output(b.op("Add", {act, skip}), "y");
    b.output(conv, "raw");
    const Graph graph = build_graph(b);
    const FusionPlan p = plan(graph);
    REQUIRE(p.groups.size() == 1);
    CHECK(names(graph, p.groups[0].outputs) == "raw, y");
  }
  SUBCASE("an op that broadcasts to a larger shape starts its own group") {
    const Tensor wide = b.input("wide", {2, 13, 9, 9});
    b.output(b.op("Add", {act, wide}), "y");
    const Graph graph = build_graph(b);
    CHECK(labels_of(plan(graph)) == "Conv -> Mul -> Add -> Relu | Add");
  }
}

TEST_CASE("a residual stream is stored once, not recomputed from every earlier block") {
  // convnext_tiny's block: a depthwise conv, a channels-last MatMul (Transposes are views), the result
  // scaled and added to the stream. Each x_i is read by the next block's conv and the next Add; were it
  // recomputed there, x3's readers would recompute x2, x1 and x0's blocks from their outputs.
  //   x_i ─┬─ Conv(depthwise) ─ T ─ MatMul ─ T ─ Mul(s) ─┐
  //        └──────────────────────────────────────────── Add ─ x_{i+1}
  const Graph graph = testing::build_residual_stream(8, 6, 6, 3);
  const FusionPlan p = plan(graph);
  // (The MatMul reads the transposed conv output in place: OpDef::strided_inputs; its stores run Mul
  // and Add through the Transpose after it: post-fusion through a view.)
  CHECK(labels_of(p) == "Conv | MatMul -> Mul -> Add | Conv | MatMul -> Mul -> Add | Conv | MatMul -> Mul -> Add");
  for (const FusionGroup& g : p.groups) {
    CAPTURE(g.label);
    CHECK(g.inputs.size() <= 4);  // the MatMul's operands, s and x_i: one block's tensors
  }
}

TEST_CASE("pre-fusion: a cheap chain on a kernel op's input runs in its loads") {
  //   x ─ Mul(scale) ─ Add(shift) ─ Relu ─ Conv ─ Relu ─ y   => [Mul -> Add -> Relu -> Conv -> Relu]
  GraphBuilder b;
  const Tensor x = b.input("x", {1, 7, 9, 9}), w = b.input("w", {13, 7, 3, 3});
  const Tensor scale = b.input("scale", {1, 7, 1, 1}), shift = b.input("shift", {7, 1, 1});
  const Tensor act = b.op("Relu", {b.op("Add", {b.op("Mul", {x, scale}), shift})});
  const Tensor conv = b.op("Conv", {act, w}, {{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}});

  SUBCASE("the chain's value is needed nowhere else: one dispatch") {
    b.output(b.op("Relu", {conv}), "y");
    const Graph graph = build_graph(b);
    const FusionPlan p = plan(graph);
    REQUIRE(p.groups.size() == 1);
    CHECK(p.groups[0].label == "Mul -> Add -> Relu -> Conv -> Relu");
    CHECK(p.groups[0].root == GroupRoot::kKernel);
    CHECK(names(graph, p.groups[0].inputs) == "x, scale, shift, w");
    CHECK(labels_of(plan(graph, FusionMode::kUnfused)) == "Mul | Add | Relu | Conv | Relu");
  }
  SUBCASE("a chain value that is also a graph output is stored by its own group and recomputed in the loads") {
    b.output(b.op("Relu", {conv}), "y");
    b.output(act, "act");
    const Graph graph = build_graph(b);
    CHECK(labels_of(plan(graph)) == "Mul -> Add -> Relu | Mul -> Add -> Relu -> Conv -> Relu");
  }
  SUBCASE("a chain too costly for the loads stays a group of its own") {
    b.output(b.op("Conv", {b.op("Exp", {b.op("Tanh", {act})}), w}), "y");
    const Graph graph = build_graph(b);
    CHECK(labels_of(plan(graph)) == "Mul -> Add -> Relu -> Tanh -> Exp | Conv");  // the first Conv is dead
  }
}

TEST_CASE("pre-fusion: the cooperative-matrix root takes a scale in its loads, not a BatchNorm and activation") {
  //   x ─ Mul(scale) ─ Add(shift) ─ Relu ─ Conv(1x1) ─ y   => [Mul -> Add -> Relu] [Conv]   (f16, coopmat)
  //   x ─ Mul(s) ─ Conv(1x1) ─ y                          => [Mul -> Conv]
  DevicePlan device;
  device.f16_storage = true;
  const auto f16 = DType::kF16;
  GraphBuilder b;
  const Tensor x = b.input("x", {1, 16, 8, 8}, f16), w = b.input("w", {32, 16, 1, 1}, f16);
  const Tensor scale = b.input("scale", {1, 16, 1, 1}, f16), shift = b.input("shift", {16, 1, 1}, f16);
  SUBCASE("a BatchNorm and Relu: their own dispatch") {
    b.output(b.op("Conv", {b.op("Relu", {b.op("Add", {b.op("Mul", {x, scale}), shift})}), w}), "y");
    const Graph graph = build_graph(b);
    CHECK(labels_of(plan(graph, FusionMode::kFused, device)) == "Mul -> Add -> Relu -> Conv");
    device.coopmat_f16 = true;
    CHECK(labels_of(plan(graph, FusionMode::kFused, device)) == "Mul -> Add -> Relu | Conv");
  }
  SUBCASE("a scale: in the loads") {
    b.output(b.op("Conv", {b.op("Mul", {x, scale}), w}), "y");
    device.coopmat_f16 = true;
    CHECK(labels_of(plan(build_graph(b), FusionMode::kFused, device)) == "Mul -> Conv");
  }
}

TEST_CASE("pre-fusion: an input loaded in 16-byte runs does not gather a strided view") {
  //   x[64,32] ─ Slice(every other row) ─ Identity ─ Gemm(a, .)   => [Identity] [Gemm]   (f16 coopmat, f32)
  // (Gemm reads contiguous inputs: a strided view reaches it through a copy. MatMul reads it in place.)
  DevicePlan device;
  device.f16_storage = true;
  auto every_other_row = [](GraphBuilder& g, Tensor t, std::string name = "") {
    return g.op("Slice", {t}, {{"axis", 0}, {"start", 0}, {"end", 1 << 20}, {"step", 2}}, std::move(name));
  };
  GraphBuilder b;
  const Tensor a = b.input("a", {32, 32}, DType::kF16), x = b.input("x", {64, 32}, DType::kF16);
  const Tensor strided = every_other_row(b, x);
  SUBCASE("a copy of the view") {
    b.output(b.op("Gemm", {a, strided}), "y");
    const Graph graph = build_graph(b);
    CHECK(labels_of(plan(graph, FusionMode::kFused, device)) == "Identity -> Gemm");
    device.coopmat_f16 = true;
    CHECK(labels_of(plan(graph, FusionMode::kFused, device)) == "Identity | Gemm");
  }
  SUBCASE("f32: the tiled root loads it as vec4s") {
    GraphBuilder f;
    f.output(f.op("Gemm", {f.input("a", {32, 32}), every_other_row(f, f.input("x", {64, 32}))}), "y");
    CHECK(labels_of(plan(build_graph(f))) == "Identity | Gemm");
  }
  SUBCASE("only the operand loaded in runs: A's rows of 36 halves are not 16-byte runs, B's of 32 are") {
    GraphBuilder h;
    const Tensor ha = every_other_row(h, h.input("xa", {64, 36}, DType::kF16), "a_view");
    const Tensor hb = every_other_row(h, h.input("xb", {72, 32}, DType::kF16), "b_view");
    h.output(h.op("Gemm", {ha, hb}), "y");
    device.coopmat_f16 = true;
    const Graph graph = build_graph(h);
    const FusionPlan p = plan(graph, FusionMode::kFused, device);
    REQUIRE(p.groups.size() == 2);
    CHECK(labels_of(p) == "Identity | Identity -> Gemm");
    CHECK(names(graph, p.groups[0].inputs) == "b_view");  // B's copy runs alone, A's in the loads
  }
  SUBCASE("a contiguous view (a slice at an offset) stays in the loads") {
    GraphBuilder h;
    const Tensor whole = h.input("whole", {64, 32}, DType::kF16);
    h.output(h.op("Gemm", {h.input("a", {32, 32}, DType::kF16), h.op("Slice", {whole}, {{"axis", 0}, {"start", 32}, {"end", 64}})}), "y");
    device.coopmat_f16 = true;
    CHECK(labels_of(plan(build_graph(h), FusionMode::kFused, device)) == "Identity -> Gemm");
  }
  SUBCASE("MatMul reads the views in place: no copy, one dispatch") {
    GraphBuilder h;
    const std::vector<std::int64_t> perm{1, 0, 2};
    const Tensor ha = h.op("Transpose", {h.input("xa", {32, 2, 36}, DType::kF16)}, {{"perm", perm}});
    const Tensor hb = h.op("Transpose", {h.input("xb", {36, 2, 32}, DType::kF16)}, {{"perm", perm}});
    h.output(h.op("MatMul", {ha, hb}), "y");
    device.coopmat_f16 = true;
    CHECK(labels_of(plan(build_graph(h), FusionMode::kFused, device)) == "MatMul");
  }
}

TEST_CASE("pre-fusion: an anchor does not read a wider tensor in its loads than the input it replaces") {
  //   x(f32) ─ Cast(f16) ─ Conv ─ Relu ─ y   => [Cast] [Conv -> Relu]: the Conv's window would load each
  //   f32 element for every tap and convert it (an f16 graph's first Conv)
  GraphBuilder b;
  const Tensor x = b.input("x", {1, 3, 9, 9});
  const Tensor w = b.input("w", {13, 3, 3, 3}, DType::kF16);
  const Tensor half = b.op("Cast", {x}, {{"to", static_cast<float>(DType::kF16)}});
  SUBCASE("a narrowing Cast stays its own dispatch") {
    b.output(b.op("Relu", {b.op("Conv", {half, w}, {{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}})}), "y");
    CHECK(labels_of(plan(build_graph(b))) == "Cast | Conv -> Relu");
  }
  SUBCASE("a chain after the Cast runs with it, not in the loads") {
    b.output(b.op("Conv", {b.op("Relu", {half}), w}), "y");
    CHECK(labels_of(plan(build_graph(b))) == "Cast -> Relu | Conv");
  }
}

TEST_CASE("pre-fusion: an anchor's loads do not gather a transposed view") {
  //   x[1, 6, 6, 13] ─ Transpose(0, 3, 1, 2) ─ (Identity) ─ Conv ─ y   => [Identity] [Conv]: the copy is
  //   stored once; a Slice along channels (contiguous rows) is still read in the loads
  GraphBuilder b;
  const Tensor x = b.input("x", {1, 6, 6, 13});
  SUBCASE("a transposed view is copied by a dispatch of its own") {
    const Tensor t = b.op("Transpose", {x}, {{"perm", std::vector<std::int64_t>{0, 3, 1, 2}}});
    b.output(b.op("Conv", {t, b.input("w", {7, 13, 2, 2})}, {{"strides", std::vector<std::int64_t>{2, 2}}}), "y");
    CHECK(labels_of(plan(build_graph(b))) == "Identity | Conv");
  }
  SUBCASE("a Relu that reads the transposed view is stored by its own dispatch, not run in the Conv's loads") {
    const Tensor t = b.op("Transpose", {x}, {{"perm", std::vector<std::int64_t>{0, 3, 1, 2}}});
    b.output(b.op("Conv", {b.op("Relu", {t}), b.input("w", {7, 13, 1, 1})}), "y");
    CHECK(labels_of(plan(build_graph(b))) == "Relu | Conv");
  }
  SUBCASE("a channel Slice of an NCHW tensor is still read in the loads (no over-rejection)") {
    const Tensor nchw = b.input("z", {1, 13, 6, 6});
    const Tensor half = b.op("Slice", {nchw}, {{"axis", 1}, {"start", 7}, {"end", 13}});
    b.output(b.op("Conv", {b.op("Relu", {half}), b.input("w", {7, 6, 1, 1})}), "y");
    CHECK(labels_of(plan(build_graph(b))) == "Relu -> Conv");
  }
}

TEST_CASE("elements in loads: a depthwise Conv runs in the pointwise Conv's loads") {
  //   x ─ Conv(depthwise) ─ Clip ─ Conv(1x1) ─ Relu ─ y   => [Conv -> Clip -> Conv -> Relu]
  GraphBuilder b;
  const Tensor x = b.input("x", {1, 7, 9, 9}), dw = b.input("dw", {7, 1, 3, 3});
  const Tensor dw_out = b.op("Conv", {x, dw}, {{"group", 7.0f}, {"pads", std::vector<std::int64_t>{1, 1, 1, 1}}});
  const Tensor act = b.op("Clip", {dw_out}, {{"min", 0.0f}, {"max", 6.0f}});
  auto pointwise = [&](std::int64_t m) { return b.op("Conv", {act, b.input("pw" + std::to_string(m), {m, 7, 1, 1})}); };

  SUBCASE("the depthwise group is read by the pointwise Conv alone: one dispatch") {
    b.output(b.op("Relu", {pointwise(13)}), "y");
    const Graph graph = build_graph(b);
    const FusionPlan p = plan(graph);
    REQUIRE(p.groups.size() == 1);
    CHECK(p.groups[0].label == "Conv -> Clip -> Conv -> Relu");
    CHECK(names(graph, p.groups[0].inputs) == "x, dw, pw13");
    const GraphIR& ir = graph_ir(graph);
    CHECK(ir.value(ir.node(p.groups[0].anchor).inputs[1]).name == "pw13");  // the template that runs
    CHECK(labels_of(plan(graph, FusionMode::kUnfused)) == "Conv | Clip | Conv | Relu");
  }
  SUBCASE("a value of the depthwise group read elsewhere keeps the group, and nothing is recomputed") {
    b.output(b.op("Relu", {pointwise(13)}), "y");
    b.output(act, "act");
    CHECK(labels_of(plan(build_graph(b))) == "Conv -> Clip | Conv -> Relu");
  }
  SUBCASE("two pointwise consumers: the depthwise result is stored once") {
    b.output(pointwise(13), "y");
    b.output(pointwise(5), "z");
    CHECK(labels_of(plan(build_graph(b))) == "Conv -> Clip | Conv | Conv");
  }
  SUBCASE("a consumer that loads each element once per window tap reads it stored") {
    b.output(b.op("Conv", {act, b.input("w", {13, 7, 3, 3})}), "y");
    CHECK(labels_of(plan(build_graph(b))) == "Conv -> Clip | Conv");
  }
  SUBCASE("so does one that loads it for many tiles of output channels") {
    b.output(pointwise(1024), "y");
    CHECK(labels_of(plan(build_graph(b))) == "Conv -> Clip | Conv");
  }
  SUBCASE("the cooperative-matrix root takes no elements: f16 on a device with fp16 cooperative matrices") {
    GraphBuilder h;
    const Tensor hx = h.input("x", {1, 7, 9, 9}, DType::kF16), hdw = h.input("dw", {7, 1, 3, 3}, DType::kF16);
    const Tensor hact = h.op("Clip", {h.op("Conv", {hx, hdw}, {{"group", 7.0f}})}, {{"min", 0.0f}, {"max", 6.0f}});
    h.output(h.op("Conv", {hact, h.input("pw", {13, 7, 1, 1}, DType::kF16)}), "y");
    const Graph graph = build_graph(h);
    DevicePlan device;
    device.f16_storage = true;
    CHECK(labels_of(plan(graph, FusionMode::kFused, device)) == "Conv -> Clip -> Conv");
    device.coopmat_f16 = true;
    CHECK(labels_of(plan(graph, FusionMode::kFused, device)) == "Conv -> Clip | Conv");
  }
}

TEST_CASE("elements in loads: a MaxPool or AveragePool runs in the 1x1 Conv's loads") {
  //   x ─ MaxPool(3x3, stride 1, pad 1) ─ Conv(1x1) ─ Relu ─ y   => [MaxPool -> Conv -> Relu] (googlenet's
  //   pool branch; squeezenet's MaxPool before a fire module's squeeze Conv)
  using Ints = std::vector<std::int64_t>;
  GraphBuilder b;
  const Tensor x = b.input("x", {1, 13, 9, 9});
  const Tensor pooled =
      b.op("MaxPool", {x}, {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{1, 1}}, {"pads", Ints{1, 1, 1, 1}}});
  SUBCASE("the pool is read by the Conv alone: one dispatch, the pooled tensor never stored") {
    b.output(b.op("Relu", {b.op("Conv", {pooled, b.input("w", {7, 13, 1, 1})})}), "y");
    const Graph graph = build_graph(b);
    const FusionPlan p = plan(graph);
    CHECK(labels_of(p) == "MaxPool -> Conv -> Relu");
    CHECK(names(graph, p.groups[0].inputs) == "x, w");
    CHECK(labels_of(plan(graph, FusionMode::kUnfused)) == "MaxPool | Conv | Relu");
  }
  SUBCASE("an AveragePool of stride 2 too") {
    const Tensor x2 = b.input("x2", {1, 13, 9, 9});
    const Tensor avg = b.op("AveragePool", {x2}, {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}});
    b.output(b.op("Conv", {avg, b.input("w", {5, 13, 1, 1})}), "y");
    CHECK(labels_of(plan(build_graph(b))) == "AveragePool -> Conv");
  }
  SUBCASE("a pooled tensor read by two consumers is stored once") {
    b.output(b.op("Conv", {pooled, b.input("w", {7, 13, 1, 1})}), "y");
    b.output(b.op("Conv", {pooled, b.input("w2", {5, 13, 1, 1})}), "z");
    CHECK(labels_of(plan(build_graph(b))) == "MaxPool | Conv | Conv");
  }
  SUBCASE("a pool whose input another group reads too keeps its dispatch (it runs beside that group)") {
    //   x ─ MaxPool ─ Conv(1x1) ─ y; x ─ Conv(1x1) ─ z   (googlenet's inception branches)
    b.output(b.op("Conv", {pooled, b.input("w", {7, 13, 1, 1})}), "y");
    b.output(b.op("Conv", {x, b.input("w2", {5, 13, 1, 1})}), "z");
    CHECK(labels_of(plan(build_graph(b))) == "MaxPool | Conv | Conv");
  }
  SUBCASE("a 3x3 Conv loads each element once per tap: 9 x 9 is past the budget, the pool is stored") {
    b.output(b.op("Conv", {pooled, b.input("w", {7, 13, 3, 3})}), "y");
    CHECK(labels_of(plan(build_graph(b))) == "MaxPool | Conv");
  }
}

TEST_CASE("elements in loads: a linear Resize runs in an image store's loads, not in a tiled anchor's") {
  //   x ─ Conv(1x1) ─ Resize(bilinear, x4) ─ out   => [Conv] [Resize -> ImagePalette]   (a segmentation
  //   head's upsampled scores, shown through a palette: the upsampled scores are never stored)
  using Ints = std::vector<std::int64_t>;
  GraphBuilder b;
  const Tensor scores = b.op("Conv", {b.input("x", {1, 8, 16, 16}), b.input("w", {21, 8, 1, 1})});
  const Tensor up = b.op("Resize", {scores}, {{"sizes", Ints{1, 21, 64, 64}}, {"mode", 1.0f}});
  SUBCASE("into the palette store, however large the upsampled scores") {
    b.output(up, "out");
    const Graph graph = build_graph(b);
    ImageOutput palette;
    palette.mode = ImageOutput::Mode::kPalette;
    palette.palette = {{0, 0, 0, 1}, {1, 1, 1, 1}};
    auto stored = append_image_outputs(graph_ir(graph), {{"out", palette}});
    REQUIRE_MESSAGE(stored.ok(), stored.status().to_string());
    auto fused = plan_fusion(*stored, DevicePlan{}, FusionMode::kFused);
    REQUIRE(fused.ok());
    CHECK(labels_of(*fused) == "Conv | Resize -> ImagePalette");
    auto unfused = plan_fusion(*stored, DevicePlan{}, FusionMode::kUnfused);
    REQUIRE(unfused.ok());
    CHECK(labels_of(*unfused) == "Conv | Resize | ImagePalette");
  }
  SUBCASE("a pointwise Conv reading it stores it first") {
    b.output(b.op("Conv", {up, b.input("w2", {4, 21, 1, 1})}), "y");
    CHECK(labels_of(plan(build_graph(b))) == "Conv | Resize | Conv");
  }
}

TEST_CASE("elements in loads: only a chain of the element's own shape, and plain chains stay as they were") {
  using Ints = std::vector<std::int64_t>;
  SUBCASE("an Add that broadcasts the depthwise result to a larger shape reads it stored") {
    GraphBuilder b;
    const Tensor x = b.input("x", {1, 4, 6, 6}), dw = b.input("dw", {4, 1, 3, 3}), y = b.input("y", {2, 4, 6, 6});
    const Tensor d = b.op("Conv", {x, dw}, {{"group", 4.0f}, {"pads", Ints{1, 1, 1, 1}}});
    b.output(b.op("Conv", {b.op("Add", {d, y}), b.input("pw", {5, 4, 1, 1})}), "z");
    CHECK(labels_of(plan(build_graph(b))) == "Conv | Add -> Conv");
  }
  SUBCASE("a squeeze-and-excitation Mul still runs in the next Conv's loads") {
    GraphBuilder b;
    const Tensor x = b.input("x", {1, 8, 6, 6});
    const Tensor r = b.op("Relu", {b.op("Conv", {x, b.input("w", {8, 8, 3, 3})}, {{"pads", Ints{1, 1, 1, 1}}})});
    const Tensor s = b.op("Sigmoid", {b.op("GlobalAveragePool", {r})});
    b.output(b.op("Conv", {b.op("Mul", {r, s}), b.input("pw", {4, 8, 1, 1})}), "z");
    const std::string labels = labels_of(plan(build_graph(b)));
    CAPTURE(labels);
    CHECK(labels.ends_with("| Mul -> Conv"));
  }
  SUBCASE("a MatMul reading a depthwise result at both arguments takes no element") {
    GraphBuilder b;
    const Tensor x = b.input("x", {1, 1, 8, 8}), dw = b.input("dw", {1, 1, 3, 3});
    const Tensor d = b.op("Conv", {x, dw}, {{"group", 1.0f}, {"pads", Ints{1, 1, 1, 1}}});
    b.output(b.op("MatMul", {d, d}), "z");
    CHECK(labels_of(plan(build_graph(b))) == "Conv | MatMul");
  }
}

TEST_CASE("elements in loads: a depthwise result large enough to fill the GPU is stored, not recomputed") {
  // 1 x 144 x 32 x 32 = 147456 outputs (more than 4 x 132 x 256): two dispatches; 1 x 128 x 32 x 32 fits.
  for (const std::int64_t c : {144, 128}) {
    GraphBuilder b;
    const Tensor x = b.input("x", {1, c, 32, 32}), dw = b.input("dw", {c, 1, 3, 3});
    const Tensor mid = b.op("Conv", {x, dw}, {{"group", static_cast<float>(c)}, {"pads", std::vector<std::int64_t>{1, 1, 1, 1}}});
    b.output(b.op("Conv", {mid, b.input("pw", {24, c, 1, 1})}), "y");
    CHECK(labels_of(plan(build_graph(b))) == (c == 144 ? "Conv | Conv" : "Conv -> Conv"));
  }
}

TEST_CASE("vector chains: the products of a small squeeze-and-excitation block are one dispatch") {
  //   x ─ GlobalAveragePool ─ Conv(1x1) ─ Relu ─ Conv(1x1) ─ HardSigmoid ─ Mul(x) ─ Conv(1x1) ─ y
  //     => [ReduceMean -> Conv -> Relu -> Conv -> HardSigmoid] [Mul -> Conv]
  // The stages' work per image (the pooling's c x 16 elements, each product's weights) decides: at most
  // 8192 elements each joins; past it a stage keeps its dispatch, and the products may still join.
  auto block = [](std::int64_t c, std::int64_t hidden, std::int64_t hw, bool fc1_output) {
    GraphBuilder b;
    const Tensor x = b.input("x", {1, c, hw, hw});
    const Tensor pooled = b.op("GlobalAveragePool", {x});
    const Tensor fc1 = b.op("Conv", {pooled, b.input("w1", {hidden, c, 1, 1}), b.input("b1", {hidden})});
    const Tensor act = b.op("Relu", {fc1});
    const Tensor gate = b.op("HardSigmoid", {b.op("Conv", {act, b.input("w2", {c, hidden, 1, 1}), b.input("b2", {c})})});
    b.output(b.op("Conv", {b.op("Mul", {x, gate}), b.input("w3", {5, c, 1, 1})}), "y");
    if (fc1_output) b.output(act, "hidden");
    return build_graph(b);
  };
  SUBCASE("a small block: pooling and both products in one vector group") {
    const Graph graph = block(24, 6, 4, false);
    const FusionPlan p = plan(graph);
    CHECK(labels_of(p) == "ReduceMean -> Conv -> Relu -> Conv -> HardSigmoid | Mul -> Conv");
    CHECK(p.groups[0].root == GroupRoot::kVector);
    CHECK(names(graph, p.groups[0].inputs) == "x, w1, b1, w2, b2");
    CHECK(labels_of(plan(graph, FusionMode::kUnfused)) ==
          "ReduceMean | Conv | Relu | Conv | HardSigmoid | Mul | Conv");
  }
  SUBCASE("a pooling of more than 8192 elements per image keeps its dispatch; the products join") {
    CHECK(labels_of(plan(block(24, 6, 19, false))) == "ReduceMean | Conv -> Relu -> Conv -> HardSigmoid | Mul -> Conv");
  }
  SUBCASE("products of more than 8192 weights keep their dispatches") {
    CHECK(labels_of(plan(block(288, 72, 2, false))) == "ReduceMean | Conv -> Relu | Conv -> HardSigmoid | Mul -> Conv");
  }
  SUBCASE("a stage value read elsewhere is stored: the stage does not join the next") {
    CHECK(labels_of(plan(block(24, 6, 4, true))) == "ReduceMean -> Conv -> Relu | Conv -> HardSigmoid | Mul -> Conv");
  }
  SUBCASE("a classifier head: the pooled vector flattened for a Gemm stays in the group") {
    //   x ─ GlobalAveragePool ─ Flatten ─ Gemm ─ y   => [ReduceMean -> Gemm], nothing but y stored
    GraphBuilder b;
    const Tensor x = b.input("x", {2, 13, 4, 4});
    const Tensor flat = b.op("Flatten", {b.op("GlobalAveragePool", {x})}, {{"axis", 1.0f}});
    b.output(b.op("Gemm", {flat, b.input("w", {10, 13}), b.input("c", {10})}, {{"transB", 1.0f}}), "y");
    const Graph graph = build_graph(b);
    const FusionPlan p = plan(graph);
    CHECK(labels_of(p) == "ReduceMean -> Gemm");
    CHECK(names(graph, p.groups[0].inputs) == "x, w, c");
    CHECK(names(graph, p.groups[0].outputs) == "y");
  }
  SUBCASE("a stage's vector also read as the product's matrix (a Gram matrix) stays stored") {
    //   s = ReduceSum(x); y = Gemm(s, s, transB)   => [ReduceSum] [Gemm]
    GraphBuilder b;
    const Tensor s = b.op("ReduceSum", {b.input("x", {4, 4, 8})}, {{"axes", std::vector<std::int64_t>{2}}, {"keepdims", 0.0f}});
    b.output(b.op("Gemm", {s, s}, {{"transB", 1.0f}}), "y");
    CHECK(labels_of(plan(build_graph(b))) == "ReduceSum | Gemm");
  }
  SUBCASE("a product whose group stores two values (logits and their Tanh) keeps its group") {
    GraphBuilder b;
    const Tensor flat = b.op("Flatten", {b.op("GlobalAveragePool", {b.input("x", {2, 13, 4, 4})})}, {{"axis", 1.0f}});
    const Tensor logits = b.op("Gemm", {flat, b.input("w", {10, 13})}, {{"transB", 1.0f}});
    b.output(logits, "raw");
    b.output(b.op("Tanh", {logits}), "y");
    CHECK(labels_of(plan(build_graph(b))) == "ReduceMean | Gemm -> Tanh");
  }
  SUBCASE("a product computed as an element in another Conv's loads does not join the pooling") {
    //   x[1, 1, 4, 4] ─ ReduceMean ─ Conv(W[8, 1, 1, 1]: one input channel, an element) ─ Relu ─ Conv(W[5, 8])
    //     => [ReduceMean] [Conv -> Relu -> Conv]
    GraphBuilder b;
    const Tensor m = b.op("ReduceMean", {b.input("x", {1, 1, 4, 4})}, {{"axes", std::vector<std::int64_t>{2, 3}}, {"keepdims", 1.0f}});
    const Tensor h = b.op("Relu", {b.op("Conv", {m, b.input("w1", {8, 1, 1, 1})})});
    b.output(b.op("Conv", {h, b.input("w2", {5, 8, 1, 1})}), "y");
    CHECK(labels_of(plan(build_graph(b))) == "ReduceMean | Conv -> Relu -> Conv");
  }
  SUBCASE("Gemms over the rows of a matrix, either layout of B; a MatMul is not a product per row") {
    GraphBuilder b;
    const Tensor x = b.input("x", {3, 40});
    const Tensor h = b.op("Tanh", {b.op("Gemm", {x, b.input("w1", {40, 24}), b.input("c1", {24})})});
    const Tensor g = b.op("Gemm", {h, b.input("w2", {10, 24})}, {{"transB", 1.0f}});
    b.output(b.op("MatMul", {g, b.input("w3", {10, 4})}), "y");
    CHECK(labels_of(plan(build_graph(b))) == "Gemm -> Tanh -> Gemm | MatMul");
  }
}

TEST_CASE("post-fusion: two anchors never share a group") {
  //   a ─ MatMul ─┐
  //   b ─ MatMul ─Add ─ Tanh   => [MatMul] [MatMul -> Add -> Tanh]: the Add joins one anchor and reads
  //                               the other's stored result
  GraphBuilder b;
  const Tensor a = b.input("a", {5, 6}), c = b.input("c", {5, 6}), w = b.input("w", {6, 7});
  const Tensor m1 = b.op("MatMul", {a, w}), m2 = b.op("MatMul", {c, w});
  b.output(b.op("Tanh", {b.op("Add", {m1, m2})}), "y");
  const Graph graph = build_graph(b);
  const FusionPlan p = plan(graph);
  CHECK(labels_of(p) == "MatMul | MatMul -> Add -> Tanh");
  for (const FusionGroup& g : p.groups) CHECK(g.root == GroupRoot::kKernel);
}

TEST_CASE("post-fusion: an anchor with an integer result stays alone") {
  GraphBuilder b;
  const Tensor idx = b.op("ArgMax", {b.input("x", {4, 9})}, {{"axis", 1}});
  b.output(b.op("Cast", {idx}, {{"to", static_cast<float>(DType::kF32)}}), "y");
  const Graph graph = build_graph(b);
  CHECK(labels_of(plan(graph)) == "ArgMax | Cast");
}

TEST_CASE("reduction takes the chains on both sides") {
  //   x ─ Mul ─ Add ─ ReduceSum ─ Sqrt ─ y     => [Mul -> Add -> ReduceSum -> Sqrt]
  GraphBuilder b;
  const Tensor x = b.input("x", {4, 16});
  const Tensor sq = b.op("Add", {b.op("Mul", {x, x}), b.scalar(1.0f)});
  const Tensor sum = b.op("ReduceSum", {sq}, {{"axis", 1}, {"keepdims", 0}});
  b.output(b.op("Sqrt", {sum}), "y");
  const Graph graph = build_graph(b);

  const FusionPlan p = plan(graph);
  REQUIRE(p.groups.size() == 1);
  const FusionGroup& g = p.groups[0];
  CHECK(g.root == GroupRoot::kReduce);
  CHECK(g.label == "Mul -> Add -> ReduceSum -> Sqrt");
  CHECK(g.domain == Shape{4, 16});
  CHECK(names(graph, g.inputs) == "x, const_2");
  CHECK(names(graph, g.outputs) == "y");
  CHECK(plan(graph, FusionMode::kUnfused).groups.size() == 4);
}

TEST_CASE("two reductions of one input share the group") {
  SUBCASE("a computed input") {
    GraphBuilder b;
    const Tensor e = b.op("Exp", {b.input("x", {6, 10})});
    const Tensor sum = b.op("ReduceSum", {e}, {{"axis", -1}});
    const Tensor max = b.op("ReduceMax", {e}, {{"axis", -1}});
    b.output(b.op("Div", {sum, max}), "y");
    const Graph graph = build_graph(b);
    const FusionPlan p = plan(graph);
    REQUIRE(p.groups.size() == 1);
    CHECK(p.groups[0].label == "Exp -> ReduceSum -> ReduceMax -> Div");
    CHECK(p.groups[0].root == GroupRoot::kReduce);
    CHECK(names(graph, p.groups[0].outputs) == "y");
  }
  SUBCASE("a graph input, joined by a common consumer") {
    GraphBuilder b;
    const Tensor x = b.input("x", {6, 10});
    const Tensor sum = b.op("ReduceSum", {x}, {{"axis", 1}});
    const Tensor max = b.op("ReduceMax", {x}, {{"axis", 1}});
    b.output(b.op("Sub", {sum, max}), "y");
    const Graph graph = build_graph(b);
    CHECK(labels_of(plan(graph)) == "ReduceSum -> ReduceMax -> Sub");
  }
  SUBCASE("a graph input, two graph outputs") {
    GraphBuilder b;
    const Tensor x = b.input("x", {6, 10});
    b.output(b.op("ReduceSum", {x}, {{"axis", 1}}), "sum");
    b.output(b.op("ReduceMax", {x}, {{"axis", 1}}), "max");
    const Graph graph = build_graph(b);
    // "reductions of the same input shape and axes share the group" (fusion_planner.h): one pass
    // over x computes both; two groups read x twice.
    const FusionPlan p = plan(graph);
    CHECK(labels_of(p) == "ReduceSum -> ReduceMax");
    if (p.groups.size() == 1) CHECK(names(graph, p.groups[0].outputs) == "sum, max");
  }
  SUBCASE("different axes do not share") {
    GraphBuilder b;
    const Tensor x = b.input("x", {6, 10});
    b.output(b.op("ReduceSum", {x}, {{"axis", 1}}), "rows");
    b.output(b.op("ReduceSum", {x}, {{"axis", 0}}), "all");
    const Graph graph = build_graph(b);
    const FusionPlan p = plan(graph);
    CHECK(labels_of(p) == "ReduceSum | ReduceSum");
    CHECK(names(graph, p.groups.at(0).outputs) == "rows");
    CHECK(names(graph, p.groups.at(1).outputs) == "all");
  }
}

TEST_CASE("reductions that read each other's results share a group in row passes") {
  //   x ─ ReduceMax ─ m ─ Sub(x, m) ─ Exp ─ e ─ ReduceSum ─ s ─ Log ─ Sub(x - m, log s) ─ y
  //   => [ReduceMax -> Sub -> Exp -> ReduceSum -> Log -> Sub]   (LogSoftmax: three walks over a row)
  auto build = [](const Shape& shape, float keepdims) {
    GraphBuilder b;
    const Tensor x = b.input("x", shape);
    const std::vector<Attr> rows{{"axis", -1.0f}, {"keepdims", keepdims}};
    const Tensor m = b.op("ReduceMax", {x}, rows);
    const Tensor m_row = keepdims != 0.0f ? m : b.op("Unsqueeze", {m}, {{"axes", std::vector<std::int64_t>{-1}}});
    const Tensor shifted = b.op("Sub", {x, m_row});
    const Tensor s = b.op("ReduceSum", {b.op("Exp", {shifted})}, rows);
    const Tensor s_row = keepdims != 0.0f ? s : b.op("Unsqueeze", {s}, {{"axes", std::vector<std::int64_t>{-1}}});
    b.output(b.op("Sub", {shifted, b.op("Log", {s_row})}), "y");
    return build_graph(b);
  };
  SUBCASE("short rows: one group") {
    const Graph graph = build({7, 13}, 1.0f);
    const FusionPlan p = plan(graph);
    REQUIRE(p.groups.size() == 1);
    const FusionGroup& g = p.groups[0];
    CHECK(g.root == GroupRoot::kReduce);
    CHECK(g.label == "ReduceMax -> Sub -> Exp -> ReduceSum -> Log -> Sub");
    CHECK(g.domain == Shape{7, 13});
    CHECK(names(graph, g.inputs) == "x");
    CHECK(names(graph, g.outputs) == "y");
    CHECK(plan(graph, FusionMode::kUnfused).groups.size() == 6);
  }
  SUBCASE("rows of 4096 elements still walk, rows of 4097 do not") {
    CHECK(plan(build({2, 4096}, 1.0f)).groups.size() == 1);
    CHECK(labels_of(plan(build({2, 4097}, 1.0f))) == "ReduceMax | Sub -> Exp -> ReduceSum -> Log | Sub -> Sub");
  }
  SUBCASE("reduced values without their dims do not broadcast along the rows") {
    CHECK(labels_of(plan(build({7, 13}, 0.0f))) == "ReduceMax | Sub -> Exp -> ReduceSum | Sub -> Log -> Sub");
  }
  SUBCASE("at most four walks") {
    // Five reductions, each of the previous one's result subtracted from x: walks 0..4.
    GraphBuilder b;
    const Tensor x = b.input("x", {3, 10});
    Tensor r = b.op("ReduceMean", {x}, {{"axis", 1}});
    for (int k = 0; k < 4; ++k) r = b.op("ReduceMax", {b.op("Sub", {x, r})}, {{"axis", 1}});
    b.output(r, "y");
    const FusionPlan p = plan(build_graph(b));
    CHECK(p.groups.size() == 2);
    CHECK(p.groups.at(0).label == "ReduceMean -> Sub -> ReduceMax -> Sub -> ReduceMax -> Sub -> ReduceMax");
  }
}

TEST_CASE("merging never creates a cycle between groups") {
  //   a[4,5000] ─ ReduceSum ─ r[4,1] ──────────────────────────┐
  //                           └─ Add(z[4,5000]) ─ ReduceMax ─ m ─ Mul ─ y[4,1]
  // Mul may not join r's group: that group would both feed and read m's group. (Rows this long take
  // no second walk, so Add cannot join r's group either.)
  GraphBuilder b;
  const Tensor r = b.op("ReduceSum", {b.input("a", {4, 5000})}, {{"axis", 1}});
  const Tensor m = b.op("ReduceMax", {b.op("Add", {r, b.input("z", {4, 5000})})}, {{"axis", 1}});
  b.output(b.op("Mul", {r, m}), "y");
  const Graph graph = build_graph(b);
  const FusionPlan p = plan(graph);
  CHECK(labels_of(p) == "ReduceSum | Add -> ReduceMax -> Mul");
  REQUIRE(p.groups.size() == 2);
  CHECK(names(graph, p.groups[0].outputs) == "ReduceSum_0");
  CHECK(names(graph, p.groups[1].inputs) == "ReduceSum_0, z");
  CHECK(names(graph, p.groups[1].outputs) == "y");
}

TEST_CASE("the GIoU graph is one dispatch fused and one per op unfused") {
  auto built = build_giou_loss_graph(2, 7);
  REQUIRE(built.ok());
  const Graph& graph = built.value();
  const GraphIR& ir = graph_ir(graph);
  const auto views = std::count_if(ir.nodes.begin(), ir.nodes.end(),
                                   [](const Node& n) { return n.op->kind == OpKind::kView; });
  CHECK(views == 8);
  const std::size_t computing = ir.nodes.size() - static_cast<std::size_t>(views);

  const FusionPlan fused = plan(graph);
  REQUIRE(fused.groups.size() == 1);
  CHECK(fused.groups[0].root == GroupRoot::kReduce);
  CHECK(fused.groups[0].domain == Shape{2, 7, 1});
  CHECK(fused.op_count == computing);
  // It reads the eight coordinate views of pred and target and three scalars, and no intermediate.
  CHECK(names(graph, fused.groups[0].inputs) ==
        "px2, px1, py2, py1, tx2, tx1, ty2, ty1, const_10, const_41, const_50");
  CHECK(count_group_bindings(ir, fused.groups[0]) == 3);  // the views share pred's and target's buffers
  CHECK(names(graph, fused.groups[0].outputs) == "loss");

  const FusionPlan unfused = plan(graph, FusionMode::kUnfused);
  CHECK(unfused.groups.size() == computing);
  CHECK(unfused.op_count == computing);
}

TEST_CASE("a GEMM anchor reserves the two scratch bindings of split K where the device has room") {
  //   x ─ MatMul(w) ─ Add(s0) ─ ... ─ Add(s<n-1>) ─ y   => [MatMul -> Add ...]: x, w, s0.., y, and 2 scratch
  auto build = [](int adds) {
    GraphBuilder b;
    Tensor y = b.op("MatMul", {b.input("x", {49, 96}), b.input("w", {96, 64})});
    for (int k = 0; k < adds; ++k) y = b.op("Add", {y, b.input("s" + std::to_string(k), {49, 64})});
    b.output(y, "y");
    return build_graph(b);
  };
  const Graph two = build(2);
  const FusionPlan p = plan(two);
  REQUIRE(p.groups.size() == 1);
  CHECK(count_group_bindings(graph_ir(two), p.groups[0]) == 7);  // 32 allowed: scratch reserved
  DevicePlan eight;
  eight.max_bindings = 8;
  CHECK(count_group_bindings(graph_ir(two), p.groups[0], eight) == 7);
  // Eight bindings: three Adds make 6 + 2 and fit; a fourth would make 9, so it gets a group of its own.
  CHECK(labels_of(plan(build(3), FusionMode::kFused, eight)) == "MatMul -> Add -> Add -> Add");
  CHECK(labels_of(plan(build(4), FusionMode::kFused, eight)) == "MatMul -> Add -> Add -> Add | Add");
  // Below 8 bindings no launch splits K over workgroups, so nothing is reserved.
  DevicePlan four;
  four.max_bindings = 4;
  CHECK(count_group_bindings(graph_ir(two), p.groups[0], four) == 5);
}

TEST_CASE("binding limit splits a group") {
  DeviceCaps caps;
  caps.max_workgroup_invocations = 1024;
  caps.max_workgroup_size = {1024, 1024, 64};
  caps.max_workgroup_count = {65535, 65535, 65535};
  caps.max_push_constants_bytes = 128;
  caps.max_storage_buffer_range = 1u << 27;
  caps.max_storage_buffers_per_stage = 4;
  const DevicePlan device = make_device_plan(caps);
  REQUIRE(device.max_bindings == 4);

  // y = a + b + c + d + e: 6 bindings in one group, so it splits after c.
  GraphBuilder b;
  Tensor y = b.input("a", {64});
  for (const char* name : {"b", "c", "d", "e"}) y = b.op("Add", {y, b.input(name, {64})});
  b.output(y, "y");
  const Graph graph = build_graph(b);
  CHECK(plan(graph).groups.size() == 1);

  const FusionPlan p = plan(graph, FusionMode::kFused, device);
  CHECK(labels_of(p) == "Add -> Add | Add -> Add");
  for (const FusionGroup& g : p.groups) CHECK(count_group_bindings(graph_ir(graph), g, device) <= 4);

  SUBCASE("one op over the limit is an error naming the group and the limit") {
    DevicePlan tiny;
    tiny.max_bindings = 2;
    auto result = plan_fusion(graph_ir(graph), tiny, FusionMode::kFused);
    REQUIRE_FALSE(result.ok());
    CHECK(result.status().code() == ErrorCode::kUnsupported);
    CHECK(result.status().message() ==
          "group 'Add' needs 3 storage buffers; the device allows 2 per dispatch (node 'Add_0')");
  }
}

TEST_CASE("views never dispatch") {
  GraphBuilder b;
  const Tensor x = b.input("x", {8});
  const Tensor s = b.op("Slice", {x}, {{"start", 2}, {"end", 6}});
  b.output(b.op("Add", {s, b.input("y", {4})}), "out");
  const Graph graph = build_graph(b);
  const GraphIR& ir = graph_ir(graph);
  REQUIRE(ir.node(0).op->kind == OpKind::kView);

  for (FusionMode mode : {FusionMode::kFused, FusionMode::kUnfused}) {
    const FusionPlan p = plan(graph, mode);
    REQUIRE(p.groups.size() == 1);
    CHECK(p.groups[0].nodes == std::vector<NodeId>{1});
    CHECK(p.groups[0].label == "Add");
    CHECK(names(graph, p.groups[0].inputs) == "Slice_0, y");
    CHECK(p.op_count == 1);
  }
}


TEST_CASE("groups run in dependency waves: independent branches share a level, in their graph order") {
  //   x ─ MatMul(w1) ─ MatMul(w3) ─┐
  //   x ─ MatMul(w2) ──────────────Add ─ out   => level 0: MatMul(w1), MatMul(w2)
  //   x ─ Tanh ─ Exp (stored, out2)               level 1: MatMul(w3) -> Add
  // The second branch's MatMul comes after the first branch's two in the graph; in the plan it shares
  // level 0 with the first, so one barrier separates the waves instead of one per group.
  GraphBuilder b;
  const Tensor x = b.input("x", {5, 6});
  const Tensor w1 = b.input("w1", {6, 6}), w2 = b.input("w2", {6, 6}), w3 = b.input("w3", {6, 6});
  const Tensor first = b.op("MatMul", {b.op("MatMul", {x, w1}), w3});
  const Tensor second = b.op("MatMul", {x, w2});
  b.output(b.op("Add", {first, second}), "out");
  const Graph graph = build_graph(b);
  const FusionPlan p = plan(graph);
  REQUIRE(p.groups.size() == 3);
  CHECK(labels_of(p) == "MatMul | MatMul | MatMul -> Add");
  CHECK(p.groups[0].level == 0);
  CHECK(p.groups[1].level == 0);
  CHECK(p.groups[2].level == 1);
  // The level-0 groups in graph order: MatMul(x, w1) first.
  CHECK(names(graph, p.groups[0].inputs) == "x, w1");
  CHECK(names(graph, p.groups[1].inputs) == "x, w2");
  // Unfused, the same waves: the Add reads both branches, so it waits for the last.
  const FusionPlan u = plan(graph, FusionMode::kUnfused);
  REQUIRE(u.groups.size() == 4);
  std::vector<std::size_t> levels;
  for (const FusionGroup& g : u.groups) levels.push_back(g.level);
  CHECK(levels == std::vector<std::size_t>{0, 0, 1, 2});
}

TEST_CASE("Concat in place: a dense block's Concats share the last one's buffer") {
  //   x0 = Relu(Conv(x)) ─ Mul(s0) ─ Relu ─ Conv(w1) ─ f1 ─┐
  //   x0 ─────────────────────────────────────────────────┴─ Concat c1 ─ Mul(s1) ─ Relu ─ Conv(w2) ─ f2 ─┐
  //   x0, f1 ────────────────────────────────────────────────────────────────────────────────────────────┴─ Concat c2
  //   c2 ─ Mul(s2) ─ Relu ─ Conv(w3) ─ y
  // At batch 1, c1 is c2's leading elements: x0, f1 and f2 are stored into c2's slices, c1's readers bind
  // c2's first bytes, x0's other reader too, and neither Concat runs; each Concat's scale and Relu run in
  // the next Conv's loads. At batch 2 c1's slices are runs per image that c2's are not: both run.
  auto dense_block = [](std::int64_t n) {
    GraphBuilder b;
    const Tensor x = b.input("x", {n, 3, 5, 5});
    const Tensor x0 = b.op("Relu", {b.op("Conv", {x, b.input("w0", {6, 3, 1, 1})})});
    const Tensor f1 = b.op("Conv", {b.op("Relu", {b.op("Mul", {x0, b.input("s0", {1, 6, 1, 1})})}), b.input("w1", {3, 6, 1, 1})});
    const Tensor c1 = b.op("Concat", {x0, f1}, {{"axis", 1.0f}});
    const Tensor f2 = b.op("Conv", {b.op("Relu", {b.op("Mul", {c1, b.input("s1", {1, 9, 1, 1})})}), b.input("w2", {3, 9, 1, 1})});
    const Tensor c2 = b.op("Concat", {x0, f1, f2}, {{"axis", 1.0f}});
    b.output(b.op("Conv", {b.op("Relu", {b.op("Mul", {c2, b.input("s2", {1, 12, 1, 1})})}), b.input("w3", {2, 12, 1, 1})}), "y");
    return std::tuple(build_graph(b), x0.id, f1.id, f2.id, c1.id, c2.id);
  };
  const auto [graph, x0, f1, f2, c1, c2] = dense_block(1);
  const FusionPlan p = plan(graph);
  CHECK(labels_of(p) == "Conv -> Relu -> Mul -> Relu (into Concat) | Conv (into Concat) | Mul -> Relu -> Conv (into Concat) | "
                        "Mul -> Relu -> Conv");
  CHECK(p.prefix_of == std::map<ValueId, ValueId>{{x0, c2}, {c1, c2}});
  // Channels 0-5, 6-8 and 9-11 of 12, 25 elements each.
  const std::map<ValueId, std::int64_t> offsets{{x0, 0}, {f1, 150}, {f2, 225}};
  for (const FusionGroup& group : p.groups)
    for (const auto& stored : group.stored_in) {
      const ValueId value = stored.first;  // a plain variable: CAPTURE's lambda cannot take a binding (clang)
      const auto& slice = stored.second;
      CAPTURE(value);
      CHECK(slice.into == c2);
      CHECK(slice.placement.offset == offsets.at(value));
      CHECK(slice.placement.slice == 0);
    }
  REQUIRE(p.groups.size() == 4);
  for (std::size_t g = 0; g < 4; ++g) CHECK(p.groups[g].level == g);
  CHECK(names(graph, p.groups[2].inputs).find(graph_ir(graph).value(c1).name) != std::string::npos);  // read as c2's first bytes
  const auto [batched, bx0, bf1, bf2, bc1, bc2] = dense_block(2);
  const FusionPlan bp = plan(batched);
  CHECK(labels_of(bp) == "Conv -> Relu -> Mul -> Relu | Conv | Concat -> Mul -> Relu | Conv | Concat -> Mul -> Relu | Conv");
  CHECK(bp.prefix_of.empty());
}

// A dense block built layer by layer: x0 = Relu(Conv(x)), each layer Conv(Relu(Mul(in, s))) with 3
// outputs, its Concats as the caller chains them.
struct DenseChain {
  GraphBuilder b;
  Tensor x0;
  int layers = 0;
  DenseChain() { x0 = b.op("Relu", {b.op("Conv", {b.input("x", {1, 3, 5, 5}), b.input("w0", {6, 3, 1, 1})})}); }
  Tensor layer(const Tensor& in, std::int64_t channels) {
    const std::string k = std::to_string(layers++);
    return b.op("Conv", {b.op("Relu", {b.op("Mul", {in, b.input("s" + k, {1, channels, 1, 1})})}),
                         b.input("w" + std::to_string(layers), {3, channels, 1, 1})});
  }
  Tensor concat(const std::vector<Tensor>& parts) { return b.op("Concat", parts, {{"axis", 1.0f}}); }
  Graph finish(const Tensor& last, std::int64_t channels) {
    b.output(b.op("Conv", {last, b.input("wy", {2, channels, 1, 1})}), "y");
    return build_graph(b);
  }
};

TEST_CASE("Concat in place: a Concat that leads a later one's inputs is in the later one's family") {
  //   x0, f1 ─ Concat c1;  c1, f2 ─ Concat c2;  c1, f2, f3 ─ Concat c3 ─ Conv ─ y
  // (the ONNX importer's chained Concats of more than 16 inputs, host/onnx map_concat). At batch 1 c1 is
  // c3's leading elements and c2 is too: x0 .. f3 are stored into c3's slices, and no Concat runs.
  DenseChain d;
  const Tensor x0 = d.x0, f1 = d.layer(x0, 6);
  const Tensor c1 = d.concat({x0, f1});
  const Tensor f2 = d.layer(c1, 9);
  const Tensor c2 = d.concat({c1, f2});
  const Tensor f3 = d.layer(c2, 12);
  const Tensor c3 = d.concat({c1, f2, f3});
  const FusionPlan p = plan(d.finish(c3, 15));
  CHECK(labels_of(p) == "Conv -> Relu -> Mul -> Relu (into Concat) | Conv (into Concat) | Mul -> Relu -> Conv (into Concat) | "
                        "Mul -> Relu -> Conv (into Concat) | Conv");
  CHECK(p.prefix_of == std::map<ValueId, ValueId>{{x0.id, c3.id}, {c1.id, c3.id}, {c2.id, c3.id}});
  const std::map<ValueId, std::int64_t> offsets{{x0.id, 0}, {f1.id, 150}, {f2.id, 225}, {f3.id, 300}};
  for (const FusionGroup& group : p.groups)
    for (const auto& stored : group.stored_in) {
      const ValueId value = stored.first;  // a plain variable: CAPTURE's lambda cannot take a binding (clang)
      const auto& slice = stored.second;
      CAPTURE(value);
      CHECK(slice.into == c3.id);
      CHECK(slice.placement.offset == offsets.at(value));
    }
  // Each layer waits for the one before: c2's readers for f2's group, through c1 for x0's and f1's.
  REQUIRE(p.groups.size() == 5);
  for (std::size_t g = 0; g < 5; ++g) CHECK(p.groups[g].level == g);
}

TEST_CASE("Concat in place: leading Concats two deep (a block of more than 31 layers)") {
  //   c1 = [x0, f1];  c2 = [c1, f2];  m3 = [c2, f3];  root = [c2, f3, f4]: m3 leads with c2, which leads
  //   with c1, so m3 is read as x0, f1, f2, f3 and is the root's leading elements too.
  DenseChain d;
  const Tensor x0 = d.x0;
  const Tensor c1 = d.concat({x0, d.layer(x0, 6)});
  const Tensor c2 = d.concat({c1, d.layer(c1, 9)});
  const Tensor f3 = d.layer(c2, 12);
  const Tensor m3 = d.concat({c2, f3});
  const Tensor root = d.concat({c2, f3, d.layer(m3, 15)});
  const FusionPlan p = plan(d.finish(root, 18));
  CHECK(labels_of(p) == "Conv -> Relu -> Mul -> Relu (into Concat) | Conv (into Concat) | Mul -> Relu -> Conv (into Concat) | "
                        "Mul -> Relu -> Conv (into Concat) | Mul -> Relu -> Conv (into Concat) | Conv");
  CHECK(p.prefix_of == std::map<ValueId, ValueId>{{x0.id, root.id}, {c1.id, root.id}, {c2.id, root.id}, {m3.id, root.id}});
  REQUIRE(p.groups.size() == 6);
  for (std::size_t g = 0; g < 6; ++g) CHECK(p.groups[g].level == g);  // each layer after the one it reads
}

TEST_CASE("Concat in place: a leading Concat that lies further on in the root too leaves the root to copy") {
  //   c1 = [x0, f1];  root = [c1, g, c1]: c1's inputs could be stored at the root's start, but nothing would
  //   store the second c1. c1 goes in place (its own family); the root runs.
  DenseChain d;
  const Tensor x0 = d.x0;
  const Tensor c1 = d.concat({x0, d.layer(x0, 6)});
  const Tensor root = d.concat({c1, d.layer(x0, 6), c1});
  const FusionPlan p = plan(d.finish(root, 21));
  CHECK(labels_of(p) == "Conv -> Relu -> Mul -> Relu -> Mul -> Relu (into Concat) | Conv (into Concat) | Conv | Concat | Conv");
  CHECK(p.prefix_of == std::map<ValueId, ValueId>{{x0.id, c1.id}});
}

TEST_CASE("Concat in place: a value goes into one Concat only") {
  // Each of these went wrong (a slice nobody wrote, or a cycle of groups) before the checks in
  // place_concats_in_place and find_concat_families; tests/gpu runs the same graphs against the CPU.
  SUBCASE("two Concats start with the same value: the first goes in place, the second copies") {
    GraphBuilder b;
    const Tensor x = b.input("x", {1, 3, 4, 4});
    const Tensor x0 = b.op("Conv", {x, b.input("w0", {4, 3, 1, 1})});
    b.output(b.op("Concat", {x0, b.op("Conv", {x, b.input("wa", {3, 3, 1, 1})})}, {{"axis", 1.0f}}), "ya");
    b.output(b.op("Concat", {x0, b.op("Conv", {x, b.input("wb", {5, 3, 1, 1})})}, {{"axis", 1.0f}}), "yb");
    CHECK(labels_of(plan(build_graph(b))) == "Conv (into Concat) | Conv (into Concat) | Conv | Concat");
  }
  SUBCASE("a dense block's member that an earlier Concat reads: that Concat goes in place, the block copies") {
    //   x, y, w, z = Conv(in);  mB = Concat(x, y);  rA = Concat(mB, w) ─ Conv;  rB = Concat(x, y, z) ─ Conv
    GraphBuilder b;
    const Tensor in = b.input("in", {1, 3, 4, 4});
    auto conv = [&](const char* w, std::int64_t c) { return b.op("Conv", {in, b.input(w, {c, 3, 1, 1})}); };
    const Tensor x = conv("wx", 2), y = conv("wy", 3);
    const Tensor rA = b.op("Concat", {b.op("Concat", {x, y}, {{"axis", 1.0f}}), conv("ww", 2)}, {{"axis", 1.0f}});
    b.output(b.op("Conv", {rA, b.input("wo", {2, 7, 1, 1})}), "a");
    const Tensor rB = b.op("Concat", {x, y, conv("wz", 4)}, {{"axis", 1.0f}});
    b.output(b.op("Conv", {rB, b.input("wr", {2, 9, 1, 1})}), "b");
    const FusionPlan p = plan(build_graph(b));
    CHECK(labels_of(p) == "Conv | Conv | Conv (into Concat) | Conv | Concat (into Concat) | Concat | Conv | Conv");
    CHECK(p.prefix_of.size() == 1);  // rA's first input, mB, is read nowhere else
  }
  SUBCASE("a Concat that cannot go in place (its loads recompute an input) keeps its post chain") {
    GraphBuilder b;
    const Tensor x = b.input("x", {1, 3, 4, 4});
    b.output(b.op("Relu", {b.op("Concat", {b.op("Neg", {x}), b.op("Tanh", {x})}, {{"axis", 1.0f}})}), "y");
    CHECK(labels_of(plan(build_graph(b))) == "Tanh | Neg -> Concat -> Relu");
  }
  SUBCASE("a Concat its own root reads is not also its leading elements") {
    GraphBuilder b;
    const Tensor in = b.input("in", {1, 3, 4, 4});
    const Tensor x = b.op("Conv", {in, b.input("wx", {2, 3, 1, 1})}), y = b.op("Conv", {in, b.input("wy", {3, 3, 1, 1})});
    const Tensor r = b.op("Concat", {x, y, b.op("Concat", {x, y}, {{"axis", 1.0f}})}, {{"axis", 1.0f}});
    b.output(b.op("Conv", {r, b.input("wo", {2, 10, 1, 1})}), "a");
    CHECK(labels_of(plan(build_graph(b))) == "Conv | Conv | Concat | Concat | Conv");
  }
}

TEST_CASE("Concat in place: producers store into its slices") {
  //   x[2,3,5,4] ─ Conv(w1) ─ Relu ─┐
  //   x ────────── Conv(w2) ────────┼─ Concat(axis 1) ─ Conv(w3) ─ y     => [Conv -> Relu (into Concat)]
  //   x ────────── Sigmoid ─────────┘                                        [Conv (into Concat)]
  //                                                                          [Sigmoid (into Concat)] [Conv]
  // (A Concat that takes a chain after it, Concat -> Tanh, is a group of its own and runs.)
  GraphBuilder b;
  const Tensor x = b.input("x", {2, 3, 5, 4}), w1 = b.input("w1", {7, 3, 1, 1}), w2 = b.input("w2", {13, 3, 1, 1});
  const Tensor a = b.op("Relu", {b.op("Conv", {x, w1})}), c = b.op("Conv", {x, w2}), s = b.op("Sigmoid", {x});
  const Tensor cat = b.op("Concat", {a, c, s}, {{"axis", 1.0f}});
  b.output(b.op("Conv", {cat, b.input("w3", {5, 23, 1, 1})}), "y");
  const Graph graph = build_graph(b);
  const FusionPlan p = plan(graph);
  CHECK(labels_of(p) == "Conv -> Relu (into Concat) | Conv (into Concat) | Sigmoid (into Concat) | Conv");
  REQUIRE(p.groups.size() == 4);
  // Channels 0-6, 7-19 and 20-22 of 23, per image: runs of 7*20, 13*20 and 3*20 elements, 23*20 apart.
  const std::int64_t expected[3][2] = {{0, 140}, {140, 260}, {400, 60}};
  for (std::size_t g = 0; g < 3; ++g) {
    CAPTURE(g);
    REQUIRE(p.groups[g].stored_in.size() == 1);
    const StoredSlice& slice = p.groups[g].stored_in.begin()->second;
    CHECK(slice.into == cat.id);
    CHECK(slice.placement.offset == expected[g][0]);
    CHECK(slice.placement.slice == expected[g][1]);
    CHECK(slice.placement.stride == 460);
    CHECK(p.groups[g].level == 0);
  }
  CHECK(p.groups[3].level == 1);  // after all three slices
  CHECK(names(graph, p.groups[3].inputs) == names(graph, {cat.id}) + ", w3");
  // Unfused, and wherever an input is also read elsewhere (but as the Concat's leading elements) or is a
  // graph input, the Concat runs.
  CHECK(labels_of(plan(graph, FusionMode::kUnfused)) == "Conv | Conv | Sigmoid | Relu | Concat | Conv");
  for (bool leading : {false, true}) {
    CAPTURE(leading);
    GraphBuilder shared;
    const Tensor sx = shared.input("x", {1, 3, 5, 4}), sw = shared.input("w", {7, 3, 1, 1});
    const Tensor conv = shared.op("Conv", {sx, sw}), relu = shared.op("Relu", {conv});
    const Tensor scat = shared.op("Concat", {leading ? conv : relu, leading ? relu : conv}, {{"axis", 1.0f}});
    shared.output(scat, "y");
    const FusionPlan sp = plan(build_graph(shared));
    // Conv is read by Relu too: stored as the Concat's first channels, its other readers would bind them.
    CHECK(labels_of(sp) == (leading ? "Conv -> Relu (into Concat)" : "Conv -> Relu | Concat"));
    CHECK(sp.prefix_of == (leading ? std::map<ValueId, ValueId>{{conv.id, scat.id}} : std::map<ValueId, ValueId>{}));
  }
  GraphBuilder from_input;
  const Tensor fx = from_input.input("x", {1, 3, 5, 4}), fw = from_input.input("w", {7, 3, 1, 1});
  from_input.output(from_input.op("Concat", {from_input.op("Conv", {fx, fw}), fx}, {{"axis", 1.0f}}), "y");
  CHECK(labels_of(plan(build_graph(from_input))) == "Conv | Concat");
}

TEST_CASE("copies in place: a channel shuffle is stored by the Concat's inputs") {
  //   x[2,3,5,4] ─ Conv(w1) ─ Relu ─┐                                    [Conv -> Relu (into Identity)]
  //   x ────────── Conv(w2) ────────┴─ Concat ─ Reshape[2,2,7,5,4] ─       [Conv (into Identity)]
  //     Transpose(0,2,1,3,4) ─ (Identity) ─ Reshape[2,14,5,4] ─ Conv ─ y   [Conv]
  // The Reshape of the transpose is no view: the builder copies the transpose (Identity). Input a's
  // channel c lands at channel 2c of the copy, b's at 2c + 1: runs of 5*4 elements, 2*5*4 apart.
  auto shuffle_graph = [](bool concat_also_output) {
    GraphBuilder b;
    const Tensor x = b.input("x", {2, 3, 5, 4});
    const Tensor a = b.op("Relu", {b.op("Conv", {x, b.input("w1", {7, 3, 1, 1})})});
    const Tensor c = b.op("Conv", {x, b.input("w2", {7, 3, 1, 1})});
    const Tensor cat = b.op("Concat", {a, c}, {{"axis", 1.0f}});
    const Tensor split = b.op("Reshape", {cat}, {{"shape", std::vector<std::int64_t>{2, 2, 7, 5, 4}}});
    const Tensor t = b.op("Transpose", {split}, {{"perm", std::vector<std::int64_t>{0, 2, 1, 3, 4}}});
    const Tensor shuffled = b.op("Reshape", {t}, {{"shape", std::vector<std::int64_t>{2, 14, 5, 4}}});
    b.output(b.op("Conv", {shuffled, b.input("w3", {5, 14, 1, 1})}), "y");
    if (concat_also_output) b.output(cat, "cat");
    return build_graph(b);
  };
  const Graph graph = shuffle_graph(false);
  const FusionPlan p = plan(graph);
  CHECK(labels_of(p) == "Conv -> Relu (into Identity) | Conv (into Identity) | Conv");
  REQUIRE(p.groups.size() == 3);
  for (std::size_t g = 0; g < 2; ++g) {
    CAPTURE(g);
    REQUIRE(p.groups[g].stored_in.size() == 1);
    const StoredSlice& slice = p.groups[g].stored_in.begin()->second;
    CHECK(graph_ir(graph).node(graph_ir(graph).value(slice.into).producer).op->name == "Identity");
    CHECK(slice.placement.offset == static_cast<std::int64_t>(g) * 20);
    CHECK(slice.placement.slice == 20);
    CHECK(slice.placement.stride == 40);
    CHECK(p.groups[g].level == 0);
  }
  CHECK(p.groups[2].level == 1);  // after both
  CHECK(p.prefix_of.empty());
  // Unfused the Concat and the copy run; where the Concat is read elsewhere too, it is stored and the
  // copy runs.
  CHECK(labels_of(plan(graph, FusionMode::kUnfused)) == "Conv | Conv | Relu | Concat | Identity | Conv");
  CHECK(labels_of(plan(shuffle_graph(true))) == "Conv -> Relu (into Concat) | Conv (into Concat) | Identity | Conv");
}

TEST_CASE("copies in place: a reordered result is stored where its copy puts it") {
  // Heads merged back (vit_b_16): q[3,5,4] ─ MatMul(k[3,4,5]) ─ MatMul(v[3,5,4]) ─ h[3,5,4] ─
  //   Transpose(1,0,2) ─ (Identity) ─ Reshape[5,12] ─ MatMul(w[12,6]) ─ y
  //   => [MatMul] [MatMul (into Identity)] [MatMul]: head a's row r lands at r * 12 + a * 4.
  GraphBuilder b;
  const Tensor q = b.input("q", {3, 5, 4}), k = b.input("k", {3, 4, 5}), v = b.input("v", {3, 5, 4});
  const Tensor h = b.op("MatMul", {b.op("MatMul", {q, k}), v});
  const Tensor t = b.op("Transpose", {h}, {{"perm", std::vector<std::int64_t>{1, 0, 2}}});
  const Tensor merged = b.op("Reshape", {t}, {{"shape", std::vector<std::int64_t>{5, 12}}});
  b.output(b.op("MatMul", {merged, b.input("w", {12, 6})}), "y");
  const Graph graph = build_graph(b);
  const FusionPlan p = plan(graph);
  CHECK(labels_of(p) == "MatMul | MatMul (into Identity) | MatMul");
  REQUIRE(p.groups.size() == 3);
  REQUIRE(p.groups[1].stored_in.size() == 1);
  CHECK(p.groups[1].stored_in.begin()->first == h.id);
  CHECK(p.groups[1].stored_in.begin()->second.placement ==
        ElementPlacement{.offset = 0, .slice = 4, .stride = 12, .blocks = {{20, 4}}});
  CHECK(p.groups[2].level == p.groups[1].level + 1);
  CHECK(labels_of(plan(graph, FusionMode::kUnfused)) == "MatMul | MatMul | Identity | MatMul");
  // A graph output read through a Flatten: the product stores into the output itself.
  GraphBuilder f;
  const Tensor m = f.op("MatMul", {f.input("a", {2, 3, 4}), f.input("c", {4, 5})});
  f.output(f.op("Flatten", {m}, {{"axis", 1.0f}}), "flat");
  const FusionPlan fp = plan(build_graph(f));
  CHECK(labels_of(fp) == "MatMul (into Identity)");
  REQUIRE(fp.groups.size() == 1);
  REQUIRE(fp.groups[0].stored_in.size() == 1);
  CHECK(fp.groups[0].stored_in.begin()->second.placement.identity());
  // A copy that another group computes in its loads stays, and so does what it copies: the Conv reads
  // the transposed view of the Relu's result (a review found the result stored into the copy alone).
  GraphBuilder r;
  const Tensor relu = r.op("Relu", {r.input("x", {1, 8, 4, 16})});
  const Tensor tr = r.op("Transpose", {relu}, {{"perm", std::vector<std::int64_t>{0, 2, 1, 3}}});
  r.output(r.op("Conv", {tr, r.input("w", {4, 1, 3, 3})}, {{"group", 4.0f}}), "y");
  const Graph rg = build_graph(r);
  const FusionPlan rp = plan(rg);
  CHECK(labels_of(rp) == "Relu | Identity -> Conv");
  for (const FusionGroup& g : rp.groups) CHECK(g.stored_in.empty());
  CHECK(names(rg, rp.groups.front().outputs) == names(rg, {relu.id}));
}

TEST_CASE("post-fusion through a view: the chain after a Transpose of a kernel's result joins its stores") {
  using Ints = std::vector<std::int64_t>;
  // convnext_tiny's block tail: a[1,7,5,12] ─ MatMul(w) ─ Add(bias) ─ Transpose(0,3,1,2) ─ Mul(s) ─ Add(r) ─ y
  //   => [MatMul -> Add -> Mul -> Add]: the Transpose is an index map in the MatMul's stores.
  {
    GraphBuilder b;
    const Tensor m = b.op("Add", {b.op("MatMul", {b.input("a", {1, 7, 5, 12}), b.input("w", {12, 13})}), b.input("bias", {13})});
    const Tensor t = b.op("Transpose", {m}, {{"perm", Ints{0, 3, 1, 2}}});
    b.output(b.op("Add", {b.op("Mul", {t, b.input("s", {13, 1, 1})}), b.input("r", {1, 13, 7, 5})}), "y");
    const Graph graph = build_graph(b);
    const FusionPlan p = plan(graph);
    REQUIRE(p.groups.size() == 1);
    CHECK(p.groups[0].label == "MatMul -> Add -> Mul -> Add");
    CHECK(names(graph, p.groups[0].inputs) == "a, w, bias, s, r");
    CHECK(names(graph, p.groups[0].outputs) == "y");
    CHECK(labels_of(plan(graph, FusionMode::kUnfused)) == "MatMul | Add | Mul | Add");
  }
  // The anchor's result read elsewhere too: stored as well, in its own order.
  {
    GraphBuilder b;
    const Tensor m = b.op("MatMul", {b.input("a", {5, 11}), b.input("w", {11, 7})});
    b.output(m, "m");
    b.output(b.op("Relu", {b.op("Transpose", {m}, {{"perm", Ints{1, 0}}})}), "y");
    const Graph graph = build_graph(b);
    const FusionPlan p = plan(graph);
    REQUIRE(p.groups.size() == 1);
    CHECK(names(graph, p.groups[0].outputs) == "m, y");
  }
  // Not joined: an op that reads the result in both orders (Add(T(m), m)); a second reordering after
  // the first; a view that is no reordering (a Slice); a reduction through the view.
  auto labels = [](const std::function<Tensor(GraphBuilder&, const Tensor&)>& after) {
    GraphBuilder b;
    const Tensor m = b.op("MatMul", {b.input("a", {6, 9}), b.input("w", {9, 6})});
    b.output(after(b, m), "y");
    return labels_of(plan(build_graph(b)));
  };
  CHECK(labels([](GraphBuilder& b, const Tensor& m) {
          return b.op("Add", {b.op("Transpose", {m}, {{"perm", Ints{1, 0}}}), m});
        }) == "MatMul | Add");
  CHECK(labels([](GraphBuilder& b, const Tensor& m) {
          const Tensor r = b.op("Relu", {b.op("Transpose", {m}, {{"perm", Ints{1, 0}}})});
          return b.op("Sigmoid", {b.op("Transpose", {r}, {{"perm", Ints{1, 0}}})});
        }) == "MatMul -> Relu | Sigmoid");
  CHECK(labels([](GraphBuilder& b, const Tensor& m) {
          return b.op("Relu", {b.op("Slice", {m}, {{"axis", 1.0f}, {"start", 1.0f}, {"end", 4.0f}})});
        }) == "MatMul | Relu");
  CHECK(labels([](GraphBuilder& b, const Tensor& m) {
          return b.op("ReduceSum", {b.op("Transpose", {m}, {{"perm", Ints{1, 0}}})}, {{"axes", Ints{1}}});
        }) == "MatMul | ReduceSum");
}

TEST_CASE("operand scales: a product scales its result instead of its operands") {
  using Ints = std::vector<std::int64_t>;
  // vit_b_16's attention scores as torch exports them: q and k each scaled, k then transposed:
  //   a ─ Mul(0.5) ─────────────────────┐
  //   c ─ Mul(0.25) ─ Transpose(0,2,1) ─ MatMul ─ y   => [Mul -> Mul -> MatMul]: the MatMul reads a and c
  //   in place and multiplies its result by 0.5, then 0.25.
  {
    GraphBuilder b;
    const Tensor a = b.input("a", {2, 6, 5}), c = b.input("c", {2, 6, 5});
    const Tensor q = b.op("Mul", {a, b.scalar(0.5f)});
    const Tensor k = b.op("Transpose", {b.op("Mul", {b.scalar(0.25f), c})}, {{"perm", Ints{0, 2, 1}}});
    b.output(b.op("MatMul", {q, k}), "y");
    const Graph graph = build_graph(b);
    const FusionPlan p = plan(graph);
    REQUIRE(p.groups.size() == 1);
    CHECK(p.groups[0].label == "Mul -> Mul -> MatMul");
    CHECK(p.groups[0].scales.size() == 2);
    CHECK(labels_of(plan(graph, FusionMode::kUnfused)) == "Mul | Mul | MatMul");
  }
  // The query heads of a packed projection, divided (vit_b_16 as older exports give it): a Slice of the
  // projection, its heads split out and transposed, Div by a constant, read by the MatMul directly.
  {
    GraphBuilder b;
    const Tensor qkv = b.op("MatMul", {b.input("x", {7, 8}), b.input("w", {8, 24})});
    auto heads = [&](float start) {
      const Tensor part = b.op("Slice", {qkv}, {{"axis", 1.0f}, {"start", start}, {"end", start + 8.0f}});
      return b.op("Transpose", {b.op("Reshape", {part}, {{"shape", Ints{7, 2, 4}}})}, {{"perm", Ints{1, 0, 2}}});
    };
    const Tensor q = b.op("Div", {heads(0.0f), b.scalar(2.0f)});
    const Tensor scores = b.op("MatMul", {q, b.op("Transpose", {heads(8.0f)}, {{"perm", Ints{0, 2, 1}}})});
    b.output(b.op("MatMul", {scores, heads(16.0f)}), "y");
    const Graph graph = build_graph(b);
    CHECK(labels_of(plan(graph)) == "MatMul | Div -> MatMul | MatMul");
  }
  // Not absorbed: a scale by a tensor, a scale something else reads too, a constant divided by the
  // operand, a shift (Add).
  auto labels = [](const std::function<Tensor(GraphBuilder&, const Tensor&)>& scale) {
    GraphBuilder b;
    const Tensor a = b.input("a", {4, 6});
    const Tensor t = b.op("Transpose", {scale(b, b.input("c", {4, 6}))}, {{"perm", Ints{1, 0}}});
    b.output(b.op("MatMul", {a, t}), "y");
    return labels_of(plan(build_graph(b)));
  };
  CHECK(labels([](GraphBuilder& b, const Tensor& c) { return b.op("Mul", {c, b.input("s", {4, 1})}); }) == "Mul | MatMul");
  CHECK(labels([](GraphBuilder& b, const Tensor& c) {
          const Tensor m = b.op("Mul", {c, b.scalar(3.0f)});
          b.output(m, "m");
          return m;
        }) == "Mul | MatMul");
  CHECK(labels([](GraphBuilder& b, const Tensor& c) { return b.op("Div", {b.scalar(3.0f), c}); }) == "Div | MatMul");
  CHECK(labels([](GraphBuilder& b, const Tensor& c) { return b.op("Add", {c, b.scalar(3.0f)}); }) == "Add | MatMul");
}

TEST_CASE("plane sums: a squeeze-and-excitation block's pooling joins the depthwise Conv") {
  //   x[1,300,14,13] ─ Conv(depthwise 3x3) ─ Sigmoid ─ Mul ─┬─ ReduceMean(2, 3) ─ Conv(1x1) ─ Relu ─ Conv(1x1) ─ Sigmoid ─ s
  //                                                        └─ Mul(s) ─ Conv(1x1) ─ y
  //   => [Conv -> Sigmoid -> Mul -> ReduceMean] [the products] [Mul -> Conv]
  auto block = [](std::int64_t c, std::int64_t h, std::int64_t w, const char* reduce) {
    GraphBuilder b;
    const Tensor x = b.input("x", {1, c, h, w});
    const Tensor dw = b.op("Conv", {x, b.input("wd", {c, 1, 3, 3})},
                           {{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}, {"group", static_cast<float>(c)}});
    const Tensor act = b.op("Mul", {dw, b.op("Sigmoid", {dw})});
    const Tensor pooled = b.op(reduce, {act}, {{"axes", std::vector<std::int64_t>{2, 3}}, {"keepdims", 1.0f}});
    const Tensor hidden = b.op("Relu", {b.op("Conv", {pooled, b.input("w1", {8, c, 1, 1})})});
    const Tensor scale = b.op("Sigmoid", {b.op("Conv", {hidden, b.input("w2", {c, 8, 1, 1})})});
    b.output(b.op("Conv", {b.op("Mul", {act, scale}), b.input("w3", {16, c, 1, 1})}), "y");
    return build_graph(b);
  };
  const Graph graph = block(300, 14, 13, "ReduceMean");
  const FusionPlan p = plan(graph);
  REQUIRE(p.groups.size() == 3);
  CHECK(p.groups[0].label == "Conv -> Sigmoid -> Mul -> ReduceMean");
  CHECK(p.groups[0].outputs.size() == 2);  // the activation (the block's product reads it) and the pooling
  CHECK(p.groups[2].label == "Mul -> Conv");
  CHECK(labels_of(plan(graph, FusionMode::kUnfused)).find("| ReduceMean |") != std::string::npos);  // its own dispatch
  CHECK(labels_of(plan(block(300, 14, 13, "ReduceSum"))).find("Mul -> ReduceSum") != std::string::npos);
  // A maximum is no sum; a few large planes would leave most of the GPU idle with one workgroup each.
  CHECK(labels_of(plan(block(300, 14, 13, "ReduceMax"))).find("Mul -> ReduceMax") == std::string::npos);
  CHECK(labels_of(plan(block(8, 64, 64, "ReduceMean"))).find("Mul -> ReduceMean") == std::string::npos);
}

TEST_CASE("plane sums: a network's final pooling joins the implicit-GEMM Conv") {
  //   x[N,19,7,7] ─ Conv(1x1) ─ Relu ─ ReduceMean(2, 3) ─ Flatten ─ Gemm ─ y   => [Conv -> Relu -> ReduceMean] [Gemm]
  // One image only (a plane is then a row of the product), planes of a few column tiles; the Conv's
  // result is not stored.
  auto head = [](std::int64_t batch, const char* reduce, std::int64_t hw = 7) {
    GraphBuilder b;
    const Tensor conv = b.op("Conv", {b.input("x", {batch, 19, hw, hw}), b.input("w", {37, 19, 1, 1})});
    const Tensor pooled = b.op(reduce, {b.op("Relu", {conv})}, {{"axes", std::vector<std::int64_t>{2, 3}}, {"keepdims", 1.0f}});
    b.output(b.op("Gemm", {b.op("Flatten", {pooled}, {{"axis", 1.0f}}), b.input("fc", {7, 37})}, {{"transB", 1.0f}}), "y");
    return build_graph(b);
  };
  const FusionPlan p = plan(head(1, "ReduceMean"));
  CHECK(labels_of(p) == "Conv -> Relu -> ReduceMean | Gemm");
  CHECK(p.groups[0].outputs.size() == 1);  // the pooling alone
  CHECK(labels_of(plan(head(1, "ReduceMean"), FusionMode::kUnfused)) == "Conv | Relu | ReduceMean | Gemm");
  CHECK(labels_of(plan(head(1, "ReduceSum"))) == "Conv -> Relu -> ReduceSum | Gemm");
  // Two images, or a maximum: the pooling stays apart (here with the Gemm, a vector chain).
  CHECK(labels_of(plan(head(2, "ReduceMean"))) == "Conv -> Relu | ReduceMean -> Gemm");
  CHECK(labels_of(plan(head(1, "ReduceMax"))) == "Conv -> Relu | ReduceMax -> Gemm");
  // Planes of many column tiles (40x40 positions): a reduction of its own pools them faster.
  CHECK(labels_of(plan(head(1, "ReduceMean", 40))).find("Relu -> ReduceMean") == std::string::npos);
}

TEST_CASE("attention: a product, the Softmax of its rows and the product that reads it are one dispatch") {
  //   q ─ Div(s) ─┐
  //   k^T ────────MatMul ─ Softmax ─ MatMul(v) ─ Relu ─ y   => [Div -> MatMul -> ReduceMax -> ... -> Div -> MatMul -> Relu]
  DevicePlan device;
  device.subgroup_arithmetic = true;
  device.shared_memory_bytes = 32768;
  auto attention = [](std::int64_t keys, std::int64_t values, bool read_elsewhere) {
    GraphBuilder b;
    const Tensor q = b.op("Div", {b.input("q", {4, 37, 24}), b.scalar(2.0f)});
    const Tensor s = b.op("MatMul", {q, b.input("kt", {4, 24, keys})});
    const Tensor p = b.op("Softmax", {s}, {{"axis", -1.0f}});
    if (read_elsewhere) b.output(p, "p");
    b.output(b.op("Relu", {b.op("MatMul", {p, b.input("v", {4, keys, values})})}), "y");
    return build_graph(b);
  };
  const FusionPlan p = plan(attention(45, 16, false), FusionMode::kFused, device);
  REQUIRE(p.groups.size() == 1);
  CHECK(p.groups[0].root == GroupRoot::kAttention);
  CHECK(p.groups[0].label == "Div -> MatMul -> ReduceMax -> Sub -> Exp -> ReduceSum -> Div -> MatMul -> Relu");
  CHECK(p.groups[0].outputs.size() == 1);
  CHECK(plan(attention(45, 24, false), FusionMode::kFused, device).groups.size() == 1);
  // Apart: without subgroup arithmetic; where the Softmax is read elsewhere too; rows too long for a
  // block in shared memory.
  CHECK(plan(attention(45, 16, false)).groups.size() == 3);
  CHECK(plan(attention(45, 16, true), FusionMode::kFused, device).groups.size() == 3);
  CHECK(plan(attention(2000, 16, false), FusionMode::kFused, device).groups.size() == 3);
  CHECK(plan(attention(45, 16, false), FusionMode::kUnfused, device).groups.size() == 9);
}

TEST_CASE("element rows: a depthwise Conv and the LayerNormalization of its channels-last view are one dispatch") {
  //   x ─ Conv(depthwise) ─ Transpose(0, 2, 3, 1) ─ LayerNormalization ─ y   => [Conv -> ReduceMean -> ... -> Add]
  DevicePlan device;
  device.subgroup_arithmetic = true;
  auto block = [](std::int64_t hw, bool conv_read_elsewhere) {
    GraphBuilder b;
    const Tensor conv = b.op("Conv", {b.input("x", {1, 13, hw, hw}), b.input("dw", {13, 1, 3, 3}), b.input("db", {13})},
                             {{"group", 13.0f}, {"pads", std::vector<std::int64_t>{1, 1, 1, 1}}});
    const Tensor t = b.op("Transpose", {conv}, {{"perm", std::vector<std::int64_t>{0, 2, 3, 1}}});
    b.output(b.op("LayerNormalization", {t, b.input("g", {13}), b.input("beta", {13})}, {{"axis", -1.0f}}), "y");
    if (conv_read_elsewhere) b.output(b.op("Relu", {conv}), "r");
    return build_graph(b);
  };
  const FusionPlan p = plan(block(24, false), FusionMode::kFused, device);
  REQUIRE(p.groups.size() == 1);
  CHECK(p.groups[0].root == GroupRoot::kElementRows);
  CHECK(p.groups[0].label == "Conv -> ReduceMean -> Sub -> Mul -> ReduceMean -> Add -> Sqrt -> Div -> Mul -> Add");
  CHECK(p.groups[0].outputs.size() == 1);
  // Apart: without subgroup arithmetic; where the Conv's result is read elsewhere too; too few rows to
  // fill the GPU (8 x 8 positions: 8 blocks); unfused.
  CHECK(plan(block(24, false)).groups.size() == 2);
  CHECK(labels_of(plan(block(24, true), FusionMode::kFused, device)).find("Conv -> ReduceMean") == std::string::npos);
  CHECK(plan(block(8, false), FusionMode::kFused, device).groups.size() == 2);
  CHECK(plan(block(24, false), FusionMode::kUnfused, device).groups.size() > 2);
  // Workgroups of whole subgroups (each row's walk steps by the subgroup's width): 8 rows of 13 in runs
  // of 4 are 26 runs, 32 invocations where subgroups are 8 (lavapipe) or 32 wide, 64 where they are 64.
  const Graph graph = block(24, false);
  for (std::uint32_t width : {8u, 32u, 64u}) {
    CAPTURE(width);
    device.subgroup_size = width;
    auto layout = element_rows_layout(graph_ir(graph), plan(graph, FusionMode::kFused, device).groups.at(0), device);
    REQUIRE(layout.ok());
    CHECK(layout->rows_per_block == 8);  // 576 rows: 18 blocks of 32 or 36 of 16 are too few
    CHECK(layout->run == 4);
    CHECK(layout->workgroup == std::max(32u, width));
  }
}

}  // namespace vkfuse
