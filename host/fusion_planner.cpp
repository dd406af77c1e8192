#include "host/fusion_planner.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "host/attention_kernel.h"
#include "host/concat_families.h"
#include "host/copy_placement.h"
#include "host/element_rows_kernel.h"
#include "host/group_kernel.h"
#include "host/ops/kernel_support.h"
#include "host/shape_inference.h"
#include "host/view_reorder.h"

namespace vkfuse {
namespace {

bool is_float_dtype(DType dtype) { return dtype == DType::kF32 || dtype == DType::kF16; }

// Where a node sits in its group: before the reduction (over the domain), the reduction itself, or
// after it (over the reduced shape). Elementwise groups only have kPre.
enum class Phase { kPre, kReduce, kPost };

struct Draft {
  GroupRoot root = GroupRoot::kElementwise;
  std::set<NodeId> nodes;
  Shape domain;
  Shape reduced;   // reduce groups: the reductions' output shape; kernel groups: the anchor's output shape
  NodeId anchor = kNoNode;  // kernel groups: the kernel op
  std::set<NodeId> scales;  // kernel groups: operand scales applied to the anchor's result
  int axis = 0;    // reduce groups: first reduced axis
  bool keepdims = true;
  bool alive = true;
};

// A draft's outside producers (Planner::draft_dependencies), for the node set they were found for.
struct OutsideProducers {
  bool valid = false;
  std::size_t size = 0;
  NodeId first = kNoNode, last = kNoNode;
  std::vector<NodeId> producers;
};

// Planner::reaches: a draft is cleared (depends on no target) in the question of cleared_epoch, seen
// in the walk of seen_epoch.
struct ReachMarks {
  std::vector<std::uint32_t> cleared, seen;
  std::uint32_t cleared_epoch = 0, seen_epoch = 0;
};

class Planner {
 public:
  Planner(const GraphIR& graph, const DevicePlan& device) : graph_(graph), device_(device) {}

  Result<FusionPlan> run(FusionMode mode) {
    if (mode == FusionMode::kFused) {
      families_ = find_concat_families(graph_);
      index_families();
    }
    if (place_all(mode) < families_.size()) {
      // A family found but not placed (a member took a recomputed input chain; another family stores
      // its input) runs: its Concats may take their post chains after all, so plan again without it.
      // The others stay placeable: their members refuse chains as before, and fewer families compete.
      std::erase_if(families_, [&](const ConcatFamily& f) { return !in_place_.count(f.root); });
      index_families();
      place_all(mode);
    }
    if (mode == FusionMode::kFused) {
      merge_vector_chains();
      merge_attention_chains();
      merge_element_rows();
    }
    return finish();
  }

 private:
  // Forms the groups from scratch, then (fused) writes the Concats it can in place; returns how many
  // families were placed.
  std::size_t place_all(FusionMode mode) {
    drafts_.clear();
    producers_of_.clear();
    level_.clear();
    levels_stale_ = false;
    view_ordered_.clear();
    in_place_.clear();
    stored_in_.clear();
    prefix_of_.clear();
    group_of_.assign(graph_.nodes.size(), -1);
    phase_.assign(graph_.nodes.size(), Phase::kPre);
    for (NodeId n = 0; n < static_cast<NodeId>(graph_.nodes.size()); ++n) {
      const Node& node = graph_.node(n);
      if (node.op->kind == OpKind::kView) continue;  // an index map, no group
      place(n, mode);
    }
    if (mode != FusionMode::kFused) return 0;
    const std::size_t placed = place_concats_in_place();
    place_copies_in_place();
    levels_stale_ = true;  // in-place stores change what groups read
    return placed;
  }

  // The group that computes `v`, or -1 (graph input, constant, view).
  int producer_group(ValueId v) const {
    const NodeId p = graph_.value(v).producer;
    return p == kNoNode || graph_.is_view(v) ? -1 : group_of_[static_cast<std::size_t>(p)];
  }

  // Can `n` join group g through its input `v`? Sets the phase `n` would have there.
  // `viewed`: n reads v through a reordering view of that shape (post-fusion through a view).
  bool can_join(const Draft& g, NodeId n, ValueId v, Phase& phase, const Shape* viewed = nullptr) const {
    const Node& node = graph_.node(n);
    if (node.op->kind == OpKind::kKernel || (viewed && g.root != GroupRoot::kKernel)) return false;
    const Shape& out = graph_.value(node.output).shape;
    const Phase v_phase = phase_[static_cast<std::size_t>(graph_.value(v).producer)];
    if (g.root == GroupRoot::kKernel) {
      if (node.op->kind == OpKind::kReduce) {
        phase = Phase::kPost;
        return v_phase != Phase::kPre && joins_as_plane_sum(g, n, v);
      }
      if (graph_.node(graph_.value(v).producer).op->kind == OpKind::kReduce) return false;  // a plane sum: stored last
      // Post-fusion: an elementwise chain on the anchor's float result runs in its store. Not after a
      // Concat to be written in place: the chain runs where it is read instead (in the loads of the
      // anchor that reads it, or as a group of its own), and the Concat does not run.
      if (node.op->kind != OpKind::kElementwise || !is_float_dtype(graph_.value(graph_.node(g.anchor).output).dtype) ||
          family_members_.count(g.anchor))
        return false;
      if (v_phase == Phase::kPre) return false;  // a value computed in the anchor's loads, not its stores
      phase = Phase::kPost;
      const Shape* in_view = viewed_shape(g);
      if (viewed) return out == *viewed && (!in_view || *in_view == *viewed);
      return out == g.reduced || (in_view && out == *in_view);
    }
    if (node.op->kind == OpKind::kReduce) {
      const Shape& in = graph_.value(node.inputs[0]).shape;
      if (v_phase != Phase::kPre || in != g.domain) return false;
      if (g.root == GroupRoot::kReduce &&
          (g.axis != reduce_first_axis(node, in.size()) || g.keepdims != reduce_keepdims(node)))
        return false;
      phase = Phase::kReduce;
      return true;
    }
    if (v_phase == Phase::kPre) {
      phase = Phase::kPre;
      return out == g.domain;
    }
    if (out == g.reduced) {
      phase = Phase::kPost;
      return true;
    }
    // Row passes: an op over the domain that reads reduced values runs in a later walk over the row.
    phase = Phase::kPre;
    return g.root == GroupRoot::kReduce && out == g.domain && allows_row_passes(g.domain, g.axis, g.keepdims);
  }

  // Whether a reduce group over `domain` (rows: the axes from `axis` on) may walk each row more than
  // once: its reduced values broadcast back along the rows (keepdims) and a row is short enough for one
  // workgroup to walk it kMaxRowPasses times at the cost of one read from memory (it stays in the caches).
  static bool allows_row_passes(const Shape& domain, int axis, bool keepdims) {
    if (!keepdims) return false;
    std::int64_t inner = 1;
    for (std::size_t d = static_cast<std::size_t>(axis); d < domain.size(); ++d) inner *= domain[d];
    return inner <= kRowPassMaxInner;
  }

  // Plane sums: a ReduceSum or ReduceMean over the last two axes of a kernel group's 4-D result (the
  // anchor's, or its post chain's) joins the group where the anchor's template can fold its stores
  // over planes (KernelLaunch::plane_sums: the depthwise Conv's, where its workgroups can take whole
  // planes and keep the GPU as busy; the implicit GEMM's at batch 1 where the sums are all the group
  // stores, host/ops/conv_ops.cpp add_plane_sums). The pooling of a squeeze-and-excitation block, or a
  // network's final pooling, then needs no dispatch or barrier of its own:
  //   x ─ Conv(depthwise) ─ Sigmoid ─ Mul ─┬─ ReduceMean(2, 3) ─ s   => [Conv -> Sigmoid -> Mul -> ReduceMean]
  //                                        └─ (the block's product)
  //   x ─ Conv(1x1) ─ Relu ─ ReduceMean(2, 3) ─ Flatten ─ Gemm   => [Conv -> Relu -> ReduceMean] [Gemm]
  // One per group; nothing after it joins.
  //   (tests/unit "plane sums: a squeeze-and-excitation block's pooling joins the depthwise Conv",
  //   "plane sums: a network's final pooling joins the implicit-GEMM Conv")
  bool joins_as_plane_sum(const Draft& g, NodeId n, ValueId v) const {
    const Node& node = graph_.node(n);
    const Shape& in = graph_.value(v).shape;
    if ((node.op->combine != ReduceCombine::kSum && node.op->combine != ReduceCombine::kMean) || in != g.reduced ||
        in.size() != 4 || reduce_first_axis(node, in.size()) != 2 || !is_float_dtype(graph_.value(node.output).dtype))
      return false;
    std::set<NodeId> readers = g.nodes;
    readers.insert(n);
    bool pooled_only = true;  // the sums are all the group would store (TensorInfo::pooled_only)
    for (NodeId q : g.nodes) {
      if (graph_.node(q).op->kind == OpKind::kReduce) return false;
      pooled_only = pooled_only && read_only_by(graph_.node(q).output, readers);
    }
    const auto launch = anchor_launch(g.anchor, std::nullopt, 0.0f, true, pooled_only);
    return launch && launch->plane_sums;
  }

  // The groups a node set reads from: the home group of every value it reads but does not compute (for
  // a Concat written in place, the groups that store its inputs).
  std::set<int> dependencies(const std::set<NodeId>& nodes) const { return groups_storing(outside_producers(nodes)); }

  // The computing nodes outside `nodes` whose values (through views) `nodes` read: what
  // dependencies() maps to groups. Homes change as groups merge; these do not while the set stays.
  std::vector<NodeId> outside_producers(const std::set<NodeId>& nodes) const {
    std::vector<NodeId> producers;
    for (NodeId n : nodes)
      for (ValueId v : graph_.node(n).inputs) {
        const NodeId p = stored_producer(v);
        if (p != kNoNode && !nodes.count(p)) producers.push_back(p);
      }
    std::sort(producers.begin(), producers.end());
    producers.erase(std::unique(producers.begin(), producers.end()), producers.end());
    return producers;
  }

  // dependencies() of draft g, from its outside producers kept per draft: the cycle checks ask for
  // the same groups' dependencies again and again, and a draft's nodes only grow while it lives
  // (a dead one is cleared or frozen), so its size and ends tell whether they are still current.
  std::set<int> draft_dependencies(int g) const {
    const std::set<NodeId>& nodes = drafts_[static_cast<std::size_t>(g)].nodes;
    if (producers_of_.size() < drafts_.size()) producers_of_.resize(drafts_.size());
    OutsideProducers& cached = producers_of_[static_cast<std::size_t>(g)];
    const NodeId first = nodes.empty() ? kNoNode : *nodes.begin(), last = nodes.empty() ? kNoNode : *nodes.rbegin();
    if (!cached.valid || cached.size != nodes.size() || cached.first != first || cached.last != last)
      cached = {true, nodes.size(), first, last, outside_producers(nodes)};
    return groups_storing(cached.producers);
  }

