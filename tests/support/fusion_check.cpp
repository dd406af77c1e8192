#include "support/fusion_check.h"

#include <doctest/doctest.h>

#include <random>

#include "host/reference_eval.h"
#include "support/compare.h"
#include "support/gpu_context.h"
#include "support/random_inputs.h"

namespace vkfuse::testing {

FusionOutcome check_fused_unfused(const Graph& graph, const std::map<std::string, HostTensor>& feeds, double atol,
                                  double rtol) {
  FusionOutcome outcome;
  const auto fused = run_graph(graph, true, feeds, &outcome.fused_dispatches);
  const auto unfused = run_graph(graph, false, feeds, &outcome.unfused_dispatches);
  auto want = evaluate_reference(graph, feeds);
  REQUIRE(want.ok());
  for (const auto& entry : *want) {
    const auto& name = entry.first;  // a variable, not a binding: CAPTURE's lambda takes it (clang)
    const auto& reference = entry.second;
    CAPTURE(name);
    const auto f = fused.at(name).to_floats(), u = unfused.at(name).to_floats(), r = reference.to_floats();
    const CloseReport fused_vs_ref = all_close(f, r, atol, rtol);
    const CloseReport unfused_vs_ref = all_close(u, r, atol, rtol);
    const CloseReport fused_vs_unfused = all_close(f, u, atol, rtol);
    CHECK_MESSAGE(fused_vs_ref.ok, "fused vs reference: " << fused_vs_ref.describe());
    CHECK_MESSAGE(unfused_vs_ref.ok, "unfused vs reference: " << unfused_vs_ref.describe());
    CHECK_MESSAGE(fused_vs_unfused.ok, "fused vs unfused: " << fused_vs_unfused.describe());
  }
  CHECK(validation_errors() == 0);
  return outcome;
}

Graph build_graph(GraphBuilder& b) {
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  return std::move(graph).value();
}

std::map<std::string, HostTensor> random_feeds(const std::vector<std::pair<std::string, Shape>>& inputs,
                                               std::uint32_t seed, TestDomain domain) {
  std::mt19937 rng(seed);
  std::map<std::string, HostTensor> feeds;
  for (const auto& [name, shape] : inputs) feeds.emplace(name, random_tensor(shape, DType::kF32, domain, rng));
  return feeds;
}

}  // namespace vkfuse::testing
