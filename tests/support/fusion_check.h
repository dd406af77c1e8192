// Fused vs unfused vs the CPU reference for one graph: the check every fusion rule's GPU test runs.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <vkfuse/vkfuse.hpp>

#include "host/op_def.h"

namespace vkfuse::testing {

struct FusionOutcome {
  std::size_t fused_dispatches = 0, unfused_dispatches = 0;
};

// Runs the graph fused and unfused; both must match the reference (evaluated in double) within
// (atol, rtol), and each other within the same bounds. Also checks for validation errors.
FusionOutcome check_fused_unfused(const Graph& graph, const std::map<std::string, HostTensor>& feeds, double atol,
                                  double rtol);

// The builder's graph; REQUIREs that it built.
Graph build_graph(GraphBuilder& b);

// Seeded random f32 feeds drawn from `domain`.
std::map<std::string, HostTensor> random_feeds(const std::vector<std::pair<std::string, Shape>>& inputs,
                                               std::uint32_t seed, TestDomain domain = {});

}  // namespace vkfuse::testing