  // The groups that store the values of `producers` (for a Concat written in place, its inputs').
  std::set<int> groups_storing(const std::vector<NodeId>& producers) const {
    std::set<int> deps;
    for (NodeId p : producers) {
      if (!in_place_.count(p)) {
        deps.insert(group_of_[static_cast<std::size_t>(p)]);
        continue;
      }
      if (graph_.node(p).op->copies_input) {  // a copy in place: the groups that store into it
        for (const auto& [part, slice] : stored_in_)
          if (slice.into == graph_.node(p).output) deps.insert(group_of_[static_cast<std::size_t>(graph_.value(part).producer)]);
        continue;
      }
      add_part_groups(p, deps);
    }
    return deps;
  }

  // The groups that store the inputs of `concat`, a Concat written in place (through a leading Concat
  // of its family, also in place, to the groups that store that one's inputs).
  void add_part_groups(NodeId concat, std::set<int>& deps) const {
    for (ValueId part : graph_.node(concat).inputs) {
      const NodeId q = graph_.value(part).producer;
      if (in_place_.count(q) && !graph_.node(q).op->copies_input) add_part_groups(q, deps);
      else deps.insert(group_of_[static_cast<std::size_t>(q)]);
    }
  }

  // Concat in place: a Concat whose every input is stored by another group for it alone has those
  // groups store their results straight into its slices, and does not run; so do the Concats of a
  // family (host/concat_families.h), whose outputs are its root's leading elements.
  //   Conv ─ Relu ─┐                  [Conv -> Relu (into Concat)]  stores y[:, 0:64]
  //   Conv ─ Relu ─┴─ Concat ─ y  =>  [Conv -> Relu (into Concat)]  stores y[:, 64:128]
  // (tests/unit "Concat in place: producers store into its slices", "... a dense block's Concats share
  // the last one's buffer", tests/gpu "Concat written in place")
  // The families are found from the graph before any group forms, so that their Concats take no post
  // chain (can_join); place_concats_in_place applies them once groups have formed.
  void index_families() {
    family_members_.clear();
    for (const ConcatFamily& family : families_) family_members_.insert(family.members.begin(), family.members.end());
  }

  // Returns how many families went in place.
  std::size_t place_concats_in_place() {
    std::size_t placed = 0;
    // In graph order, and a value goes into one Concat only. Where a family's Concat reads another's (a
    // Concat of Concats), the earlier one goes in place and the later one, whose input's group is then
    // gone, runs; so does a family whose input or member an earlier family already stores into its root
    // (two Concats that start with the same value; a member that an earlier Concat reads).
    for (const ConcatFamily& family : families_) {
      bool ready = true;  // each member alone in its group and stored nowhere else, each input stored by a group
      for (NodeId m : family.members) {
        const int g = group_of_[static_cast<std::size_t>(m)];
        ready = ready && g >= 0 && drafts_[static_cast<std::size_t>(g)].alive && drafts_[static_cast<std::size_t>(g)].nodes.size() == 1 &&
                !stored_in_.count(graph_.node(m).output);
      }
      for (ValueId v : family.inputs) {
        const int g = producer_group(v);
        ready = ready && g >= 0 && drafts_[static_cast<std::size_t>(g)].alive && !stored_in_.count(v) &&
                !view_ordered_.count(graph_.value(v).producer);
      }
      if (!ready) continue;
      const ValueId into = graph_.node(family.root).output;
      for (NodeId m : family.members) {
        drafts_[static_cast<std::size_t>(group_of_[static_cast<std::size_t>(m)])].alive = false;
        in_place_.insert(m);
        if (m != family.root) prefix_of_[graph_.node(m).output] = into;
      }
      const std::vector<ValueId>& inputs = family.inputs;
      for (std::size_t k = 0; k < inputs.size(); ++k) {
        stored_in_[inputs[k]] = {into, family.places[k]};
        if (family.places[k].identity()) prefix_of_[inputs[k]] = into;  // read elsewhere as the leading bytes
      }
      ++placed;
    }
    return placed;
  }

  // Copies in place: an Identity that runs alone and copies a view which reorders a value X read by
  // nothing else (every element of X lands once in the copy T) has X's group store X straight into T,
  // each element where the copy would put it, where those places form one ElementPlacement of runs of
  // at least kMinPlacedRun elements, or blocks of such runs (vit_b_16's heads merged back, [12, 197,
  // 64] -> [197, 12, 64], one block level more per image of a batch). Where X is a Concat written in place,
  // each of its inputs' groups stores its slice there, and neither the copy nor the Concat runs.
  // shufflenet's channel shuffle:
  //   b1 ─┐                                      [... (into Identity)] b1 -> T[:, 0::2]
  //   b2 ─┴─ Concat ─ Reshape ─ Transpose ─ Identity ─ T  =>  [... (into Identity)] b2 -> T[:, 1::2]
  // (tests/unit "copies in place: a channel shuffle is stored by the Concat's inputs", tests/gpu
  // "copies in place")
  // Runs of fewer elements scatter the stores: the copy's own pass, coalesced, was as fast or faster
  // (docs/tuning-log.md, "kMinPlacedRun").
  static constexpr std::int64_t kMinPlacedRun = 4;

  void place_copies_in_place() {
    index_holders();
    for (NodeId c = 0; c < static_cast<NodeId>(graph_.nodes.size()); ++c) {
      const Node& copy = graph_.node(c);
      const int g = group_of_[static_cast<std::size_t>(c)];
      if (!copy.op->copies_input || g < 0 || !drafts_[static_cast<std::size_t>(g)].alive ||
          drafts_[static_cast<std::size_t>(g)].nodes.size() != 1 || !graph_.is_view(copy.inputs[0]))
        continue;
      // Not where another group computes the copy in its loads: that group reads the view of X, so X stays.
      bool recomputed = false;
      for (int d : holders_[static_cast<std::size_t>(c)])
        recomputed = recomputed || (d != g && drafts_[static_cast<std::size_t>(d)].alive);
      if (recomputed) continue;
      // The chain of views from X to the copy, each value read by the next alone.
      ValueId v = copy.inputs[0];
      NodeId reader = c;
      bool alone = true;
      for (;;) {
        const Value& value = graph_.value(v);
        alone = alone && !value.is_output && value.consumers.size() == 1 && value.consumers[0] == reader;
        if (!alone || !graph_.is_view(v)) break;
        reader = value.producer;
        v = graph_.node(reader).inputs[0];
      }
      const NodeId p = graph_.value(v).producer;
      if (!alone || p == kNoNode || graph_.value(v).constant || prefix_of_.count(v) || stored_in_.count(copy.output) ||
          prefix_of_.count(copy.output))
        continue;
      // The parts stored into X: X itself from its group, or a Concat's inputs from theirs.
      std::vector<std::pair<ValueId, ElementPlacement>> parts;
      if (in_place_.count(p)) {
        if (graph_.node(p).op->copies_input) continue;
        for (ValueId part : graph_.node(p).inputs) {
          const auto slice = stored_in_.find(part);
          if (slice == stored_in_.end() || slice->second.into != v) break;
          parts.push_back({part, slice->second.placement});
        }
        if (parts.size() != graph_.node(p).inputs.size()) continue;
      } else {  // (vector groups form later, and never from a value read only through views)
        const int h = group_of_[static_cast<std::size_t>(p)];
        if (h < 0 || !drafts_[static_cast<std::size_t>(h)].alive || stored_in_.count(v) || view_ordered_.count(p)) continue;
        parts.push_back({v, ElementPlacement{}});
      }
      // Nothing may read X's leading bytes (an input that something besides the Concat reads, a member
      // Concat of a family): they move.
      bool prefix_read = false;
      for (const auto& [part, at] : parts) prefix_read = prefix_read || graph_.value(part).consumers.size() > 1;
      for (const auto& [value, whole] : prefix_of_) {
        const ValueId prefix = value;  // Clang 14 cannot capture a structured binding
        prefix_read = prefix_read || (whole == v && std::none_of(parts.begin(), parts.end(), [&](const auto& part) { return part.first == prefix; }));
      }
      if (prefix_read) continue;
      auto view = resolve_view(graph_, copy.inputs[0]);
      if (!view.ok()) continue;
      const auto copy_index = invert_view(view->layout, shape_numel(graph_.value(v).shape));
      if (!copy_index) continue;
      std::vector<ElementPlacement> places;
      for (const auto& [part, at] : parts)
        if (auto place = place_through(*copy_index, at, shape_numel(graph_.value(part).shape));
            place && (place->slice == 0 || place->slice >= kMinPlacedRun))
          places.push_back(*place);
      if (places.size() != parts.size()) continue;
      drafts_[static_cast<std::size_t>(g)].alive = false;
      in_place_.insert(c);
      for (std::size_t k = 0; k < parts.size(); ++k) {
        stored_in_[parts[k].first] = {copy.output, places[k]};
        prefix_of_.erase(parts[k].first);
      }
    }
  }

  // Whether view v takes every element of the value it views exactly once (host/view_reorder.h): a post
  // chain may then read a kernel group's result through it and run in the anchor's stores (can_join,
  // forms_valid_group): the chain's own dispatch goes, which paid on convnext_tiny (docs/tuning-log.md,
  // "reorders").
  bool reorders(ValueId v) const {
    auto view = resolve_view(graph_, v);
    return view.ok() && reordered_space(graph_.value(view->base).shape, view->layout).has_value();
  }

  // The shape of kernel draft d's post chain in a view's order (view_ordered_), if it reads its result
  // through a view.
  const Shape* viewed_shape(const Draft& d) const {
    for (NodeId q : d.nodes)
      if (view_ordered_.count(q)) return &graph_.value(graph_.node(q).output).shape;
    return nullptr;
  }

  // The value in memory behind a value: itself, or the base a chain of views reads.
  ValueId stored_value(ValueId v) const { return graph_.view_base(v); }

  // The computing node behind a value (through views), or kNoNode for graph inputs and constants.
  NodeId stored_producer(ValueId v) const { return graph_.value(stored_value(v)).producer; }

  // The groups a value's data comes from (a view's data comes from its base's group).
  std::vector<int> source_groups(ValueId v) const {
    v = stored_value(v);
    const int g = producer_group(v);
    return g < 0 ? std::vector<int>{} : std::vector<int>{g};
  }

  NodeId group_nodes_first(int g) const { return *drafts_[static_cast<std::size_t>(g)].nodes.begin(); }

