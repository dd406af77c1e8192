// FusionPlanner hazards: whatever it fuses, a plan must run in order (every group reads only what
// earlier dispatches stored), write every graph output once, keep each reduce group's walks over its rows valid, respect
// the binding limit, and turn into kernels that build. Checked on hand-made graphs for each hazard and
// on random graphs (fixed seeds).
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "codegen/kernel_builder.h"
#include "host/fusion_planner.h"
#include "host/group_kernel.h"
#include "host/shape_inference.h"

namespace vkfuse {
namespace {

// A random DAG over shapes that broadcast to [4,6]: elementwise unary and binary ops, reductions over
// the trailing axes, slices, and MatMuls (kernel anchors that take chains after them), with a few
// graph outputs.
Graph random_graph(std::uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  const std::vector<Shape> shapes{{4, 6}, {1, 6}, {4, 1}, {6}, {}};
  const char* unary[] = {"Exp", "Neg", "Relu", "Tanh", "Abs", "Sigmoid"};
  const char* binary[] = {"Add", "Mul", "Sub", "Max"};
  GraphBuilder b;
  std::vector<Tensor> values;
  for (int i = 0; i < 3; ++i) values.push_back(b.input("in" + std::to_string(i), shapes[pick(shapes.size())]));
  values.push_back(b.scalar(0.5f));
  const Tensor weight = b.input("weight", {6, 6});
  std::vector<Tensor> computed;
  const int ops = 6 + static_cast<int>(pick(10));
  for (int i = 0; i < ops; ++i) {
    // Prefer recent values so chains form.
    auto recent = [&] { return values[values.size() - 1 - pick(std::min<std::size_t>(values.size(), 4))]; };
    const Tensor x = recent();
    const Shape xs = b.shape(x);
    Tensor y;
    switch (pick(7)) {
      case 0:
      case 1: y = b.op(unary[pick(6)], {x}); break;
      case 6:
        if (xs.empty() || xs.back() != 6) continue;
        y = b.op("MatMul", {x, weight});
        break;
      case 2:
      case 3: {
        const Tensor other = values[pick(values.size())];
        if (!broadcast_shapes(xs, b.shape(other))) continue;
        y = b.op(binary[pick(4)], {x, other});
        break;
      }
      case 4:
        if (xs.empty()) continue;
        y = b.op(pick(2) ? "ReduceSum" : "ReduceMax", {x},
                 {{"axis", static_cast<float>(pick(xs.size()))}, {"keepdims", static_cast<float>(pick(2))}});
        break;
      default: {
        if (xs.empty()) continue;
        const std::size_t axis = pick(xs.size());
        if (xs[axis] < 2) continue;
        const auto start = static_cast<float>(pick(static_cast<std::size_t>(xs[axis] - 1)));
        y = b.op("Slice", {x}, {{"axis", static_cast<float>(axis)}, {"start", start}, {"end", start + 1 + pick(2)}});
        break;
      }
    }
    REQUIRE_MESSAGE(b.status().ok(), b.status().to_string());
    values.push_back(y);
    computed.push_back(y);
  }
  std::set<int> outputs{computed.back().id};
  for (std::size_t k = pick(3); k-- > 0;) outputs.insert(computed[pick(computed.size())].id);
  for (int id : outputs) b.output(Tensor{id}, "out" + std::to_string(id));
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  return std::move(graph).value();
}

ValueId base_of(const GraphIR& ir, ValueId v) {
  while (ir.value(v).producer != kNoNode && ir.node(ir.value(v).producer).op->kind == OpKind::kView)
    v = ir.node(ir.value(v).producer).inputs[0];
  return v;
}

std::string describe(const GraphIR& ir, const FusionPlan& plan) {
  std::string text;
  for (const FusionGroup& g : plan.groups) {
    text += "  [" + g.label + "] reads";
    for (ValueId v : g.inputs) text += " " + ir.value(v).name;
    text += ", writes";
    for (ValueId v : g.outputs) text += " " + ir.value(v).name;
    text += "\n";
  }
  return text;
}

// The first broken invariant of `plan`, or "".
std::string check_plan(const GraphIR& ir, const FusionPlan& plan, const DevicePlan& device) {
  std::set<ValueId> stored;  // values written by the groups so far
  for (const FusionGroup& g : plan.groups) {
    const std::string where = "group [" + g.label + "]: ";
    if (count_group_bindings(ir, g, device) > device.max_bindings) return where + "over the binding limit";
    const std::set<NodeId> members(g.nodes.begin(), g.nodes.end());
    for (NodeId n : g.nodes)
      if (ir.node(n).op->kind == OpKind::kView) return where + "contains a view";
    // Every input is a graph input, a constant, or (through views) stored by an earlier group.
    for (ValueId v : g.inputs) {
      const ValueId base = base_of(ir, v);
      if (ir.value(base).producer != kNoNode && !stored.count(base))
        return where + "reads '" + ir.value(v).name + "' before any group stores it";
      if (ir.value(v).producer != kNoNode && members.count(ir.value(v).producer))
        return where + "lists its own value '" + ir.value(v).name + "' as an input";
    }
    for (ValueId v : g.outputs) {
      if (!members.count(ir.value(v).producer)) return where + "writes '" + ir.value(v).name + "' it does not compute";
      if (!stored.insert(v).second) return where + "writes '" + ir.value(v).name + "' a second time";
    }
    // A reduce group walks its rows: chain -> reductions -> ops on the reduced values, where an op of
    // the domain's shape may read reduced values in a later walk over the row (row passes) when the
    // reductions keep their dims and rows have at most 4096 elements; at most 4 walks. A reduction
    // never folds a reduced value itself, and an op that reads reduced values and nothing of the
    // domain has the reduced shape or (row passes) the domain's.
    if (g.root == GroupRoot::kReduce) {
      const Node* reduction = nullptr;
      for (NodeId n : g.nodes)
        if (ir.node(n).op->kind == OpKind::kReduce) reduction = &ir.node(n);
      if (!reduction) return where + "a reduce group without a reduction";
      const Shape& domain = ir.value(reduction->inputs[0]).shape;
      const Shape& reduced = ir.value(reduction->output).shape;
      const std::size_t axis = static_cast<std::size_t>(reduce_first_axis(*reduction, domain.size()));
      std::int64_t row = 1;
      for (std::size_t d = axis; d < domain.size(); ++d) row *= domain[d];
      const bool row_passes = reduce_keepdims(*reduction) && row <= 4096;
      std::map<NodeId, int> walk;  // pre values: the walk computing them; reduced: the walk after which they exist
      std::set<NodeId> after_reduce;
      int walks = 1;
      for (NodeId n : g.nodes) {
        const Node& node = ir.node(n);
        bool reads_domain = false, reads_reduced = false;
        int w = 0;
        for (ValueId v : node.inputs) {
          const NodeId p = ir.value(v).producer;
          if (!members.count(p)) continue;
          (after_reduce.count(p) ? reads_reduced : reads_domain) = true;
          w = std::max(w, walk.at(p));
        }
        const Shape& out = ir.value(node.output).shape;
        if (node.op->kind == OpKind::kReduce) {
          if (reads_reduced) return where + "'" + node.name + "' folds a reduced value";
          if (ir.value(node.inputs[0]).shape != domain || ir.value(node.output).shape != reduced)
            return where + "'" + node.name + "' reduces another shape than the group's rows";
          walk[n] = w + 1;
          walks = std::max(walks, w + 1);
          after_reduce.insert(n);
          continue;
        }
        walk[n] = w;
        if (!reads_reduced) continue;
        if (!reads_domain && out == reduced) {
          after_reduce.insert(n);
          continue;
        }
        if (!row_passes || out != domain)
          return where + "'" + node.name + "' needs a reduced value but has the shape " + shape_to_string(out) +
                 (row_passes ? "" : " and the rows allow no second walk");
        walks = std::max(walks, w + 1);
      }
      if (walks > 4) return where + std::to_string(walks) + " walks over each row";
    }
    // A kernel group has one anchor. What it reads from its own group is an elementwise chain computed
    // in its loads, which the group never stores; the rest runs in its stores.
    if (g.root == GroupRoot::kKernel) {
      int anchors = 0;
      for (NodeId n : g.nodes) {
        if (ir.node(n).op->kind != OpKind::kKernel) continue;
        ++anchors;
        for (ValueId v : ir.node(n).inputs) {
          if (!members.count(ir.value(v).producer)) continue;
          if (ir.node(ir.value(v).producer).op->kind != OpKind::kElementwise)
            return where + "the anchor reads a non-elementwise value of its own group";
          if (std::find(g.outputs.begin(), g.outputs.end(), v) != g.outputs.end())
            return where + "stores '" + ir.value(v).name + "', which it computes in the anchor's loads";
        }
      }
      if (anchors != 1) return where + std::to_string(anchors) + " kernel ops in one group";
    }
    auto kernel = make_group_kernel(ir, g, device);
    if (!kernel.ok()) return where + kernel.status().to_string();
    if (count_bindings(kernel->spec) != kernel->bound_values.size() + (kernel->spec.split_counters > 0 ? 2u : 0u))
      return where + "binding count mismatch";
    if (count_bindings(kernel->spec) > count_group_bindings(ir, g, device)) return where + "more bindings than planned";
    auto source = build_kernel(kernel->spec);
    if (!source.ok()) return where + source.status().to_string();
  }
  for (ValueId v : ir.outputs)
    if (!stored.count(v)) return "no group writes the graph output '" + ir.value(v).name + "'";
  return "";
}

Graph build_graph(GraphBuilder& b) {
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  return std::move(graph).value();
}

// check_plan of the fused and the unfused plan ("" when both are sound).
std::string check_both(const Graph& graph) {
  const GraphIR& ir = graph_ir(graph);
  for (FusionMode mode : {FusionMode::kFused, FusionMode::kUnfused}) {
    auto plan = plan_fusion(ir, DevicePlan{}, mode);
    if (!plan.ok()) return plan.status().to_string();
    if (std::string broken = check_plan(ir, *plan, DevicePlan{}); !broken.empty())
      return (mode == FusionMode::kFused ? "fused: " : "unfused: ") + broken + "\n" + describe(ir, *plan);
  }
  return "";
}

}  // namespace

TEST_CASE("a group never reads a view of a value it writes itself") {
  //   x[4,6] ─ Exp ─ e ─┬─ Slice(axis 1, 0:1) ─ s[4,1] ─┐
  //                     └───────────────────────────────Add ─ y
  // Add reads s from memory, so e must be stored by an earlier dispatch: a group that writes e and
  // reads it back through the view races with its own other invocations.
  GraphBuilder b;
  const Tensor e = b.op("Exp", {b.input("x", {4, 6})});
  b.output(b.op("Add", {e, b.op("Slice", {e}, {{"axis", 1}, {"end", 1}})}), "y");
  const std::string broken = check_both(build_graph(b));
  CHECK_MESSAGE(broken.empty(), broken);
}

TEST_CASE("post-fusion through a view and operand scales: the plans build, with what they bind") {
  // Graphs a review found that planned but did not build: a result computed in a view's order stored
  // into a copy or a Concat (it stays its group's own output instead), such a chain turned into a
  // vector stage (it keeps its group), and a one-element post input of a higher rank than the space.
  using Ints = std::vector<std::int64_t>;
  auto matmul_t = [](GraphBuilder& b, std::int64_t n) {
    return b.op("Transpose", {b.op("MatMul", {b.input("a", {6, 8}), b.input("w", {8, n})})}, {{"perm", Ints{1, 0}}});
  };
  SUBCASE("a graph output through a copy of a view of the chain's result") {
    GraphBuilder b;
    b.output(b.op("Transpose", {b.op("Relu", {matmul_t(b, 4)})}, {{"perm", Ints{1, 0}}}), "y");
    const std::string broken = check_both(build_graph(b));
    CHECK_MESSAGE(broken.empty(), broken);
  }
  SUBCASE("heads merged back through a copy (runs of 4), then a MatMul") {
    GraphBuilder b;
    const Tensor m = b.op("MatMul", {b.input("a", {6, 8}), b.input("w", {8, 12})});
    const Tensor t = b.op("Transpose", {b.op("Reshape", {m}, {{"shape", Ints{6, 3, 4}}})}, {{"perm", Ints{1, 0, 2}}});
    const Tensor back = b.op("Transpose", {b.op("Relu", {t})}, {{"perm", Ints{1, 0, 2}}});
    b.output(b.op("MatMul", {b.op("Reshape", {back}, {{"shape", Ints{6, 12}}}), b.input("v", {12, 5})}), "y");
    const std::string broken = check_both(build_graph(b));
    CHECK_MESSAGE(broken.empty(), broken);
  }
  SUBCASE("a Concat of the chain's result") {
    GraphBuilder b;
    const Tensor r = b.op("Relu", {matmul_t(b, 4)});
    b.output(b.op("Concat", {r, b.op("Sigmoid", {b.input("z", {4, 6})})}, {{"axis", 0.0f}}), "y");
    const std::string broken = check_both(build_graph(b));
    CHECK_MESSAGE(broken.empty(), broken);
  }
  SUBCASE("a pooled vector's Gemm read back through a Reshape") {
    GraphBuilder b;
    const Tensor flat = b.op("Flatten", {b.op("GlobalAveragePool", {b.input("x", {2, 13, 4, 4})})}, {{"axis", 1.0f}});
    const Tensor logits = b.op("Gemm", {flat, b.input("w", {10, 13})}, {{"transB", 1.0f}});
    b.output(b.op("Sigmoid", {b.op("Reshape", {logits}, {{"shape", Ints{2, 10, 1, 1}}})}), "y");
    const std::string broken = check_both(build_graph(b));
    CHECK_MESSAGE(broken.empty(), broken);
  }
  SUBCASE("a one-element post input of rank 4 after a view into 3 axes") {
    GraphBuilder b;
    const Tensor t = b.op("Transpose", {b.op("MatMul", {b.input("a", {1, 7, 5, 12}), b.input("w", {12, 13})})},
                          {{"perm", Ints{0, 3, 1, 2}}});
    b.output(b.op("Add", {b.op("Mul", {t, b.input("s", {1, 1, 1, 1})}), b.input("r", {1, 13, 7, 5})}), "y");
    const std::string broken = check_both(build_graph(b));
    CHECK_MESSAGE(broken.empty(), broken);
  }
  SUBCASE("an operand scale whose source is bound in chunks: the planner counts what the kernel binds") {
    GraphBuilder b;
    const Tensor qkv = b.op("MatMul", {b.input("x", {64, 8}), b.input("w", {8, 48})});
    const Tensor q = b.op("Slice", {qkv}, {{"axis", 1.0f}, {"start", 0.0f}, {"end", 16.0f}});
    b.output(b.op("MatMul", {b.op("Mul", {q, b.scalar(0.5f)}), b.input("w2", {16, 5})}), "y");
    b.output(b.op("Relu", {b.op("Slice", {qkv}, {{"axis", 1.0f}, {"start", 16.0f}, {"end", 32.0f}})}), "k");
    const Graph graph = build_graph(b);
    const GraphIR& ir = graph_ir(graph);
    DevicePlan device;
    device.max_binding_bytes = 8192;  // qkv (12288 bytes) in two chunks; q's 4096 in one
    auto plan = plan_fusion(ir, device, FusionMode::kFused);
    REQUIRE(plan.ok());
    bool scaled = false;
    for (const FusionGroup& g : plan->groups) {
      if (g.scales.empty()) continue;
      scaled = true;
      auto kernel = make_group_kernel(ir, g, device);
      REQUIRE_MESSAGE(kernel.ok(), kernel.status().to_string());
      // What the kernel binds (inputs by chunk, and outputs) and the scratch the planner reserves for
      // the anchor (split K).
      const std::size_t scratch = scratch_bindings(*ir.node(g.anchor).op, device);
      CHECK(count_group_bindings(ir, g, device) == kernel->bound_values.size() + scratch);
    }
    CHECK(scaled);
    CHECK(check_plan(ir, *plan, device).empty());
  }
}

TEST_CASE("a reduction that reads another's result folds in a later walk, or in another group") {
  //   x[3,n] ─ Tanh ─ t ─ ReduceSum ─ r1 ─┐
  //                   └──────────────────Add ─ ReduceSum ─ r2 ─ Sub(r2, r1) ─ y
  // The second reduction folds values that need r1, which exists only once the first reduction has
  // finished: a second walk over each row where rows are short (n = 6), another group where they are
  // long (n = 5000) or the reductions drop their dims.
  for (const std::int64_t n : {6, 5000})
    for (const float keepdims : {1.0f, 0.0f}) {
      CAPTURE(n);
      CAPTURE(keepdims);
      GraphBuilder b;
      const Tensor t = b.op("Tanh", {b.input("x", {3, n})});
      const Tensor r1 = b.op("ReduceSum", {t}, {{"axis", 1}, {"keepdims", keepdims}});
      const Tensor r1_row = keepdims != 0.0f ? r1 : b.op("Unsqueeze", {r1}, {{"axes", std::vector<std::int64_t>{1}}});
      const Tensor r2 = b.op("ReduceSum", {b.op("Add", {t, r1_row})}, {{"axis", 1}, {"keepdims", keepdims}});
      b.output(b.op("Sub", {r2, r1}), "y");
      const Graph graph = build_graph(b);
      const std::string broken = check_both(graph);
      CHECK_MESSAGE(broken.empty(), broken);
      auto fused = plan_fusion(graph_ir(graph), DevicePlan{}, FusionMode::kFused);
      REQUIRE(fused.ok());
      CHECK(fused->groups.size() == (n == 6 && keepdims != 0.0f ? 1u : 2u));
    }
}

TEST_CASE("a view that is a graph output is still written") {
  // y = Slice(Exp(x)): views never dispatch, but some group must store y, or the session downloads an
  // output buffer nothing wrote.
  GraphBuilder b;
  b.output(b.op("Slice", {b.op("Exp", {b.input("x", {8})})}, {{"start", 2}, {"end", 6}}), "y");
  const Graph graph = build_graph(b);
  CHECK(graph_ir(graph).value(graph_ir(graph).outputs.at(0)).name == "y");
  const std::string broken = check_both(graph);
  CHECK_MESSAGE(broken.empty(), broken);
}

TEST_CASE("plans of random graphs are sound") {
  // 300 graphs, fused and unfused, with the default and a tight binding limit. On failure: how many
  // plans broke, which seeds, and the first broken plan in full.
  int failures = 0;
  std::string seeds, first;
  for (std::uint32_t seed = 1; seed <= 300; ++seed) {
    const Graph graph = random_graph(seed);
    const GraphIR& ir = graph_ir(graph);
    for (std::uint32_t limit : {16u, 4u})
      for (FusionMode mode : {FusionMode::kFused, FusionMode::kUnfused}) {
        DevicePlan device;
        device.max_bindings = limit;
        auto plan = plan_fusion(ir, device, mode);
        std::string broken = plan.ok() ? check_plan(ir, *plan, device) : plan.status().to_string();
        if (broken.empty()) continue;
        if (failures++ == 0)
          first = "seed " + std::to_string(seed) + ", limit " + std::to_string(limit) +
                  (mode == FusionMode::kFused ? ", fused: " : ", unfused: ") + broken + "\n" +
                  (plan.ok() ? describe(ir, *plan) : "");
        seeds += " " + std::to_string(seed);
      }
  }
  CHECK_MESSAGE(failures == 0, failures << " broken plans (seeds" << seeds << "); the first:\n" << first);
}

}  // namespace vkfuse
