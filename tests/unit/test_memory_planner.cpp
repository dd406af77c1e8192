// MemoryPlanner: values whose lifetimes do not overlap share bytes, overlapping ones never do, every
// offset is aligned, and graph outputs are not planned. Constant packing: aligned, in order, blocks
// within their limit, oversized constants alone.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "host/graph.h"
#include "host/memory_planner.h"

namespace vkfuse {
namespace {

using Groups = std::vector<std::vector<ValueId>>;

// A chain x -> Exp -> Exp -> ... with one value per entry of `shapes`; the last is the graph output
// "y". A change of shape goes through a broadcast Add with a new input of that shape.
struct Chain {
  Graph graph;
  std::vector<ValueId> ids;  // ids[k]: the value the k-th group writes
};

Chain make_chain(const std::vector<Shape>& shapes) {
  GraphBuilder b;
  Tensor t = b.input("x", shapes.front());
  Chain chain;
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    t = b.shape(t) == shapes[k] ? b.op("Exp", {t}) : b.op("Add", {t, b.input("in" + std::to_string(k), shapes[k])});
    chain.ids.push_back(t.id);
  }
  b.output(t, "y");
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  chain.graph = std::move(graph).value();
  return chain;
}

// Group k reads what group k-1 wrote and writes ids[k].
void chain_io(const Chain& chain, Groups& reads, Groups& writes) {
  for (std::size_t k = 0; k < chain.ids.size(); ++k) {
    reads.push_back(k == 0 ? std::vector<ValueId>{} : std::vector<ValueId>{chain.ids[k - 1]});
    writes.push_back({chain.ids[k]});
  }
}

bool overlap(std::uint64_t a, std::uint64_t a_bytes, std::uint64_t b, std::uint64_t b_bytes) {
  return a < b + b_bytes && b < a + a_bytes;
}

}  // namespace

TEST_CASE("values whose lifetimes do not overlap share offset 0") {
  // a -> b -> c -> y: a is dead once b is written, so c reuses a's bytes; b overlaps both.
  const Chain chain = make_chain({{10}, {10}, {10}, {10}});
  Groups reads, writes;
  chain_io(chain, reads, writes);
  const MemoryPlan plan = plan_memory(graph_ir(chain.graph), reads, writes, {}, 256).value();
  const ValueId a = chain.ids[0], b = chain.ids[1], c = chain.ids[2], y = chain.ids[3];
  REQUIRE(plan.offsets.size() == 3);
  CHECK(plan.offsets.at(a) == 0);
  CHECK(plan.offsets.at(b) == 256);
  CHECK(plan.offsets.at(c) == 0);
  CHECK(plan.offsets.count(y) == 0);  // the graph output has its own buffer
  CHECK(plan.arena_bytes == 512);
  CHECK(plan.unshared_bytes == 768);  // three values of 40 bytes, each rounded up to 256
}

TEST_CASE("values of one step never share bytes: groups of a level may run at once") {
  // a -> b -> c -> d -> y. One step per group: c reuses a's bytes (a is dead once b is written). With
  // groups 1 and 2 in one step (as if independent), a's last reader and c's writer may overlap on the
  // GPU, so c gets bytes of its own; d, a step later, may take a's.
  const Chain chain = make_chain({{10}, {10}, {10}, {10}, {10}});
  Groups reads, writes;
  chain_io(chain, reads, writes);
  const ValueId a = chain.ids[0], b = chain.ids[1], c = chain.ids[2], d = chain.ids[3];
  const MemoryPlan per_group = plan_memory(graph_ir(chain.graph), reads, writes, {}, 64).value();
  CHECK(per_group.offsets.at(c) == per_group.offsets.at(a));
  const std::vector<std::size_t> steps{0, 1, 1, 2, 3};
  const MemoryPlan stepped = plan_memory(graph_ir(chain.graph), reads, writes, steps, 64).value();
  const std::uint64_t oa = stepped.offsets.at(a), ob = stepped.offsets.at(b), oc = stepped.offsets.at(c),
                      od = stepped.offsets.at(d);
  CHECK_FALSE(overlap(oa, 64, oc, 64));
  CHECK_FALSE(overlap(ob, 64, oc, 64));
  CHECK_FALSE(overlap(oa, 64, ob, 64));
  CHECK(od == oa);  // step 2: a was last read in step 1
  CHECK(stepped.arena_bytes == 192);
}