  // Whether group `from` depends, through any chain of groups, on one of `targets`. The groups marked
  // cleared are known not to (for the same targets): the walk skips them, and a walk that finds no
  // target clears every group it saw, so the walks of one question (creates_cycle asks it of several
  // groups) visit each group at most once. A group whose level is at most the targets' lowest cannot
  // depend on one either: skipped too, so a walk stays near the targets instead of crossing the graph.
  bool reaches(int from, const std::set<int>& targets, ReachMarks& marks) const {
    marks.seen.resize(drafts_.size(), 0);
    marks.cleared.resize(drafts_.size(), 0);
    ++marks.seen_epoch;
    if (levels_stale_ || level_.size() < drafts_.size()) compute_levels();
    int floor = std::numeric_limits<int>::max();
    for (int t : targets) floor = std::min(floor, level_[static_cast<std::size_t>(t)]);
    std::vector<int> stack{from}, seen;
    while (!stack.empty()) {
      const int g = stack.back();
      stack.pop_back();
      if (targets.count(g)) return true;
      const auto at = static_cast<std::size_t>(g);
      if (level_[at] <= floor || marks.cleared[at] == marks.cleared_epoch || marks.seen[at] == marks.seen_epoch) continue;
      marks.seen[at] = marks.seen_epoch;
      seen.push_back(g);
      for (int d : draft_dependencies(g)) stack.push_back(d);
    }
    for (int g : seen) marks.cleared[static_cast<std::size_t>(g)] = marks.cleared_epoch;
    return false;
  }

  // Merging `merge` with `n` creates a cycle when a group outside the merge, which the merged group
  // would read, itself depends on a group inside the merge.
  bool creates_cycle(const std::set<int>& merge, NodeId n) const {
    ReachMarks& marks = new_reach_question();
    for (ValueId v : graph_.node(n).inputs)
      for (int h : source_groups(v))
        if (!merge.count(h) && reaches(h, merge, marks)) return true;
    for (int g : merge)
      for (int h : draft_dependencies(g))
        if (!merge.count(h) && reaches(h, merge, marks)) return true;
    return false;
  }

  // Whether merging the groups `merge` into one of `nodes` creates a cycle: a group outside the merge
  // that the merged nodes read depends on one inside it.
  bool merge_cycles(const std::set<int>& merge, const std::set<NodeId>& nodes) const {
    ReachMarks& marks = new_reach_question();
    for (int h : dependencies(nodes))
      if (!merge.count(h) && reaches(h, merge, marks)) return true;
    return false;
  }

  // Starts a question for reaches(): no group is cleared yet.
  ReachMarks& new_reach_question() const {
    ++reach_marks_.cleared_epoch;
    return reach_marks_;
  }

  // Levels: draft X depends on Y => level(X) > level(Y), so that reaches() can skip groups that cannot
  // lead to its targets. The draft place() made for its node takes one more than the highest level it
  // reads. Its readers are those of the drafts it merged, each above those drafts' levels; where the
  // new level exceeds the lowest of them, a reader may no longer be above it, and all are recomputed
  // at the next question. Fresh drafts (nothing reads the newest node yet) and a chain's growth keep
  // them exact without.
  void set_level(int id, const std::set<int>& merged) {
    if (level_.size() < drafts_.size()) level_.resize(drafts_.size(), 0);
    int level = 0;
    for (int d : draft_dependencies(id)) level = std::max(level, level_[static_cast<std::size_t>(d)] + 1);
    level_[static_cast<std::size_t>(id)] = level;
    for (int g : merged) levels_stale_ = levels_stale_ || level > level_[static_cast<std::size_t>(g)];
  }

  // Every draft's level from scratch: the longest chain of dependencies below it (depth-first, no recursion).
  void compute_levels() const {
    level_.assign(drafts_.size(), -1);
    std::vector<std::pair<int, bool>> stack;  // (draft, its dependencies pushed)
    for (int root = 0; root < static_cast<int>(drafts_.size()); ++root) {
      if (level_[static_cast<std::size_t>(root)] >= 0) continue;
      stack.push_back({root, false});
      while (!stack.empty()) {
        auto [g, expanded] = stack.back();
        stack.pop_back();
        int& level = level_[static_cast<std::size_t>(g)];
        if (expanded) {
          level = 0;
          for (int d : draft_dependencies(g)) level = std::max(level, level_[static_cast<std::size_t>(d)] + 1);
          continue;
        }
        if (level >= 0) continue;
        level = 0;  // in progress: a cycle (which finish() reports) reads it as 0
        stack.push_back({g, true});
        for (int d : draft_dependencies(g))
          if (level_[static_cast<std::size_t>(d)] < 0) stack.push_back({d, false});
      }
    }
    levels_stale_ = false;
  }

  // Whether a node of `nodes` whose home is one of the groups `merge` is also computed in another live
  // group (recomputed in its loads or chain): merged, its value would no longer be stored for it. Copies
  // the merged groups hold of cheap nodes whose homes are other groups stay copies.
  bool computed_elsewhere(const std::set<int>& merge, const std::set<NodeId>& nodes) const {
    for (int h = 0; h < static_cast<int>(drafts_.size()); ++h) {
      const Draft& other = drafts_[static_cast<std::size_t>(h)];
      if (merge.count(h) || !other.alive) continue;
      for (NodeId q : nodes)
        if (merge.count(group_of_[static_cast<std::size_t>(q)]) && other.nodes.count(q)) return true;
    }
    return false;
  }

  // Moves the nodes of `nodes` whose home is one of `merge` to group g (their new home).
  void rehome(const std::set<int>& merge, const std::set<NodeId>& nodes, int g) {
    for (NodeId q : nodes)
      if (merge.count(group_of_[static_cast<std::size_t>(q)])) group_of_[static_cast<std::size_t>(q)] = g;
  }

  std::size_t bindings_of(const std::set<NodeId>& nodes, const std::set<NodeId>& scales = {}) const {
    FusionGroup probe;
    probe.nodes.assign(nodes.begin(), nodes.end());
    probe.scales.assign(scales.begin(), scales.end());
    fill_io(probe);
    return count_group_bindings(graph_, probe, device_);
  }

  void place(NodeId n, FusionMode mode) {
    const Node& node = graph_.node(n);
    std::set<int> merge;
    std::optional<Phase> phase;
    std::optional<Shape> viewed;  // n joins a kernel group through a reordering view of this shape
    if (mode == FusionMode::kFused) {
      for (ValueId v : node.inputs) {
        ValueId read = v;
        std::optional<Shape> through;
        if (graph_.is_view(v)) {
          if (node.op->copies_input || !reorders(v)) continue;  // (a copy of a view is stored in place instead)
          read = stored_value(v);
          through = graph_.value(v).shape;
        }
        const int g = producer_group(read);
        if (g < 0 || merge.count(g)) continue;
        const Draft& draft = drafts_[static_cast<std::size_t>(g)];
        Phase p;
        if (!can_join(draft, n, read, p, through ? &*through : nullptr) || (phase && *phase != p)) continue;
        if (!compatible_with(merge, draft)) continue;
        std::set<int> trial = merge;
        trial.insert(g);
        if (creates_cycle(trial, n)) continue;
        std::set<NodeId> nodes{n}, scales;
        for (int t : trial) {
          const Draft& d = drafts_[static_cast<std::size_t>(t)];
          nodes.insert(d.nodes.begin(), d.nodes.end());
          scales.insert(d.scales.begin(), d.scales.end());
        }
        if (nodes.size() > kMaxGroupNodes || bindings_of(nodes, scales) > device_.max_bindings || !forms_valid_group(nodes))
          continue;
        merge = std::move(trial);
        phase = p;
        if (through) viewed = through;
      }
    }
    // n computes in a view's order where it joins through the view or reads a value computed so.
    bool view_ordered = viewed.has_value();
    for (ValueId v : node.inputs) {
      const NodeId p = graph_.value(v).producer;
      view_ordered = view_ordered || (!graph_.is_view(v) && p != kNoNode && view_ordered_.count(p) &&
                                      merge.count(group_of_[static_cast<std::size_t>(p)]));
    }
    if (view_ordered) view_ordered_.insert(n);
    if (mode == FusionMode::kFused && merge.empty() && node.op->kind == OpKind::kReduce) {
      // Sibling reductions: a reduction of a stored tensor joins a reduce group that already folds the
      // same tensor over the same axes, so the tensor is read once.
      //   x ─┬─ ReduceSum        => [ReduceSum -> ReduceMax]
      //      └─ ReduceMax           (tests/unit "two reductions of one input share the group")
      const ValueId in = node.inputs[0];
      for (NodeId sibling : graph_.value(in).consumers) {
        const int g = sibling < n ? group_of_[static_cast<std::size_t>(sibling)] : -1;
        if (g < 0 || graph_.node(sibling).op->kind != OpKind::kReduce) continue;
        const Draft& draft = drafts_[static_cast<std::size_t>(g)];
        if (!draft.alive || draft.domain != graph_.value(in).shape) continue;
        if (draft.axis != reduce_first_axis(node, draft.domain.size()) || draft.keepdims != reduce_keepdims(node)) continue;
        std::set<NodeId> nodes = draft.nodes;
        nodes.insert(n);
        if (nodes.size() > kMaxGroupNodes || creates_cycle({g}, n) || bindings_of(nodes) > device_.max_bindings ||
            !forms_valid_group(nodes))
          continue;
        merge = {g};
        phase = Phase::kReduce;
        break;
      }
    }
    Draft merged;
    if (merge.empty()) {
      merged = fresh_draft(n);
    } else {
      merged = drafts_[static_cast<std::size_t>(*merge.begin())];
      for (int g : merge) {
        Draft& d = drafts_[static_cast<std::size_t>(g)];
        merged.nodes.insert(d.nodes.begin(), d.nodes.end());
        if (d.root == GroupRoot::kReduce) {
          merged.root = GroupRoot::kReduce;
          merged.reduced = d.reduced;
          merged.axis = d.axis;
          merged.keepdims = d.keepdims;
        }
        d.alive = false;
        d.nodes.clear();
      }
      merged.nodes.insert(n);
      if (node.op->kind == OpKind::kReduce && merged.root != GroupRoot::kKernel) {  // (in a kernel group: a plane sum)
        const Shape& in = graph_.value(node.inputs[0]).shape;
        merged.root = GroupRoot::kReduce;
        merged.reduced = graph_.value(node.output).shape;
        merged.axis = reduce_first_axis(node, in.size());
        merged.keepdims = reduce_keepdims(node);
      }
      phase_[static_cast<std::size_t>(n)] = *phase;
    }
    merged.alive = true;
    if (mode == FusionMode::kFused && phase_[static_cast<std::size_t>(n)] != Phase::kPost)
      recompute_inputs(n, merged, merged.root == GroupRoot::kKernel ? kAnchorLoadBudget : kRecomputeBudget);
    drafts_.push_back(std::move(merged));
    const int id = static_cast<int>(drafts_.size() - 1);
    // The new group is home to `n` and to every node whose home it absorbed; recomputed copies keep
    // their own home, which stores their values for whoever reads them from memory.
    for (NodeId m : drafts_.back().nodes) {
      int& home = group_of_[static_cast<std::size_t>(m)];
      if (m == n || home < 0 || merge.count(home)) home = id;
    }
    if (mode == FusionMode::kFused && drafts_.back().root == GroupRoot::kKernel) absorb_operand_scales(n, id);
    set_level(id, merge);
  }

