// The LayerNorm fold (host/passes/fold_layer_norm.h): which LayerNorm -> MatMul chains become one
// LayerNormMatMul, the folded constants, the fused plan's one group, and the graphs it leaves alone.
// No GPU: tests/gpu/test_layer_norm_fold.cpp runs the folded products on the device.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "backend/device_plan.h"
#include "host/fusion_planner.h"
#include "host/graph.h"
#include "host/passes/fold_layer_norm.h"

namespace vkfuse {
namespace {

// x [2, 3] -> LayerNormalization(gamma, beta) -> MatMul(W [3, 2]) -> Add(bias) -> Relu -> y; a Neg
// reads the LayerNorm's result too where `extra_reader` is set.
Graph layer_norm_product(bool extra_reader, bool constant_weight = true, DType dtype = DType::kF32) {
  GraphBuilder b;
  const Tensor x = b.input("x", {2, 3}, dtype);
  const auto c = [&](Shape shape, std::vector<float> v) { return b.constant(HostTensor::from_floats(shape, v, dtype)); };
  const Tensor ln = b.op("LayerNormalization", {x, c({3}, {1.0f, 2.0f, 3.0f}), c({3}, {0.5f, -1.0f, 2.0f})});
  const Tensor w = constant_weight ? c({3, 2}, {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f}) : b.input("w", {3, 2}, dtype);
  const Tensor y = b.op("Add", {b.op("MatMul", {ln, w}), c({2}, {10.0f, 20.0f})});
  b.output(b.op("Relu", {y}), "y");
  if (extra_reader) b.output(b.op("Neg", {ln}), "z");
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  return std::move(graph).value();
}

std::vector<std::string> op_names(const GraphIR& g) {
  std::vector<std::string> names;
  for (const Node& node : g.nodes) names.emplace_back(node.op->name);
  return names;
}

}  // namespace

TEST_CASE("fold: LayerNorm -> MatMul -> bias Add becomes one LayerNormMatMul with the folded constants") {
  const Graph graph = layer_norm_product(false);
  const auto folded = fold_layer_norms(graph_ir(graph));
  REQUIRE(folded.has_value());
  CHECK(folded->folded == 1);
  const GraphIR& g = folded->graph;
  CHECK(op_names(g) == std::vector<std::string>{"LayerNormMatMul", "Relu"});
  const Node& product = g.nodes[0];
  REQUIRE(product.inputs.size() == 4);
  CHECK(g.value(product.inputs[0]).is_input);
  CHECK(product.attrs == std::vector<float>{1e-5f});
  // W' = diag(gamma) W, C = its column sums, Bias' = beta W + bias.
  CHECK(g.value(product.inputs[1]).constant->to_floats() == std::vector<float>{1, 2, 6, 8, 15, 18});
  CHECK(g.value(product.inputs[2]).constant->to_floats() == std::vector<float>{22, 28});
  CHECK(g.value(product.inputs[3]).constant->to_floats() == std::vector<float>{10 + 0.5f - 3 + 10, 20 + 1 - 4 + 12});
  // Consumers and producers point at the renumbered nodes; the dead constants are gone.
  CHECK(g.value(g.nodes[1].inputs[0]).producer == 0);
  CHECK(g.value(product.inputs[0]).consumers == std::vector<NodeId>{0});
  CHECK(g.outputs.size() == 1);
  CHECK(g.value(g.outputs[0]).name == "y");
  CHECK(g.values.size() == 6);  // x, W', C, Bias', the product's result, y
  // Fused, it is one group; unfused plans keep the imported graph.
  std::optional<FoldedLayerNorms> holder;
  const GraphIR& fused = graph_to_plan(graph_ir(graph), FusionMode::kFused, holder);
  auto plan = plan_fusion(fused, DevicePlan{}, FusionMode::kFused);
  REQUIRE(plan.ok());
  REQUIRE(plan->groups.size() == 1);
  CHECK(plan->groups[0].label == "LayerNormMatMul -> Relu");
  CHECK(&graph_to_plan(graph_ir(graph), FusionMode::kUnfused, holder) == &graph_ir(graph));
}

TEST_CASE("fold: left alone where the LayerNorm's result has another reader, W is no constant, x is f16 or a vector") {
  CHECK_FALSE(fold_layer_norms(graph_ir(layer_norm_product(true))).has_value());
  CHECK_FALSE(fold_layer_norms(graph_ir(layer_norm_product(false, false))).has_value());
  CHECK_FALSE(fold_layer_norms(graph_ir(layer_norm_product(false, true, DType::kF16))).has_value());
  // One row of rank 1: LayerNormMatMul reads matrices.
  GraphBuilder b;
  const Tensor x = b.input("x", {3});
  const Tensor ln = b.op("LayerNormalization", {x, b.constant(HostTensor::from_floats({3}, {1.0f, 2.0f, 3.0f}))});
  b.output(b.op("MatMul", {ln, b.constant(HostTensor::from_floats({3, 2}, {1, 2, 3, 4, 5, 6}))}), "y");
  auto vector_graph = b.build();
  REQUIRE(vector_graph.ok());
  CHECK_FALSE(fold_layer_norms(graph_ir(*vector_graph)).has_value());
}

}  // namespace vkfuse
