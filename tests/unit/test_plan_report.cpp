// PlanReport (host/plan_report.h), what `vkfuse plan` prints: groups, their inputs and outputs, the
// bytes each keeps out of memory, op and view counts, fused and unfused. No GPU.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "host/plan_report.h"

namespace vkfuse {
namespace {

Graph build_graph(GraphBuilder& b) {
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  return std::move(graph).value();
}

PlanReport report_of(const Graph& graph, FusionMode mode = FusionMode::kFused) {
  auto report = make_plan_report(graph, DevicePlan{}, mode);
  REQUIRE_MESSAGE(report.ok(), report.status().to_string());
  return std::move(report).value();
}

std::string names(const PlanReport& report, const std::vector<int>& ids) {
  std::string out;
  for (int id : ids) out += (out.empty() ? "" : ", ") + report.values[static_cast<std::size_t>(id)].name;
  return out;
}

}  // namespace

TEST_CASE("plan report: a fused chain keeps its intermediates out of memory") {
  GraphBuilder b;
  const Tensor x = b.input("x", {7, 13}), y = b.input("y", {7, 13}), z = b.input("z", {13});
  const Tensor s = b.op("Sub", {x, y}, {}, "sub");
  const Tensor m = b.op("Mul", {s, b.scalar(0.5f)}, {}, "mul");
  b.output(b.op("Add", {m, z}, {}, "add"), "out");
  const Graph graph = build_graph(b);

  const PlanReport fused = report_of(graph);
  REQUIRE(fused.groups.size() == 1);
  const PlanGroup& g = fused.groups[0];
  CHECK(g.label == "Sub -> Mul -> Add");
  CHECK(g.root == "elementwise");
  CHECK(g.nodes.size() == 3);
  CHECK(names(fused, g.inputs) == "x, y, const_4, z");
  CHECK(names(fused, g.outputs) == "out");
  CHECK(names(fused, g.kept_values) == "sub, mul");
  CHECK(g.kept_bytes == 2 * 7 * 13 * 4);
  CHECK(fused.kept_bytes == g.kept_bytes);
  CHECK(fused.op_count == 3);
  CHECK(fused.view_count == 0);
  CHECK(names(fused, fused.inputs) == "x, y, z");
  CHECK(names(fused, fused.outputs) == "out");
  const PlanValue& literal = fused.values[static_cast<std::size_t>(g.inputs[2])];
  CHECK(literal.is_constant);
  CHECK(literal.is_scalar_constant);
  CHECK(fused.nodes[static_cast<std::size_t>(g.nodes[1])].op_type == "Mul");
  CHECK(fused.nodes[static_cast<std::size_t>(g.nodes[1])].name == "mul");

  const PlanReport unfused = report_of(graph, FusionMode::kUnfused);
  CHECK_FALSE(unfused.fused);
  CHECK(unfused.groups.size() == 3);
  CHECK(unfused.kept_bytes == 0);
  CHECK(unfused.op_count == 3);
  CHECK(names(unfused, unfused.groups[1].outputs) == "mul");
}

TEST_CASE("plan report: a kernel op's own group; views are counted and never grouped") {
  // Add -> Exp costs more than a kernel op's loads may recompute, so it stays a group of its own.
  GraphBuilder b;
  const Tensor x = b.input("x", {2, 6});
  const Tensor w = b.constant(HostTensor::from_floats({4, 3}, std::vector<float>(12, 0.5f)), "W");
  const Tensor sliced = b.op("Slice", {x}, {{"axis", 1}, {"start", 1}, {"end", 5}}, "slice");  // [2,4]
  const Tensor h = b.op("Exp", {b.op("Add", {sliced, b.scalar(1.0f)}, {}, "add")}, {}, "exp");
  b.output(b.op("MatMul", {h, w}, {}, "matmul"), "y");
  const Graph graph = build_graph(b);

  const PlanReport report = report_of(graph);
  REQUIRE(report.groups.size() == 2);
  CHECK(report.groups[0].label == "Add -> Exp");
  CHECK(report.groups[0].root == "elementwise");
  CHECK(names(report, report.groups[0].inputs) == "slice, const_3");
  CHECK(names(report, report.groups[0].outputs) == "exp");
  CHECK(names(report, report.groups[0].kept_values) == "add");
  CHECK(report.groups[0].kept_bytes == 2 * 4 * 4);
  CHECK(report.groups[1].label == "MatMul");
  CHECK(report.groups[1].root == "kernel");
  CHECK(names(report, report.groups[1].inputs) == "exp, W");
  CHECK(report.groups[1].kept_bytes == 0);
  CHECK(report.op_count == 3);
  CHECK(report.view_count == 1);
  int views = 0;
  for (const PlanNode& node : report.nodes) views += node.is_view ? 1 : 0;
  CHECK(views == 1);
  CHECK(report.values[static_cast<std::size_t>(report.groups[1].inputs[1])].is_constant);
  CHECK_FALSE(report.values[static_cast<std::size_t>(report.groups[1].inputs[1])].is_scalar_constant);
}

TEST_CASE("plan report: outputs stored into a Concat's slices say so, and the Concat has no group") {
  GraphBuilder b;
  const Tensor x = b.input("x", {1, 3, 5, 4}), w = b.input("w", {7, 3, 1, 1});
  const Tensor a = b.op("Conv", {x, w}, {}, "conv");
  const Tensor s = b.op("Sigmoid", {x}, {}, "sig");
  b.output(b.op("MaxPool", {b.op("Concat", {a, s}, {{"axis", 1.0f}}, "cat")}, {{"kernel_shape", std::vector<std::int64_t>{2, 2}}}), "y");
  const Graph graph = build_graph(b);
  const PlanReport fused = report_of(graph);
  REQUIRE(fused.groups.size() == 3);
  for (std::size_t g = 0; g < 2; ++g) {
    CAPTURE(g);
    REQUIRE(fused.groups[g].stored_into.size() == 1);
    CHECK(names(fused, {fused.groups[g].stored_into[0].second}) == "cat");
    CHECK(fused.groups[g].stored_into[0].first == fused.groups[g].outputs[0]);
  }
  CHECK(fused.groups[2].label == "MaxPool");
  CHECK(names(fused, fused.groups[2].inputs) == "cat");
  const PlanReport unfused = report_of(graph, FusionMode::kUnfused);
  CHECK(unfused.groups.size() == 4);
  for (const PlanGroup& g : unfused.groups) CHECK(g.stored_into.empty());
  CHECK(fused.groups[2].read_from.empty());
}

TEST_CASE("plan report: a Concat read as a larger one's leading elements says so") {
  //   a = Conv(x), b = Sigmoid(x);  c1 = Concat(a, b) ─ Conv;  c2 = Concat(a, b, Tanh(x)) ─ MaxPool
  GraphBuilder b;
  const Tensor x = b.input("x", {1, 3, 5, 4});
  const Tensor a = b.op("Conv", {x, b.input("w", {7, 3, 1, 1})}, {}, "conv");
  const Tensor s = b.op("Sigmoid", {x}, {}, "sig");
  const Tensor c1 = b.op("Concat", {a, s}, {{"axis", 1.0f}}, "c1");
  b.output(b.op("Conv", {c1, b.input("v", {2, 10, 1, 1})}), "y1");
  const Tensor c2 = b.op("Concat", {a, s, b.op("Tanh", {x}, {}, "tanh")}, {{"axis", 1.0f}}, "c2");
  b.output(b.op("MaxPool", {c2}, {{"kernel_shape", std::vector<std::int64_t>{2, 2}}}), "y2");
  const PlanReport fused = report_of(build_graph(b));
  int reads = 0;
  for (const PlanGroup& g : fused.groups)
    for (const auto& [value, whole] : g.read_from) {
      CHECK(names(fused, {value, whole}) == "c1, c2");
      ++reads;
    }
  CHECK(reads == 1);
  for (const PlanGroup& g : fused.groups)  // neither Concat runs
    for (int n : g.nodes) CHECK(fused.nodes[static_cast<std::size_t>(n)].op_type != "Concat");
}

}  // namespace vkfuse