  // Operand scales: a product (OpDef::linear_inputs) that reads, through views, an operand a constant
  // scales, and that the product alone reads, reads the scale's source in place instead and scales its
  // result in its stores; the scale's own dispatch goes. Both of vit_b_16's attention operands as torch
  // exports them (q and k each times d^-1/4, then k transposed):
  //   qkv ─ Slice/Transpose ─ Mul(s) ─┐
  //   qkv ─ Slice/Transpose ─ Mul(s) ─ Transpose ─ MatMul ─ y   => [Mul -> Mul -> MatMul]
  // The scale leaves a group of its own only, and only where the product reads the composed view in
  // place (OpDef::reads_in_place). A scale the product reads directly takes the same way: in its loads
  // it would gather a strided view element by element where the product loads 16-byte runs
  // (reads_strided_view). Scaling in the product's stores was faster than the scales' own dispatches
  // (docs/tuning-log.md, "absorb_operand_scales"). (tests/unit "operand scales: a product scales
  // its result instead of its operands")
  void absorb_operand_scales(NodeId n, int id) {
    const Node& node = graph_.node(n);
    for (std::size_t k = 0; k < node.inputs.size(); ++k) {
      const auto scale = operand_scale(graph_, n, k);
      if (!scale) continue;
      const NodeId p = scale->scale;
      const int g = group_of_[static_cast<std::size_t>(p)];
      const ValueId scaled = graph_.node(p).output;
      if (g < 0 || g == id || drafts_[static_cast<std::size_t>(g)].nodes != std::set<NodeId>{p} ||
          graph_.value(scaled).is_output || !read_only_by(scaled, {n}))
        continue;
      std::vector<TensorInfo> infos = graph_.input_infos(n);
      infos[k] = view_info_of(graph_, node.inputs[k], scale->view);
      if (!node.op->reads_in_place || !node.op->reads_in_place(infos, k)) continue;
      std::set<NodeId> nodes = drafts_[static_cast<std::size_t>(id)].nodes, scales = drafts_[static_cast<std::size_t>(id)].scales;
      nodes.insert(p);
      scales.insert(p);
      if (nodes.size() > kMaxGroupNodes || bindings_of(nodes, scales) > device_.max_bindings || !forms_valid_group(nodes))
        continue;
      drafts_[static_cast<std::size_t>(g)].alive = false;
      drafts_[static_cast<std::size_t>(g)].nodes.clear();
      drafts_[static_cast<std::size_t>(id)].nodes.insert(p);
      drafts_[static_cast<std::size_t>(id)].scales.insert(p);
      group_of_[static_cast<std::size_t>(p)] = id;
      phase_[static_cast<std::size_t>(p)] = Phase::kPre;
    }
  }

  // Recompute instead of reading: a cheap elementwise producer chain of `n`'s inputs that lives in
  // another group is copied into n's group, so its value is not stored and read back. The chain
  // stops at stored tensors (inputs, constants, views, results of reductions) and must cost at most
  // kRecomputeBudget per element.
  //   bias[1,13] ─ Mul ─ Tanh ─┐                      (both groups would otherwise need the value
  //   x[7,13] ────────────────Add ─ Relu   => [Mul -> Tanh -> Add -> Relu]   in memory between them)
  //   (tests/unit "cheap producers are recomputed instead of stored")
  static constexpr float kRecomputeBudget = 16.0f;
  // Pre-fusion: a kernel op's argument computed by a cheap elementwise chain is evaluated in the
  // anchor's loads instead of being stored and read back. A tiled anchor loads each element several
  // times (a 3x3 conv's input up to 9 times per output-channel tile), so the chain must be cheaper; a
  // template may ask for less on an input (KernelLaunch::chain_budgets: the cooperative-matrix root).
  //   x ─ Mul(scale) ─ Add(shift) ─ Relu ─ Conv ─ y    => [Mul -> Add -> Relu -> Conv]
  //   (tests/unit "pre-fusion: a cheap chain on a kernel op's input runs in its loads")
  // The chains slow the anchor's dispatch, yet storing them instead (a dispatch each) was slower on
  // every model that has them (docs/tuning-log.md, "kAnchorLoadBudget").
  static constexpr float kAnchorLoadBudget = 4.0f;
  // An operand the template loads in 16-byte runs (KernelLaunch::run_inputs) gathers no strided view in
  // its loads, however small: gathering it cost more than the dispatches it saved (docs/tuning-log.md,
  // "recompute_inputs").
  // Row passes (forms_valid_group): rows of at most this many elements, at most this many walks over
  // each. LayerNormalization and Softmax take 3 (mean, variance, normalize; max, sum, divide); their
  // rows in vision models are channels (96 to 1024) or attention rows (197). 4096 elements are 16 per
  // invocation of a 256-wide workgroup, and 16 KB of f32 that stay in the caches between the walks.
  static constexpr std::int64_t kRowPassMaxInner = 4096;
  static constexpr int kMaxRowPasses = 4;

  // Elements in loads (tensor -> element -> tensor): an anchor's input chain may also run through the
  // post chain of a kernel group whose anchor computes its elements alone (OpDef::element: a depthwise
  // Conv, a MaxPool or AveragePool), ending at that anchor, which is then evaluated in the consumer's
  // loads, element by element:
  //   x ─ Conv(depthwise) ─ Clip ─ Conv(1x1) ─ y   => [Conv -> Clip -> Conv]   (one dispatch)
  // Only where that whole group is recomputed there (its values read by this chain alone), the consumer's
  // template loads each element of that input a known, small number of times (KernelLaunch::input_reads)
  // such that the element's cost times those reads stays within kElementLoadBudget (a 3x3 window
  // recomputed for up to 4 tiles of output channels), and the producer's output is small: at most
  // element_max_outputs(), where its own dispatch leaves most of a large GPU idle and is mostly latency.
  // Without the output limit large batches lost, and a larger budget's recomputation ate the waves it
  // saved; the cooperative-matrix root takes no elements (gemm_launch): every fused pair was slower there
  // (docs/tuning-log.md, "kElementLoadBudget").
  //   (tests/unit "elements in loads: a depthwise Conv runs in the pointwise Conv's loads")
  static constexpr float kElementLoadBudget = 36.0f;
  std::int64_t element_max_outputs() const { return 4 * fill_invocations(device_); }

  // The cost of computing `q`'s output one element at a time (OpDef::element), if it can be.
  std::optional<float> element_cost(NodeId q) const {
    const Node& node = graph_.node(q);
    const Value& out = graph_.value(node.output);
    if (node.op->kind != OpKind::kKernel || !node.op->element || !is_float_dtype(out.dtype)) return std::nullopt;
    for (ValueId u : node.inputs)
      if (graph_.value(u).bytes() > device_.max_binding_bytes) return std::nullopt;  // bound whole, one binding
    auto element = node.op->element(graph_.input_infos(q), {out.shape, out.dtype}, node.op_attrs());
    if (!element.ok()) return std::nullopt;
    return element->cost;
  }

  // Anchor `n`'s launch, with its input `computed` (if any) computed in the loads at `cost` per element.
  // Read plain, it says what the template asks of the chains computed there (KernelLaunch::chain_budgets,
  // run_inputs).
  std::optional<KernelLaunch> anchor_launch(NodeId n, std::optional<std::size_t> computed = std::nullopt,
                                            float cost = 0.0f, bool plane_sums = false, bool pooled_only = false) const {
    const Node& node = graph_.node(n);
    std::vector<TensorInfo> infos = graph_.input_infos(n);
    if (computed) infos[*computed].load_cost = cost;
    const Value& out = graph_.value(node.output);
    TensorInfo out_info{out.shape, out.dtype};
    out_info.plane_sums = plane_sums;
    out_info.pooled_only = pooled_only;
    auto launch = node.op->launch(infos, out_info, node.op_attrs(), device_);
    if (!launch.ok()) return std::nullopt;
    return std::move(*launch);
  }

  // How many times anchor `n`'s template loads each element of its input `k`, computed there at `cost`
  // per element (0: not known).
  std::int64_t input_reads(NodeId n, std::size_t k, float cost) const {
    const auto launch = anchor_launch(n, k, cost);
    return launch && k < launch->input_reads.size() ? launch->input_reads[k] : 0;
  }

  // Whether `element`, the anchor of its group, with its post chain in `chain` may be evaluated in the
  // loads of anchor n's input k: it has that input's shape (the element's index is the argument's), n
  // reads the chain through that input alone (one element per kernel), every value of the element's
  // group is read by the chain (or n) alone, the element's stored inputs other than constants are read
  // by it alone, and the recomputation stays within kElementLoadBudget. An element whose input other
  // groups read too keeps its dispatch: the scheduler runs it beside theirs, between the same barriers,
  // so computing it in the loads saves no barrier and lengthens the consumer (docs/tuning-log.md,
  // "element_fits").
  //   (tests/unit "elements in loads: a MaxPool or AveragePool runs in the 1x1 Conv's loads")
  bool element_fits(NodeId element, float cost, const std::set<NodeId>& chain, NodeId n, std::size_t k) const {
    const std::vector<ValueId>& args = graph_.node(n).inputs;
    if (graph_.value(graph_.node(element).output).shape != graph_.value(args[k]).shape) return false;
    for (std::size_t j = 0; j < args.size(); ++j)
      if (j != k && (args[j] == args[k] || chain.count(stored_producer(args[j])))) return false;
    const int home = group_of_[static_cast<std::size_t>(element)];
    for (NodeId q : chain) {
      if (group_of_[static_cast<std::size_t>(q)] != home) continue;
      const Value& value = graph_.value(graph_.node(q).output);
      if (value.is_output) return false;
      for (NodeId c : value.consumers)
        if (c != n && !chain.count(c)) return false;
    }
    for (NodeId q : drafts_[static_cast<std::size_t>(home)].nodes)
      if (group_of_[static_cast<std::size_t>(q)] == home && !chain.count(q)) return false;
    // A template that loads each element once computes it once, as the element's own dispatch would:
    // neither the output limit nor the budget for repeated loads applies there.
    const std::optional<KernelLaunch> consumer = anchor_launch(n);
    const bool once = consumer && consumer->loads_once;
    const Node& producer = graph_.node(element);
    const auto made = producer.op->element(graph_.input_infos(element), {graph_.value(producer.output).shape,
                                           graph_.value(producer.output).dtype}, producer.op_attrs());
    if (!made.ok() || (made->loads_once_only && !once)) return false;
    if (!once && shape_numel(graph_.value(producer.output).shape) > element_max_outputs()) return false;
    for (ValueId u : graph_.node(element).inputs) {
      const Value& input = graph_.value(u);
      if (!input.constant && input.consumers.size() > 1) return false;  // its dispatch runs beside theirs
    }
    const std::int64_t reads = input_reads(n, k, cost);
    return reads > 0 && static_cast<float>(reads) * cost <= kElementLoadBudget;
  }

