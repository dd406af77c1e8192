// MemoryPlanner: liveness -> offsets in one device-local arena for the values groups pass to each
// other. Graph inputs, outputs and constants live in their own buffers and are not planned here.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "host/graph.h"

namespace vkfuse {

struct MemoryPlan {
  std::uint64_t arena_bytes = 0;
  std::map<ValueId, std::uint64_t> offsets;  // byte offset of each planned value in the arena
  std::uint64_t unshared_bytes = 0;          // what the same values would take without reuse
};

// `reads[g]` / `writes[g]`: the stored values group g binds. A value is live from the group that
// writes it to the last group that reads it; values whose lifetimes overlap never share bytes.
MemoryPlan plan_memory(const GraphIR& graph, const std::vector<std::vector<ValueId>>& reads,
                       const std::vector<std::vector<ValueId>>& writes, std::uint64_t alignment);

}  // namespace vkfuse