TEST_CASE("a value read late stays live and is not overwritten") {
  // a is read by group 1 and group 3: it overlaps b and c, which still share nothing with it.
  const Chain chain = make_chain({{16}, {16}, {16}, {16}});
  Groups reads, writes;
  chain_io(chain, reads, writes);
  reads[3].push_back(chain.ids[0]);
  const MemoryPlan plan = plan_memory(graph_ir(chain.graph), reads, writes, {}, 64).value();
  const std::uint64_t a = plan.offsets.at(chain.ids[0]), b = plan.offsets.at(chain.ids[1]),
                      c = plan.offsets.at(chain.ids[2]);
  CHECK_FALSE(overlap(a, 64, b, 64));
  CHECK_FALSE(overlap(a, 64, c, 64));
  CHECK_FALSE(overlap(b, 64, c, 64));
  CHECK(plan.arena_bytes == 192);
}

TEST_CASE("overlapping values of different sizes never share bytes and stay aligned") {
  // Sizes 7, 100 and 33 floats (28, 400, 132 bytes), all live at once in group 1.
  const Chain chain = make_chain({{7}, {100, 7}, {33, 100, 7}, {33, 100, 7}});
  Groups reads, writes;
  chain_io(chain, reads, writes);
  reads[2].push_back(chain.ids[0]);
  reads[3] = {chain.ids[0], chain.ids[1], chain.ids[2]};
  const GraphIR& ir = graph_ir(chain.graph);
  const std::uint64_t alignment = 64;
  const MemoryPlan plan = plan_memory(ir, reads, writes, {}, alignment).value();
  REQUIRE(plan.offsets.size() == 3);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;  // [offset, bytes)
  for (auto [value, offset] : plan.offsets) {
    CHECK(offset % alignment == 0);
    const std::uint64_t bytes = static_cast<std::uint64_t>(shape_numel(ir.value(value).shape)) * 4;
    CHECK(offset + bytes <= plan.arena_bytes);
    ranges.push_back({offset, bytes});
  }
  for (std::size_t i = 0; i < ranges.size(); ++i)
    for (std::size_t j = i + 1; j < ranges.size(); ++j)
      CHECK_FALSE(overlap(ranges[i].first, ranges[i].second, ranges[j].first, ranges[j].second));
  // Largest first: 33*100*7 floats at 0, then 100*7, then 7.
  CHECK(plan.offsets.at(chain.ids[2]) == 0);
  CHECK(plan.offsets.at(chain.ids[1]) == 92416);  // 92400 rounded up to 64
  CHECK(plan.offsets.at(chain.ids[0]) == 92416 + 2816);  // 2800 rounded up to 64
  CHECK(plan.arena_bytes == 92416 + 2816 + 64);
}

TEST_CASE("graph inputs, outputs and values nobody writes are not planned") {
  const Chain chain = make_chain({{5}, {5}});
  Groups reads{{0}, {chain.ids[0]}}, writes{{chain.ids[0]}, {chain.ids[1]}};
  const MemoryPlan plan = plan_memory(graph_ir(chain.graph), reads, writes, {}, 16).value();
  CHECK(plan.offsets.size() == 1);
  CHECK(plan.offsets.count(0) == 0);            // x: a graph input
  CHECK(plan.offsets.count(chain.ids[1]) == 0);  // y: a graph output
  CHECK(plan.offsets.at(chain.ids[0]) == 0);
  CHECK(plan.arena_bytes == 32);  // 20 bytes rounded up to 16

  const MemoryPlan empty = plan_memory(graph_ir(chain.graph), {}, {}, {}, 16).value();
  CHECK(empty.offsets.empty());
  CHECK(empty.arena_bytes == 0);
}

TEST_CASE("Constant packing: aligned slots in order, a new block at the limit, an oversized constant alone") {
  // Limit 1000, alignment 64: 100 at 0, 300 at 128, 500 at 448 (ends at 948); 100 would end at 1060:
  // new block; 2000 exceeds the limit: a block of its own; 10 opens the next block.
  const ConstantPacking p = pack_constants({100, 300, 500, 100, 2000, 10}, 64, 1000);
  REQUIRE(p.slots.size() == 6);
  const std::vector<std::pair<std::size_t, std::uint64_t>> expected = {{0, 0}, {0, 128}, {0, 448}, {1, 0}, {2, 0}, {3, 0}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    CHECK(p.slots[i].block == expected[i].first);
    CHECK(p.slots[i].offset == expected[i].second);
    CHECK(p.slots[i].offset % 64 == 0);
  }
  CHECK(p.block_bytes == std::vector<std::uint64_t>{948, 100, 2000, 10});
  CHECK(pack_constants({}, 64, 1000).block_bytes.empty());
  // A constant exactly at the limit fills its block.
  const ConstantPacking full = pack_constants({1000, 1}, 256, 1000);
  CHECK(full.block_bytes == std::vector<std::uint64_t>{1000, 1});
}

}  // namespace vkfuse