  // Whether `node` reads a view whose innermost axis of more than one element is not contiguous in
  // memory (a Transpose's): neighbouring elements of it lie a stride apart. An anchor's loads do not
  // recompute such a chain: its template reads neighbouring elements from neighbouring invocations, and
  // loads each element several times (a window's taps, a tile per block of output channels), each one
  // a separate sector. The copy is stored once, in a dispatch of its own, instead.
  //   x[1, 56, 56, 96] ─ Transpose ─ Identity ─ Conv   => [Identity] [Conv] (convnext_tiny: each stage
  //   ends in a channels-last LayerNorm whose result is permuted back for the next Conv)
  // Storing the copy first won on convnext_tiny and was within run-to-run spread on vit_b_16
  // (docs/tuning-log.md, "reads_transposed_view").
  //   (tests/unit "pre-fusion: an anchor's loads do not gather a transposed view")
  bool reads_transposed_view(const Node& node) const {
    return reads_view_where(node, [](const StridedLayout& layout) {
      for (std::size_t d = layout.shape.size(); d-- > 0;)
        if (layout.shape[d] != 1) return layout.strides[d] != 1;
      return false;
    });
  }

  // Whether `node` reads a view whose layout passes `test` (or that does not resolve).
  template <class Test>
  bool reads_view_where(const Node& node, Test test) const {
    for (ValueId u : node.inputs) {
      if (!graph_.is_view(u)) continue;
      auto view = resolve_view(graph_, u);
      if (!view.ok() || test(view->layout)) return true;
    }
    return false;
  }

  // Whether `node` reads a view whose elements are not laid out contiguously (a permutation's or a
  // strided slice's; a contiguous slice at an offset is not). An anchor that loads an input in 16-byte
  // runs (KernelLaunch::run_inputs) does not compute such a copy in its loads: it would gather each
  // element alone, once per tile, where the copy's own dispatch stores them once, in order.
  //   qkv ─ Transpose/Slice (V, rows 2304 apart) ─ Identity ─ MatMul(softmax, V)   => [Identity] [MatMul]
  // The copies' own dispatches were faster on vit_b_16, in fp16 and in the f32 tiled root's vec4
  // operands (docs/tuning-log.md, "reads_strided_view").
  //   (tests/unit "pre-fusion: an input loaded in 16-byte runs does not gather a strided view")
  bool reads_strided_view(const Node& node) const {
    return reads_view_where(node, [](const StridedLayout& layout) {
      const StridedLayout dense = contiguous_layout(layout.shape);
      for (std::size_t d = 0; d < layout.shape.size(); ++d)
        if (layout.shape[d] != 1 && layout.strides[d] != dense.strides[d]) return true;
      return false;
    });
  }

  void recompute_inputs(NodeId n, Draft& group, float budget) const {
    const bool anchor = graph_.node(n).op->kind == OpKind::kKernel;
    const std::vector<ValueId>& inputs = graph_.node(n).inputs;
    // The anchor's launch, made once, where an input first has a producer chain to walk.
    std::optional<KernelLaunch> launch;
    bool launched = false;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const ValueId v = inputs[k];
      if (graph_.is_view(v)) continue;
      if (anchor && !is_float_dtype(graph_.value(v).dtype)) continue;
      const NodeId p = graph_.value(v).producer;
      if (p == kNoNode || group.nodes.count(p)) continue;
      // A Concat to be written in place does not copy a view in its loads: the copy's own dispatch
      // stores it into the Concat's slice instead, at the same cost, and the Concat need not run.
      if (family_members_.count(n) && graph_.node(p).op->copies_input) continue;
      if (anchor && !launched) {
        launch = anchor_launch(n);
        launched = true;
      }
      float input_budget = launch && launch->loads_once ? kRecomputeBudget : budget;
      bool runs = false;
      if (launch && k < launch->chain_budgets.size() && launch->chain_budgets[k] >= 0.0f)
        input_budget = std::min(budget, launch->chain_budgets[k]);
      if (launch && k < launch->run_inputs.size()) runs = launch->run_inputs[k];
      std::set<NodeId> chain;
      // With `elements`, the walk may pass a kernel group's post chain to its anchor, an element
      // (accepted only where element_fits); without, it stops at stored results. The plain walk is the
      // fallback wherever the first finds no element to take.
      auto walk = [&](bool elements) {
        chain.clear();
        float cost = 0.0f, element_load = 0.0f;
        NodeId element = kNoNode;
        std::vector<NodeId> stack{p};
        bool ok = true;
        while (!stack.empty() && ok) {
          const NodeId q = stack.back();
          stack.pop_back();
          if (chain.count(q) || group.nodes.count(q)) continue;
          const Node& node = graph_.node(q);
          const Phase phase = phase_[static_cast<std::size_t>(q)];
          if (elements && element == kNoNode && phase == Phase::kReduce) {
            if (const auto c = element_cost(q)) {  // its inputs are stored leaves
              element = q;
              element_load = *c;
              chain.insert(q);
              continue;
            }
          }
          // A post node (checked below: of the element's group) or a pre node.
          const bool post = elements && phase == Phase::kPost &&
                            drafts_[static_cast<std::size_t>(group_of_[static_cast<std::size_t>(q)])].root == GroupRoot::kKernel;
          if (node.op->kind != OpKind::kElementwise || (phase != Phase::kPre && !post)) {
            ok = q != p;  // a stored result further up is a leaf; the input itself must be recomputable
            continue;
          }
          chain.insert(q);
          cost += node.op->cost;
          ok = cost <= input_budget && !(anchor && reads_transposed_view(node)) && !(runs && reads_strided_view(node));
          for (ValueId u : node.inputs)
            if (!graph_.is_view(u) && graph_.value(u).producer != kNoNode) stack.push_back(graph_.value(u).producer);
        }
        if (!elements) return ok;
        for (NodeId q : chain)  // post nodes only with their group's anchor
          if (phase_[static_cast<std::size_t>(q)] == Phase::kPost &&
              (element == kNoNode || group_of_[static_cast<std::size_t>(q)] != group_of_[static_cast<std::size_t>(element)]))
            return false;
        return ok && element != kNoNode && element_fits(element, element_load, chain, n, k);
      };
      const bool ok = (anchor && walk(true)) || walk(false);
      if (!ok || chain.empty() || !reads_no_more_than(chain, group, v)) continue;
      std::set<NodeId> nodes = group.nodes;
      nodes.insert(chain.begin(), chain.end());
      if (nodes.size() > kMaxGroupNodes || bindings_of(nodes) > device_.max_bindings || !forms_valid_group(nodes)) continue;
      group.nodes = std::move(nodes);
    }
  }

  // Recomputing must not read more memory than it saves. It replaces one read of `v` with reads of the
  // stored tensors its chain starts from: at most one of those may be as large as `v` and not read by
  // the group already (a view counts as the tensor it views; smaller tensors broadcast and stay in the
  // caches). A value broadcast over the group's domain (a scale computed from per-channel statistics) is
  // exempt in elementwise and reduce groups: its chain is as small as it is. Without this, residual
  // streams grew quadratic chains (convnext_tiny: x1 = x0 + s0 * b0, x2 = x1 + s1 * b1, ...: each
  // consumer recomputed the earlier blocks from their outputs instead of reading x_i once, and its 7x7
  // depthwise convs evaluated that chain in all 49 loads per output).
  //   x0 ─┬─ Conv ... b0 ─ Mul(s0) ─ Add ─ x1 ─┬─ Conv ...   x1 is stored once and read, not recomputed
  //       └────────────────────────────┘       └─ Add ...    from x0 and b0 by each of its readers
  //   (tests/unit "a residual stream is stored once, not recomputed from every earlier block")
  bool reads_no_more_than(const std::set<NodeId>& chain, const Draft& group, ValueId v) const {
    const std::int64_t size = shape_numel(graph_.value(v).shape);
    if (group.root != GroupRoot::kKernel && size < shape_numel(group.domain)) return true;
    std::set<ValueId> read;
    for (NodeId q : group.nodes)
      for (ValueId u : graph_.node(q).inputs) read.insert(stored_value(u));
    std::set<ValueId> large;
    for (NodeId q : chain)
      for (ValueId u : graph_.node(q).inputs) {
        const ValueId source = stored_value(u);
        const NodeId p = graph_.value(source).producer;
        if ((p != kNoNode && chain.count(p)) || read.count(source)) continue;
        if (shape_numel(graph_.value(source).shape) < size) continue;
        large.insert(source);
        // An anchor loads each element several times (a window's taps, a tile per output channel
        // block): a wider tensor (the f32 input of a Cast to f16) is not read there in its place.
        // The Cast in the loads was slower than its own dispatch; the rule also covers anchors that
        // load each element once, where it is not measured (docs/tuning-log.md, "reads_no_more_than").
        if (group.root == GroupRoot::kKernel && dtype_size(graph_.value(source).dtype) > dtype_size(graph_.value(v).dtype))
          return false;
      }
    return large.size() <= 1;
  }

