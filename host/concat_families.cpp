#include "host/concat_families.h"

#include <algorithm>
#include <optional>
#include <set>

namespace vkfuse {
namespace {

// Where each input of node `c` lies in its output, if its op places inputs (OpDef::place_inputs).
std::optional<std::vector<ElementPlacement>> input_places(const GraphIR& graph, NodeId c) {
  const Node& node = graph.node(c);
  if (!node.op->place_inputs) return std::nullopt;
  const Value& out = graph.value(node.output);
  auto places = node.op->place_inputs(graph.input_infos(c), {out.shape, out.dtype}, node.op_attrs());
  if (!places || places->size() != node.inputs.size()) return std::nullopt;
  return places;
}

// Whether every input of `members` (the root first) can be stored into the root's slices; see
// find_concat_families.
bool family_stores(const GraphIR& graph, const std::vector<NodeId>& members, const std::vector<ElementPlacement>& places) {
  const std::set<NodeId> set(members.begin(), members.end());
  std::set<ValueId> distinct;
  const std::vector<ValueId>& inputs = graph.node(members[0]).inputs;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const ValueId v = inputs[k];
    const Value& value = graph.value(v);
    if (value.producer == kNoNode || graph.is_view(v) || value.constant || value.is_output || !distinct.insert(v).second)
      return false;
    if (places[k].identity()) continue;
    for (NodeId c : value.consumers)
      if (!set.count(c)) return false;
  }
  for (std::size_t m = 1; m < members.size(); ++m)
    if (graph.value(graph.node(members[m]).output).is_output) return false;
  return true;
}

}  // namespace

std::vector<ConcatFamily> find_concat_families(const GraphIR& graph) {
  std::vector<std::pair<NodeId, std::vector<ElementPlacement>>> candidates;
  for (NodeId n = 0; n < static_cast<NodeId>(graph.nodes.size()); ++n)
    if (auto places = input_places(graph, n)) candidates.push_back({n, std::move(*places)});
  // Largest outputs first: a root before the Concats it may hold.
  std::stable_sort(candidates.begin(), candidates.end(), [&](const auto& a, const auto& b) {
    return shape_numel(graph.value(graph.node(a.first).output).shape) > shape_numel(graph.value(graph.node(b.first).output).shape);
  });
  std::vector<ConcatFamily> families;
  std::set<NodeId> taken;
  for (const auto& [root, places] : candidates) {
    if (taken.count(root)) continue;
    const std::vector<ValueId>& root_inputs = graph.node(root).inputs;
    std::vector<NodeId> members{root};
    for (const auto& [c, c_places] : candidates) {
      // (A Concat the root reads is stored into the root's slice: it cannot also be its first bytes.)
      if (c == root || taken.count(c) || std::find(root_inputs.begin(), root_inputs.end(), graph.node(c).output) != root_inputs.end())
        continue;
      const std::vector<ValueId>& inputs = graph.node(c).inputs;
      bool inside = graph.value(graph.node(c).output).dtype == graph.value(graph.node(root).output).dtype;
      for (std::size_t j = 0; j < inputs.size() && inside; ++j) {
        const auto at = std::find(root_inputs.begin(), root_inputs.end(), inputs[j]);
        inside = at != root_inputs.end() && places[static_cast<std::size_t>(at - root_inputs.begin())] == c_places[j];
      }
      if (inside) members.push_back(c);
    }
    if (!family_stores(graph, members, places)) members.resize(1);
    if (!family_stores(graph, members, places)) continue;
    taken.insert(members.begin(), members.end());
    families.push_back({root, std::move(members), places});
  }
  std::sort(families.begin(), families.end(), [](const ConcatFamily& a, const ConcatFamily& b) { return a.root < b.root; });
  return families;
}

}  // namespace vkfuse
