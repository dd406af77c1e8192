// The CPU folder's host-memory limits (FoldBudget): a few hundred bytes of model file must not make
// the importer allocate gigabytes. Ops the GPU can run are then left to the GPU; Range and
// ConstantOfShape, which only fold, fail naming the node and the size.
#include <doctest/doctest.h>

#include <algorithm>

#include <vkfuse/onnx.hpp>

#include "host/graph.h"
#include "host/onnx/onnx_folding.h"
#include "support/onnx_model.h"

namespace vkfuse::testing {
namespace {

constexpr const char* kName = "m.onnx";
const std::string kContext = std::string(kName) + " (opset 13): ";

Result<Graph> import(const OnnxModel& model) {
  const std::string bytes = model.bytes();
  return load_onnx_from_memory(bytes.data(), bytes.size(), {}, kName);
}

bool has_op(const Graph& graph, std::string_view op) {
  const GraphIR& ir = graph_ir(graph);
  return std::any_of(ir.nodes.begin(), ir.nodes.end(), [&](const Node& n) { return n.op->name == op; });
}

TEST_CASE("ONNX folding: a Range past the per-tensor limit is refused before anything is allocated") {
  OnnxModel m;
  m.int64s("start", {0}).int64s("limit", {(std::int64_t{1} << 28) - 1}).int64s("delta", {1});
  m.node("Range", {"start", "limit", "delta"}, {"r"}, "range0").node("Cast", {"r"}, {"y"}, "cast0");
  m.output("y", {(std::int64_t{1} << 28) - 1});
  auto graph = import(m);
  REQUIRE_FALSE(graph.ok());
  CHECK(graph.status().code() == ErrorCode::kUnsupported);
  CHECK(graph.status().message() ==
        kContext + "node 'range0' (Range): folding would create a constant of shape [268435455] (268435455 elements), "
                   "over the folder's limit of 2^24 elements per tensor and 2^26 per model");
}

TEST_CASE("ONNX folding: a constant Expand or broadcast past the limit runs on the GPU instead") {
  const std::int64_t big = std::int64_t{1} << 25;
  {
    OnnxModel m;
    m.floats("one", {1}, {2.0f}).int64s("shape", {big}).node("Expand", {"one", "shape"}, {"y"}, "expand0").output("y", {big});
    auto graph = import(m);
    REQUIRE_MESSAGE(graph.ok(), graph.status().message());
    CHECK(has_op(*graph, "Expand"));
  }
  {  // just inside the limit: folded, nothing reaches the graph
    OnnxModel m;
    const std::int64_t fits = onnx_import::FoldBudget::kMaxTensorElements;
    m.floats("one", {1}, {2.0f}).int64s("shape", {fits}).node("Expand", {"one", "shape"}, {"y"}, "expand0").output("y", {fits});
    auto graph = import(m);
    REQUIRE_MESSAGE(graph.ok(), graph.status().message());
    CHECK_FALSE(has_op(*graph, "Expand"));
  }
  {  // [8192, 1] + [1, 8192]: 2^26 elements from two 8192-element constants
    OnnxModel m;
    m.floats("a", {8192, 1}, std::vector<float>(8192, 1.0f)).floats("b", {1, 8192}, std::vector<float>(8192, 2.0f));
    m.node("Add", {"a", "b"}, {"y"}, "add0").output("y", {8192, 8192});
    auto graph = import(m);
    REQUIRE_MESSAGE(graph.ok(), graph.status().message());
    CHECK(has_op(*graph, "Add"));
  }
}

TEST_CASE("ONNX folding: the per-model budget stops many folds that each fit") {
  // Eight ConstantOfShape of 2^23 elements use the 2^26 budget; the ninth is refused by name.
  OnnxModel m;
  m.int64s("shape", {std::int64_t{1} << 23});
  std::vector<std::string> parts;
  for (int k = 0; k < 9; ++k) {
    parts.push_back("c" + std::to_string(k));
    m.node("ConstantOfShape", {"shape"}, {parts.back()}, parts.back());
  }
  m.node("Concat", parts, {"y"}, "concat0").output("y", {9 * (std::int64_t{1} << 23)});
  auto graph = import(m);
  REQUIRE_FALSE(graph.ok());
  CHECK(graph.status().code() == ErrorCode::kUnsupported);
  CHECK(graph.status().message().rfind(kContext + "node 'c8' (ConstantOfShape): folding would create a constant of shape [8388608]", 0) == 0);
}

}  // namespace
}  // namespace vkfuse::testing