  // Whether a node set can run as one dispatch of its root template:
  //  - no node reads a view of a value the set itself computes (it would read memory the same
  //    dispatch is writing; tests/unit "a group never reads a view of a value it writes itself");
  //  - a kernel op reads pre-fused chains only, and a node after it reads only its result (and what
  //    was computed from that);
  //  - a reduce group folds in passes over each row: a reduction folds values of the domain's shape; a
  //    node that reads reduced values and none of the domain's has the reduced shape (the post stage),
  //    or the domain's shape where rows allow passes (allows_row_passes), and then runs in the pass
  //    after the ones that produced them; at most kMaxRowPasses passes. Without row passes that is one
  //    pass (tests/unit "reductions that read each other's results share a group in row passes").
  bool forms_valid_group(const std::set<NodeId>& nodes) const {
    const Node* reduction = nullptr;
    NodeId anchor = kNoNode;  // the last kernel op; one before it is an element computed in its loads
    int kernels = 0;
    for (NodeId q : nodes) {
      const Node& node = graph_.node(q);
      if (node.op->kind == OpKind::kReduce) reduction = &node;
      if (node.op->kind == OpKind::kKernel) anchor = q, ++kernels;
    }
    const bool anchored = anchor != kNoNode;
    if (kernels > 2) return false;
    if (anchored) reduction = nullptr;  // a reduction there is a plane sum of the anchor's result
    bool row_passes = false;
    Shape domain, reduced;
    if (reduction && !anchored) {
      domain = graph_.value(reduction->inputs[0]).shape;
      reduced = graph_.value(reduction->output).shape;
      row_passes = allows_row_passes(domain, reduce_first_axis(*reduction, domain.size()), reduce_keepdims(*reduction));
    }
    std::map<NodeId, Phase> stage;
    std::map<NodeId, int> pass;  // the pass that computes a pre value, or after which a reduced one exists
    std::set<NodeId> plane_sums;  // anchored: reductions of the anchor's result (read by no member)
    std::optional<ValueId> crossing;  // anchored: the reordering view a post chain reads (view_reorder.h)
    std::set<NodeId> viewed;          // the post nodes after it, in the view's order
    int passes = 1;
    for (NodeId q : nodes) {  // ascending ids: topological order
      const Node& node = graph_.node(q);
      bool reads_pre = false, reads_reduced = false, through_view = false, reads_viewed = false, reads_own = false;
      int after = 0;
      for (std::size_t k = 0; k < node.inputs.size(); ++k) {
        const ValueId v = node.inputs[k];
        NodeId p = kNoNode;
        if (graph_.is_view(v) && q == anchor) {
          // Operand scales: the anchor reads its operand's source in place and scales its result.
          p = stored_producer(v);
          if (!nodes.count(p)) continue;
          const auto scale = operand_scale(graph_, q, k);
          if (!scale || scale->scale != p) return false;
        } else if (graph_.is_view(v)) {
          p = stored_producer(v);
          if (!nodes.count(p)) continue;
          // Post-fusion through a view: an elementwise op of the post chain reads the anchor's result (or
          // its post chain's) through one reordering view, once per group.
          if (!anchored || node.op->kind != OpKind::kElementwise || node.op->copies_input || !reorders(v) || stage.at(p) == Phase::kPre ||
              viewed.count(p) || (crossing && *crossing != v))
            return false;
          crossing = v;
          through_view = true;
        } else {
          p = graph_.value(v).producer;
          if (p == kNoNode || !nodes.count(p)) continue;
          (viewed.count(p) ? reads_viewed : reads_own) = true;
        }
        if (plane_sums.count(p)) return false;
        (stage.at(p) == Phase::kPre ? reads_pre : reads_reduced) = true;
        after = std::max(after, pass.at(p));
      }
      const Shape& out = graph_.value(node.output).shape;
      if (node.op->kind == OpKind::kKernel && q != anchor) {
        // An element in the anchor's loads reads stored tensors only; what reads it is pre-fused.
        if (reads_pre || reads_reduced || !element_cost(q)) return false;
        stage[q] = Phase::kPre;
      } else if (node.op->kind == OpKind::kKernel) {
        if (reads_reduced) return false;  // it reads pre-fused chains only
        stage[q] = Phase::kReduce;
      } else if (node.op->kind == OpKind::kReduce && anchored) {
        if (reads_pre || !plane_sums.empty()) return false;
        plane_sums.insert(q);
        stage[q] = Phase::kPost;
      } else if (node.op->kind == OpKind::kReduce) {
        if (reads_reduced) return false;
        stage[q] = Phase::kReduce;
        passes = std::max(passes, after + 1);
      } else if (!reads_reduced) {
        stage[q] = Phase::kPre;
      } else if (!reads_pre && (!reduction || out == reduced)) {
        stage[q] = Phase::kPost;
      } else if (row_passes && out == domain) {
        stage[q] = Phase::kPre;
        passes = std::max(passes, after + 1);
      } else {
        return false;
      }
      pass[q] = node.op->kind == OpKind::kReduce ? after + 1 : after;
      if (through_view || reads_viewed) {  // in the view's order: its shape, nothing of the anchor's order
        if (reads_own || stage[q] != Phase::kPost || out != graph_.value(*crossing).shape) return false;
        viewed.insert(q);
      } else if (anchored && stage[q] == Phase::kPost && node.op->kind != OpKind::kReduce &&
                 out != graph_.value(graph_.node(anchor).output).shape) {
        return false;
      }
    }
    return passes <= kMaxRowPasses && (!crossing || plane_sums.empty());
  }

  // Two groups can merge only if their roots agree: one reduction shape and axis set per group.
  bool compatible_with(const std::set<int>& merge, const Draft& candidate) const {
    for (int g : merge) {
      const Draft& d = drafts_[static_cast<std::size_t>(g)];
      if (d.domain != candidate.domain) return false;
      if (d.root == GroupRoot::kKernel || candidate.root == GroupRoot::kKernel) return false;  // one anchor each
      if (d.root == GroupRoot::kReduce && candidate.root == GroupRoot::kReduce &&
          (d.axis != candidate.axis || d.keepdims != candidate.keepdims))
        return false;
    }
    return true;
  }

  Draft fresh_draft(NodeId n) {
    const Node& node = graph_.node(n);
    Draft d;
    d.nodes.insert(n);
    if (node.op->kind == OpKind::kKernel) {
      d.root = GroupRoot::kKernel;
      d.domain = graph_.value(node.output).shape;
      d.reduced = d.domain;
      d.anchor = n;
      phase_[static_cast<std::size_t>(n)] = Phase::kReduce;  // only post-fusion joins it
    } else if (node.op->kind == OpKind::kReduce) {
      const Shape& in = graph_.value(node.inputs[0]).shape;
      d.root = GroupRoot::kReduce;
      d.domain = in;
      d.reduced = graph_.value(node.output).shape;
      d.axis = reduce_first_axis(node, in.size());
      d.keepdims = reduce_keepdims(node);
      phase_[static_cast<std::size_t>(n)] = Phase::kReduce;
    } else {
      d.domain = graph_.value(node.output).shape;
      phase_[static_cast<std::size_t>(n)] = Phase::kPre;
    }
    return d;
  }

  // holders_: for each node, the drafts alive now that compute it (its home and the groups that
  // recompute it), so that questions about a node need not scan every draft.
  void index_holders() {
    holders_.assign(graph_.nodes.size(), {});
    for (int g = 0; g < static_cast<int>(drafts_.size()); ++g)
      if (drafts_[static_cast<std::size_t>(g)].alive)
        for (NodeId q : drafts_[static_cast<std::size_t>(g)].nodes) holders_[static_cast<std::size_t>(q)].push_back(g);
  }

  // Inputs: values read by the group's nodes that it does not compute. Outputs: values it computes
  // that a graph output is, or that anything outside the group (a view included) reads.
  // With `id` (a draft), only nodes whose home it is store their values; -1 treats every node as home
  // (a conservative probe while merging).
  void fill_io(FusionGroup& group, int id = -1) const {
    const std::set<NodeId> members(group.nodes.begin(), group.nodes.end());
    std::set<ValueId> seen_in;
    for (NodeId n : group.nodes)
      for (ValueId v : graph_.node(n).inputs) {
        const NodeId p = graph_.value(v).producer;
        // A stage's vector (vector groups), a value the post chain reads through a view (kernel groups).
        if (graph_.is_view(v) && members.count(stored_producer(v))) continue;
        if ((p == kNoNode || !members.count(p)) && seen_in.insert(v).second) group.inputs.push_back(v);
      }
    for (NodeId n : group.nodes) {
      if (id >= 0 && group_of_[static_cast<std::size_t>(n)] != id) continue;
      const ValueId v = graph_.node(n).output;
      if (stored_by_home(n, id >= 0, members)) group.outputs.push_back(v);
    }
  }

  // A value is stored by its home group when it is a graph output or some consumer reads it from
  // memory: a consumer in a group that does not compute it itself.
  // A view whose readers are all members is no reader from memory: in a vector group the next stage
  // reads the whole vector (a Flatten between a pooling and a Gemm) in shared memory; in a kernel group
  // the post chain reads the value through the view where the anchor stores it (forms_valid_group says
  // where a member may read a view of another).
  // With `by_drafts`, "computes it itself" asks the live drafts (holders_, as index_holders left it).
  bool stored_by_home(NodeId n, bool by_drafts, const std::set<NodeId>& members) const {
    const Value& value = graph_.value(graph_.node(n).output);
    if (value.is_output) return true;
    for (NodeId c : value.consumers) {
      if (graph_.node(c).op->kind == OpKind::kView) {  // views read stored tensors, but where members alone read them
        if (!read_only_by(graph_.node(c).output, members)) return true;
        continue;
      }
      if (in_place_.count(c)) return true;                        // stored into the Concat's slice
      if (!by_drafts) {
        if (!members.count(c)) return true;
        continue;
      }
      for (int d : holders_[static_cast<std::size_t>(c)])
        if (drafts_[static_cast<std::size_t>(d)].alive && !drafts_[static_cast<std::size_t>(d)].nodes.count(n)) return true;
    }
    return false;
  }

  // Vector chains: a group whose anchor is a product per image (OpDef::vector_product: a 1x1 Conv over
  // 1x1 images, a Gemm) and whose input vector another group computes for it alone, either a single
  // reduction over the trailing axes or such a product, joins that group: one workgroup per image runs
  // the stages one after the other, their vectors in shared memory (roots/vector_chain.glsl), each
  // stage with its post chain. A squeeze-and-excitation block's pooling and two products are then one
  // dispatch instead of three:
  //   x ─ ReduceMean(H, W) ─ Conv(1x1) ─ Relu ─ Conv(1x1) ─ HardSigmoid ─ s
  //     => [ReduceMean -> Conv -> Relu -> Conv -> HardSigmoid]
  // Only where one workgroup does each stage's work for an image quickly: at most kVectorMaxWork
  // elements folded per stage and image (larger products and reductions spread over many workgroups as
  // dispatches of their own), vectors of at most kVectorMaxRows, the stages but the last within the
  // shared memory; the reduction reads a stored tensor whole. A group that joins has no chain in its
  // loads and stores nothing but the stage's result. With larger limits the larger blocks joined too,
  // and one SM took longer than their dispatches had (docs/tuning-log.md, "kVectorMaxWork").
  //   (tests/unit "vector chains: the products of a small squeeze-and-excitation block are one dispatch")
  static constexpr std::int64_t kVectorMaxWork = 8192;
  static constexpr std::int64_t kVectorMaxRows = 4096;

  // Anchor n's product per image, if a vector stage can run it: float inputs read whole, within the
  // limits above.
  std::optional<VectorProduct> vector_stage_of(NodeId n) const {
    const Node& node = graph_.node(n);
    const Value& out = graph_.value(node.output);
    if (node.op->kind != OpKind::kKernel || !node.op->vector_product || !is_float_dtype(out.dtype) || out.shape.empty())
      return std::nullopt;
    auto product = node.op->vector_product(graph_.input_infos(n), {out.shape, out.dtype}, node.op_attrs());
    if (!product.ok() || product->out > kVectorMaxRows || product->in > kVectorMaxRows ||
        product->out * product->in > kVectorMaxWork)
      return std::nullopt;
    for (ValueId u : node.inputs)
      if (!is_float_dtype(graph_.value(u).dtype) || !is_contiguous_value(graph_, u)) return std::nullopt;
    return *product;
  }

  // Whether kernel draft d holds its anchor, its operand scales and its post chain only (nothing
  // computed in its loads). (Not one whose post chain reads it through a view: a vector stage runs its
  // chain in the anchor's order.)
  bool anchor_and_post_only(const Draft& d) const {
    if (viewed_shape(d)) return false;
    for (NodeId q : d.nodes)
      if (q != d.anchor && !d.scales.count(q) && phase_[static_cast<std::size_t>(q)] != Phase::kPost) return false;
    return true;
  }

