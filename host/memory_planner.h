// MemoryPlanner: liveness -> offsets in one device-local arena for the values groups pass to each
// other; and the packing of constants into a few device-local blocks. Graph inputs and outputs live in
// their own buffers.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "host/graph.h"

namespace vkfuse {

struct MemoryPlan {
  std::uint64_t arena_bytes = 0;
  std::map<ValueId, std::uint64_t> offsets;  // byte offset of each planned value in the arena
  std::uint64_t unshared_bytes = 0;          // what the same values would take without reuse
};

// `reads[g]` / `writes[g]`: the stored values group g binds; `steps[g]`: when group g runs, in steps
// separated by barriers (FusionGroup::level; groups of one step may overlap on the GPU), or empty for
// one step per group. A value is live from the step of the group that writes it to the step of the last
// group that reads it; values whose lifetimes overlap never share bytes, so no group of a step writes
// bytes another group of that step reads or writes. Sizes and offsets are checked: an overflow of
// uint64 is an error naming the value.
Result<MemoryPlan> plan_memory(const GraphIR& graph, const std::vector<std::vector<ValueId>>& reads,
                       const std::vector<std::vector<ValueId>>& writes, std::span<const std::size_t> steps,
                       std::uint64_t alignment);

// Constants are packed into blocks, each one allocation filled by one staging copy: a buffer apiece
// cost resnet50 161 allocations and as many staging buffers.
struct ConstantSlot {
  std::size_t block = 0;
  std::uint64_t offset = 0;  // a multiple of the alignment
};
struct ConstantPacking {
  std::vector<std::uint64_t> block_bytes;  // each block's size: its last constant's end
  std::vector<ConstantSlot> slots;         // one per constant, in the order given
};

// sizes[i]: constant i's bytes (> 0). Constants go in the order given, each at the next aligned offset
// of the open block; a constant that would end past `block_limit` opens a new block, and one larger
// than `block_limit` gets a block of its own.
ConstantPacking pack_constants(const std::vector<std::uint64_t>& sizes, std::uint64_t alignment, std::uint64_t block_limit);

}  // namespace vkfuse
