#include "host/memory_planner.h"

#include <algorithm>

#include "host/checked_math.h"

namespace vkfuse {

Result<MemoryPlan> plan_memory(const GraphIR& graph, const std::vector<std::vector<ValueId>>& reads,
                       const std::vector<std::vector<ValueId>>& writes, std::span<const std::size_t> steps,
                       std::uint64_t alignment) {
  auto step = [&](std::size_t g) { return steps.empty() ? g : steps[g]; };
  struct Interval {
    ValueId value;
    std::size_t first, last;
    std::uint64_t bytes;
  };
  std::map<ValueId, Interval> live;
  for (std::size_t g = 0; g < writes.size(); ++g)
    for (ValueId v : writes[g]) {
      const Value& value = graph.value(v);
      if (value.is_output) continue;
      const std::string what = "the arena bytes of '" + value.name + "'";
      VKFUSE_ASSIGN_OR_RETURN(const std::uint64_t bytes, bytes_or_error(value.shape, dtype_size(value.dtype), what));
      VKFUSE_ASSIGN_OR_RETURN(const std::uint64_t padded, add_or_error(bytes, alignment - 1, what));
      // Several groups write a Concat stored in place, one slice each: live from the first of them.
      auto [it, fresh] = live.try_emplace(v, Interval{v, step(g), step(g), padded / alignment * alignment});
      if (!fresh) {
        it->second.first = std::min(it->second.first, step(g));
        it->second.last = std::max(it->second.last, step(g));
      }
    }
  for (std::size_t g = 0; g < reads.size(); ++g)
    for (ValueId v : reads[g])
      if (auto it = live.find(v); it != live.end()) it->second.last = std::max(it->second.last, step(g));

  // Greedy by size: the largest value first, at the lowest offset free over its whole lifetime.
  std::vector<Interval> order;
  for (auto& [v, interval] : live) order.push_back(interval);
  std::stable_sort(order.begin(), order.end(), [](const Interval& a, const Interval& b) { return a.bytes > b.bytes; });
  MemoryPlan plan;
  struct Placed {
    Interval interval;
    std::uint64_t offset;
  };
  std::vector<Placed> placed;
  for (const Interval& interval : order) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> busy;  // [offset, end) overlapping in time
    for (const Placed& p : placed)
      if (p.interval.first <= interval.last && interval.first <= p.interval.last)
        busy.push_back({p.offset, p.offset + p.interval.bytes});  // placed below, so checked already
    std::sort(busy.begin(), busy.end());
    std::uint64_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (offset <= begin && interval.bytes <= begin - offset) break;
      offset = std::max(offset, end);
    }
    const std::string what = "the arena end of '" + graph.value(interval.value).name + "'";
    VKFUSE_ASSIGN_OR_RETURN(const std::uint64_t end, add_or_error(offset, interval.bytes, what));
    placed.push_back({interval, offset});
    plan.offsets[interval.value] = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, end);
    VKFUSE_ASSIGN_OR_RETURN(plan.unshared_bytes, add_or_error(plan.unshared_bytes, interval.bytes, "the unshared arena bytes"));
  }
  return plan;
}

ConstantPacking pack_constants(const std::vector<std::uint64_t>& sizes, std::uint64_t alignment, std::uint64_t block_limit) {
  ConstantPacking packing;
  for (std::uint64_t bytes : sizes) {
    std::uint64_t offset = 0;
    if (!packing.block_bytes.empty()) offset = (packing.block_bytes.back() + alignment - 1) / alignment * alignment;
    if (packing.block_bytes.empty() || offset + bytes > block_limit) {
      packing.block_bytes.push_back(0);
      offset = 0;
    }
    packing.block_bytes.back() = offset + bytes;
    packing.slots.push_back({packing.block_bytes.size() - 1, offset});
  }
  return packing;
}

}  // namespace vkfuse