  // Whether every reader of value v, through views, is one of `members` (and v no graph output).
  bool read_only_by(ValueId v, const std::set<NodeId>& members) const {
    std::vector<ValueId> reads{v};
    while (!reads.empty()) {
      const Value& value = graph_.value(reads.back());
      reads.pop_back();
      if (value.is_output) return false;
      for (NodeId c : value.consumers) {
        if (graph_.node(c).op->kind == OpKind::kView) reads.push_back(graph_.node(c).output);
        else if (!members.count(c)) return false;
      }
    }
    return true;
  }

  // Whether draft `source` computes value v (a stored result) for reader n alone: v is not a graph
  // output and is read by n only (through views), and nothing else of the draft is stored.
  bool computes_only_for(const Draft& source, ValueId v, NodeId n) const {
    if (!read_only_by(v, {n})) return false;
    for (NodeId q : source.nodes)
      if (graph_.node(q).output != v && !read_only_by(graph_.node(q).output, source.nodes)) return false;
    return true;
  }

  // A single reduction over trailing axes after the first whose stored input is read whole: the first
  // stage of a vector chain, within the work limit per image.
  bool reduction_stage(const Draft& d) const {
    if (d.root != GroupRoot::kReduce || d.nodes.size() != 1) return false;
    const Node& node = graph_.node(*d.nodes.begin());
    const Value& x = graph_.value(node.inputs[0]);
    if (node.op->kind != OpKind::kReduce || d.axis < 1 || !is_float_dtype(x.dtype) || !is_contiguous_value(graph_, node.inputs[0]))
      return false;
    const std::int64_t per_image = shape_numel(x.shape) / x.shape[0];
    std::int64_t inner = 1;
    for (std::size_t a = static_cast<std::size_t>(d.axis); a < x.shape.size(); ++a) inner *= x.shape[a];
    return per_image <= kVectorMaxWork && per_image / inner <= kVectorMaxRows;
  }

  // Whether kernel draft g (a product) can join draft p, whose value v it reads as its vector: it reads v
  // (or anything of p) through its vector alone, not as a matrix or bias (a Gram matrix Gemm(s, s));
  // neither draft's nodes are also computed in another group's loads (that group would read p's
  // values from memory); and g stores one value only, whole (not into a Concat), since the vector
  // root has one output.
  bool joins_whole(int g, int p, ValueId v) const {
    const Draft& d = drafts_[static_cast<std::size_t>(g)];
    const Draft& source = drafts_[static_cast<std::size_t>(p)];
    const std::vector<ValueId>& args = graph_.node(d.anchor).inputs;
    for (std::size_t k = 1; k < args.size(); ++k)
      if (stored_value(args[k]) == v || producer_group(stored_value(args[k])) == p) return false;
    for (int h = 0; h < static_cast<int>(drafts_.size()); ++h) {
      const Draft& other = drafts_[static_cast<std::size_t>(h)];
      if (h == g || h == p || !other.alive) continue;
      for (const Draft* joining : {&d, &source})
        for (NodeId q : joining->nodes)
          if (other.nodes.count(q)) return false;
    }
    std::set<NodeId> members = source.nodes;
    members.insert(d.nodes.begin(), d.nodes.end());
    int stored = 0;
    for (NodeId q : d.nodes) {
      const ValueId out = graph_.node(q).output;
      if (stored_in_.count(out) || prefix_of_.count(out)) return false;
      if (!read_only_by(out, members)) ++stored;
    }
    return stored == 1;
  }

