// FusionPlanner limits (host/fusion_planner.h): a group holds at most kMaxGroupNodes nodes, a graph at
// most kMaxGraphNodes. Planning time is measured by bench/planner_bench.cpp, never here.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "backend/device_plan.h"
#include "codegen/kernel_builder.h"
#include "host/demo_models.h"
#include "host/fusion_planner.h"
#include "host/graph.h"
#include "host/group_kernel.h"

namespace vkfuse {

TEST_CASE("a chain longer than a group's limit is split into groups of the limit") {
  constexpr int kOps = 8000;
  auto graph = build_elementwise_chain(1024, kOps);
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  const GraphIR& ir = graph_ir(*graph);
  REQUIRE(ir.nodes.size() == static_cast<std::size_t>(kOps));

  auto fused = plan_fusion(ir, {}, FusionMode::kFused);
  REQUIRE_MESSAGE(fused.ok(), fused.status().to_string());
  CHECK(fused->op_count == static_cast<std::size_t>(kOps));
  const std::size_t groups = (kOps + kMaxGroupNodes - 1) / kMaxGroupNodes;  // 31 of 256, then 64
  REQUIRE(fused->groups.size() == groups);
  NodeId next = 0;  // each group takes the next run of the chain, and reads the group before it
  for (std::size_t k = 0; k < groups; ++k) {
    const FusionGroup& g = fused->groups[k];
    CAPTURE(k);
    CHECK(g.root == GroupRoot::kElementwise);
    CHECK(g.level == k);
    CHECK(g.nodes.size() == (k + 1 < groups ? kMaxGroupNodes : kOps - (groups - 1) * kMaxGroupNodes));
    CHECK(g.nodes.front() == next);
    CHECK(g.nodes.back() == next + static_cast<NodeId>(g.nodes.size()) - 1);
    REQUIRE(g.outputs.size() == 1);
    CHECK(g.outputs[0] == ir.node(g.nodes.back()).output);
    const ValueId read = k == 0 ? ir.node(0).inputs[0] : ir.node(next - 1).output;
    CHECK(std::find(g.inputs.begin(), g.inputs.end(), read) != g.inputs.end());
    next += static_cast<NodeId>(g.nodes.size());
  }
  CHECK(next == kOps);
  CHECK(fused->groups[0].label.rfind("Mul -> Add -> Max -> Sub -> Min -> Neg -> Abs -> Add -> Mul", 0) == 0);

  // The kernel of a full group builds (GLSL only: compiling is the GPU tests' part).
  auto kernel = make_group_kernel(ir, fused->groups[0], {});
  REQUIRE_MESSAGE(kernel.ok(), kernel.status().to_string());
  auto source = build_kernel(kernel->spec);
  REQUIRE_MESSAGE(source.ok(), source.status().to_string());

  auto unfused = plan_fusion(ir, {}, FusionMode::kUnfused);
  REQUIRE_MESSAGE(unfused.ok(), unfused.status().to_string());
  CHECK(unfused->groups.size() == static_cast<std::size_t>(kOps));
  CHECK(unfused->groups.back().level == static_cast<std::size_t>(kOps - 1));
}

TEST_CASE("a graph with more nodes than the planner's limit is refused, naming both counts") {
  auto graph = build_elementwise_chain(16, static_cast<int>(kMaxGraphNodes) + 1);
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  auto plan = plan_fusion(graph_ir(*graph), {}, FusionMode::kFused);
  REQUIRE_FALSE(plan.ok());
  CHECK(plan.status().code() == ErrorCode::kInvalidArgument);
  const std::string expected = "graph has " + std::to_string(kMaxGraphNodes + 1) + " nodes; vkfuse plans at most " +
                               std::to_string(kMaxGraphNodes);
  CHECK_MESSAGE(plan.status().to_string().find(expected) != std::string::npos, plan.status().to_string());
}

}  // namespace vkfuse