  void merge_vector_chains() {
    std::vector<int> order;
    for (int g = 0; g < static_cast<int>(drafts_.size()); ++g)
      if (drafts_[static_cast<std::size_t>(g)].alive && drafts_[static_cast<std::size_t>(g)].root == GroupRoot::kKernel)
        order.push_back(g);
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      return drafts_[static_cast<std::size_t>(a)].anchor < drafts_[static_cast<std::size_t>(b)].anchor;
    });
    for (int g : order) {
      Draft& d = drafts_[static_cast<std::size_t>(g)];
      const std::optional<VectorProduct> product = vector_stage_of(d.anchor);
      if (!d.alive || !anchor_and_post_only(d) || !product) continue;
      const Node& anchor = graph_.node(d.anchor);
      const ValueId v = stored_value(anchor.inputs[0]);
      const int p = producer_group(v);
      if (p < 0 || p == g) continue;
      Draft& source = drafts_[static_cast<std::size_t>(p)];
      const bool stage = source.root == GroupRoot::kVector ||
                         (source.root == GroupRoot::kReduce && reduction_stage(source)) ||
                         (source.root == GroupRoot::kKernel && anchor_and_post_only(source) && vector_stage_of(source.anchor));
      if (!source.alive || !stage || !computes_only_for(source, v, d.anchor) || !joins_whole(g, p, v)) continue;
      // The stage's vector: one value per image, of the product's length; the vectors before the last
      // stage sit in shared memory together.
      const Shape& vs = graph_.value(v).shape;
      const Shape& out = graph_.value(anchor.output).shape;
      if (vs.empty() || vs[0] != out[0] || shape_numel(vs) != vs[0] * product->in) continue;
      std::int64_t shared_floats = 0;  // each stage's vector (the source's stages), per image
      for (NodeId q : source.nodes)
        if (graph_.node(q).op->kind != OpKind::kElementwise)
          shared_floats += shape_numel(graph_.value(graph_.node(q).output).shape) / vs[0];
      if (shared_floats * 4 > static_cast<std::int64_t>(device_.shared_memory_bytes)) continue;
      std::set<NodeId> nodes = source.nodes;
      nodes.insert(d.nodes.begin(), d.nodes.end());
      if (nodes.size() > kMaxGroupNodes || bindings_of(nodes) > device_.max_bindings || merge_cycles({p}, d.nodes)) continue;
      source.nodes = std::move(nodes);
      source.root = GroupRoot::kVector;
      source.anchor = d.anchor;
      source.domain = source.reduced = out;
      for (NodeId q : d.nodes) group_of_[static_cast<std::size_t>(q)] = p;
      d.alive = false;
      levels_stale_ = true;
    }
    // A lone reduction or product that no stage joined stays the group it was.
  }

  // Attention (roots/attention.glsl): a kernel draft whose anchor is a batched product
  // (OpDef::matrix_product) with its operand scales and post chain, a reduce draft over the last axis of
  // that draft's result (rows walked in passes: a Softmax), and a kernel
  // draft whose product reads the reduce draft's result as its left operand, each computing its
  // stored value for the next alone, merge into one group: a workgroup keeps a block of rows of the
  // first product in shared memory, runs them through the row chain and multiplies them by the
  // second's right operand. Neither the scores nor the chain's values reach memory, and two dispatches
  // and barriers go. Needs subgroup arithmetic (each row is walked by one subgroup); a block of rows
  // must fit shared memory (attention_fits).
  //   (tests/unit "attention: a product, the Softmax of its rows and the product that reads it are one dispatch")

  // Whether draft d is a batched product with only its operand scales and post chain.
  bool product_draft(const Draft& d) const {
    return d.alive && d.root == GroupRoot::kKernel && graph_.node(d.anchor).op->matrix_product && anchor_and_post_only(d);
  }

  void merge_attention_chains() {
    if (!device_.subgroup_arithmetic) return;
    for (int g3 = 0; g3 < static_cast<int>(drafts_.size()); ++g3) {
      Draft& second = drafts_[static_cast<std::size_t>(g3)];
      if (!product_draft(second) || !second.scales.empty()) continue;
      const Node& product = graph_.node(second.anchor);
      const ValueId p = product.inputs[0];
      const int g2 = producer_group(p);
      if (g2 < 0 || g2 == g3 || stored_value(product.inputs[1]) == p) continue;
      Draft& chain = drafts_[static_cast<std::size_t>(g2)];
      const Shape& domain = chain.domain;
      if (!chain.alive || chain.root != GroupRoot::kReduce || !chain.keepdims || domain.size() < 2 ||
          chain.axis != static_cast<int>(domain.size()) - 1 ||
          graph_.value(p).shape != domain || !computes_only_for(chain, p, second.anchor))
        continue;
      // The one value the chain reads from another group: the first product's result, of its shape.
      std::set<ValueId> computed;
      for (NodeId q : chain.nodes) computed.insert(graph_.node(q).output);
      std::set<ValueId> sources;
      for (NodeId q : chain.nodes)
        for (ValueId u : graph_.node(q).inputs)
          if (!computed.count(u) && producer_group(stored_value(u)) >= 0) sources.insert(u);
      if (sources.size() != 1 || graph_.is_view(*sources.begin())) continue;
      const ValueId s = *sources.begin();
      const int g1 = producer_group(s);
      Draft& first = drafts_[static_cast<std::size_t>(g1)];
      if (g1 == g3 || !product_draft(first) || graph_.value(s).shape != domain || !read_only_by(s, chain.nodes)) continue;
      bool alone = true;  // the first draft stores s alone
      for (NodeId q : first.nodes)
        if (graph_.node(q).output != s && !read_only_by(graph_.node(q).output, first.nodes)) alone = false;
      if (!alone || !attention_fits(first, second)) continue;
      std::set<NodeId> nodes = first.nodes, scales = first.scales;
      nodes.insert(chain.nodes.begin(), chain.nodes.end());
      nodes.insert(second.nodes.begin(), second.nodes.end());
      if (nodes.size() > kMaxGroupNodes || bindings_of(nodes, scales) > device_.max_bindings) continue;
      if (computed_elsewhere({g1, g2, g3}, nodes) || merge_cycles({g1, g2, g3}, nodes)) continue;
      rehome({g1, g2, g3}, nodes, g3);
      second.nodes = std::move(nodes);
      second.scales = std::move(scales);
      second.root = GroupRoot::kAttention;
      first.alive = chain.alive = false;
      levels_stale_ = true;
      first.nodes.clear();
      chain.nodes.clear();
    }
  }

  // Whether the attention root can take these two products (attention_layout, host/attention_kernel.h).
  bool attention_fits(const Draft& first, const Draft& second) const {
    FusionGroup probe;
    probe.root = GroupRoot::kAttention;
    probe.anchor = second.anchor;
    probe.nodes.assign(first.nodes.begin(), first.nodes.end());
    probe.nodes.push_back(second.anchor);
    std::sort(probe.nodes.begin(), probe.nodes.end());
    probe.scales.assign(first.scales.begin(), first.scales.end());
    return attention_layout(graph_, probe, device_).ok();
  }

  // Element rows (roots/element_rows.glsl): a kernel draft whose anchor's elements can be computed alone
  // (OpDef::element: a depthwise Conv), with elementwise ops at most, and a reduce draft over the last
  // axis of a view of its result (rows walked in passes: a LayerNormalization), which stores one value
  // of its domain, merge
  // into one group: a workgroup computes a block of the view's rows into shared memory and walks them
  // through the chain. The op's result never reaches memory, and a dispatch and a barrier go. Needs
  // subgroup arithmetic (each row is walked by one subgroup); a block of rows must fit shared memory
  // (element_rows_layout).
  //   x ─ Conv(depthwise) ─ Transpose(0, 2, 3, 1) ─ LayerNormalization ─ y   => one group (convnext_tiny's
  //   blocks: the channels of each position are a row)
  //   (tests/unit "element rows: a depthwise Conv and the LayerNormalization of its channels-last view are one dispatch")
  void merge_element_rows() {
    if (!device_.subgroup_arithmetic) return;
    for (int g2 = 0; g2 < static_cast<int>(drafts_.size()); ++g2) {
      Draft& chain = drafts_[static_cast<std::size_t>(g2)];
      const Shape& domain = chain.domain;
      if (!chain.alive || chain.root != GroupRoot::kReduce || !chain.keepdims || domain.size() < 2 ||
          chain.axis != static_cast<int>(domain.size()) - 1)
        continue;
      // The one value the chain stores (of its domain) and the one it reads from another group.
      std::set<ValueId> computed, stored, sources;
      for (NodeId q : chain.nodes) computed.insert(graph_.node(q).output);
      for (NodeId q : chain.nodes) {
        if (!read_only_by(graph_.node(q).output, chain.nodes)) stored.insert(graph_.node(q).output);
        for (ValueId u : graph_.node(q).inputs)
          if (!computed.count(u) && producer_group(stored_value(u)) >= 0) sources.insert(u);
      }
      if (stored.size() != 1 || graph_.value(*stored.begin()).shape != domain || sources.size() != 1) continue;
      const ValueId read = *sources.begin();
      const int g1 = producer_group(stored_value(read));
      if (g1 == g2 || graph_.value(read).shape != domain) continue;
      Draft& first = drafts_[static_cast<std::size_t>(g1)];
      if (!first.alive || first.root != GroupRoot::kKernel || !graph_.node(first.anchor).op->element) continue;
      std::set<NodeId> nodes = first.nodes;
      nodes.insert(chain.nodes.begin(), chain.nodes.end());
      // The op's draft holds elementwise ops at most besides it (fp16: the Cast of its view to f32,
      // which joins the chain), and stores nothing the merged group does not read.
      bool joins = true;
      for (NodeId q : first.nodes)
        joins = joins && (q == first.anchor || graph_.node(q).op->kind == OpKind::kElementwise) &&
                read_only_by(graph_.node(q).output, nodes);
      if (!joins || !element_rows_fit(first, chain)) continue;
      if (nodes.size() > kMaxGroupNodes || bindings_of(nodes) > device_.max_bindings || computed_elsewhere({g1, g2}, nodes) ||
          merge_cycles({g1, g2}, nodes))
        continue;
      rehome({g1, g2}, nodes, g2);
      chain.nodes = std::move(nodes);
      chain.root = GroupRoot::kElementRows;
      chain.anchor = first.anchor;
      first.alive = false;
      levels_stale_ = true;
      first.nodes.clear();
    }
  }

  // Whether the element-rows root can take these drafts (element_rows_layout, host/element_rows_kernel.h).
  bool element_rows_fit(const Draft& first, const Draft& chain) const {
    FusionGroup probe;
    probe.root = GroupRoot::kElementRows;
    probe.anchor = first.anchor;
    std::set<NodeId> nodes = first.nodes;
    nodes.insert(chain.nodes.begin(), chain.nodes.end());
    probe.nodes.assign(nodes.begin(), nodes.end());
    probe.domain = chain.domain;
    return element_rows_layout(graph_, probe, device_).ok();
  }

  Result<FusionPlan> finish() {
    // Order groups topologically, earliest node first.
    // A group whose every value is recomputed where it is used has nothing to store: it is dropped.
    std::vector<int> live;
    std::map<int, FusionGroup> built;
    index_holders();
    for (int g = 0; g < static_cast<int>(drafts_.size()); ++g) {
      const Draft& d = drafts_[static_cast<std::size_t>(g)];
      if (!d.alive) continue;
      FusionGroup group;
      group.root = d.root;
      group.anchor = d.anchor;
      group.nodes.assign(d.nodes.begin(), d.nodes.end());
      group.domain = d.domain;
      group.scales.assign(d.scales.begin(), d.scales.end());
      fill_io(group, g);
      if (group.outputs.empty()) continue;
      for (NodeId n : group.nodes)
        group.label += (group.label.empty() ? "" : " -> ") + std::string(graph_.node(n).op->name);
      std::set<ValueId> into;  // each value stored into once in the label
      for (ValueId v : group.outputs)
        if (auto slice = stored_in_.find(v); slice != stored_in_.end()) {
          group.stored_in.insert(*slice);
          if (into.insert(slice->second.into).second)
            group.label += " (into " + std::string(graph_.node(graph_.value(slice->second.into).producer).op->name) + ")";
        }
      built[g] = std::move(group);
      live.push_back(g);
    }
    std::map<int, std::set<int>> deps;
    std::map<int, int> pending;
    std::map<int, std::vector<int>> users;
    for (int g : live) {
      deps[g] = draft_dependencies(g);
      pending[g] = static_cast<int>(deps[g].size());
      for (int d : deps[g]) users[d].push_back(g);
    }
    // Wave by wave (dependency levels): a group runs in the first wave after all it reads, and within a
    // wave groups follow their earliest node. A wave's groups read nothing another of them writes, so the
    // scheduler needs one barrier per wave and independent branches (inception blocks, fire modules,
    // downsample shortcuts) overlap on the GPU.
    std::vector<int> wave;
    for (int g : live)
      if (pending[g] == 0) wave.push_back(g);
    FusionPlan plan;
    for (std::size_t level = 0; !wave.empty(); ++level) {
      std::sort(wave.begin(), wave.end(),
                [&](int a, int b) { return std::pair(group_nodes_first(a), a) < std::pair(group_nodes_first(b), b); });
      std::vector<int> next;
      for (int g : wave) {
        plan.groups.push_back(std::move(built.at(g)));
        plan.groups.back().level = level;
        for (int u : users[g])
          if (--pending[u] == 0) next.push_back(u);
      }
      wave = std::move(next);
    }
    for (const Node& node : graph_.nodes) plan.op_count += node.op->kind == OpKind::kView ? 0 : 1;
    plan.prefix_of = prefix_of_;
    if (plan.groups.size() != live.size())
      return make_error(ErrorCode::kInternal, "fusion planner: the group graph has a cycle");
    for (const FusionGroup& group : plan.groups) {
      const std::size_t bindings = count_group_bindings(graph_, group, device_);
      if (bindings > device_.max_bindings)
        return make_error(ErrorCode::kUnsupported,
                          "group '" + group.label + "' needs " + std::to_string(bindings) +
                              " storage buffers; the device allows " + std::to_string(device_.max_bindings) +
                              " per dispatch (node '" + graph_.node(group.nodes.front()).name + "')");
    }
    return plan;
  }

  const GraphIR& graph_;
  const DevicePlan& device_;
  std::vector<Draft> drafts_;
  std::vector<int> group_of_;
  std::vector<ConcatFamily> families_;        // Concats that may be written in place
  std::set<NodeId> family_members_;           // their Concats (can_join: no post chain)
  std::set<NodeId> in_place_;                 // Concats whose inputs are stored into their slices
  std::map<ValueId, StoredSlice> stored_in_;  // those inputs: where they go
  std::map<ValueId, ValueId> prefix_of_;      // FusionPlan::prefix_of
  std::vector<Phase> phase_;
  // Post nodes that run in a view's order (post-fusion through a view): their values are stored where
  // the view puts them, and so go into no Concat or copy in place; a kernel draft holding any reads its
  // result through that view (viewed_shape).
  std::set<NodeId> view_ordered_;
  mutable std::vector<OutsideProducers> producers_of_;  // per draft (draft_dependencies)
  mutable ReachMarks reach_marks_;
  // Per draft, a level above every level it depends on (set_level); stale until recomputed where a
  // change could break that.
  mutable std::vector<int> level_;
  mutable bool levels_stale_ = false;
  std::vector<std::vector<int>> holders_;  // per node, the live drafts that compute it (index_holders)
};

}  // namespace

std::size_t count_group_bindings(const GraphIR& graph, const FusionGroup& group, const DevicePlan& device) {
  // Views of one stored tensor share its binding; scalar constants are baked in, except where a
  // kernel op reads them.
  std::set<ValueId> bases, kernel_reads;
  std::size_t scratch = 0;  // what the anchor's launch may add (split K across workgroups)
  NodeId anchor = kNoNode;  // the last kernel op (one before it is an element computed in its loads)
  for (NodeId n : group.nodes)
    if (graph.node(n).op->kind == OpKind::kKernel) {
      kernel_reads.insert(graph.node(n).inputs.begin(), graph.node(n).inputs.end());
      anchor = std::max(anchor, n);
    }
  if (anchor != kNoNode) scratch = scratch_bindings(*graph.node(anchor).op, device);
  for (ValueId v : group.inputs) {
    const Value& value = graph.value(v);
    if (value.constant && value.constant->numel() == 1 && !kernel_reads.count(v)) continue;
    bases.insert(graph.view_base(v));
  }
  std::size_t extra_chunks = 0;
  const std::uint64_t chunk = device.chunk_bytes();
  std::set<ValueId> kernel_bases;  // a view a kernel op reads in place binds its whole base
  for (NodeId n : group.nodes) {
    if (graph.node(n).op->kind != OpKind::kKernel) continue;
    for (std::size_t k = 0; k < graph.node(n).inputs.size(); ++k) {
      ValueId base = graph.view_base(graph.node(n).inputs[k]);
      // An operand scale's result is not stored: the anchor binds the scale's source (make_group_kernel).
      if (auto scale = group_operand_scale(graph, group, n, k); scale.ok() && scale->has_value()) base = (*scale)->view.base;
      kernel_bases.insert(base);
    }
  }
  for (ValueId v : kernel_bases) {
    const std::uint64_t bytes = graph.value(v).bytes();
    if (bytes > device.max_binding_bytes) extra_chunks += (bytes + chunk - 1) / chunk - 1;
  }
  return group.outputs.size() + bases.size() + extra_chunks + scratch;
}

Result<FusionPlan> plan_fusion(const GraphIR& graph, const DevicePlan& device, FusionMode mode) {
  if (graph.nodes.size() > kMaxGraphNodes)
    return make_error(ErrorCode::kInvalidArgument, "graph has " + std::to_string(graph.nodes.size()) +
                                                       " nodes; vkfuse plans at most " + std::to_string(kMaxGraphNodes) +
                                                       " (kMaxGraphNodes)");
  return Planner(graph, device).run(mode);
}

}  // namespace vkfuse
