#include "host/concat_families.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace vkfuse {
namespace {

// Where `inputs` would lie in node c's output as its inputs, if its op places inputs (OpDef::place_inputs):
// c's own inputs, or those with a leading Concat's inputs in that Concat's place (the same output).
std::optional<std::vector<ElementPlacement>> places_as_inputs(const GraphIR& graph, NodeId c, const std::vector<ValueId>& inputs) {
  const Node& node = graph.node(c);
  if (!node.op->place_inputs) return std::nullopt;
  std::vector<TensorInfo> infos;
  for (ValueId v : inputs) infos.push_back({graph.value(v).shape, graph.value(v).dtype});
  const Value& out = graph.value(node.output);
  auto places = node.op->place_inputs(infos, {out.shape, out.dtype}, node.op_attrs());
  if (!places || places->size() != inputs.size()) return std::nullopt;
  return places;
}

// Whether every one of `inputs` can be stored into the root's slices (`members`: the root first); see
// find_concat_families.
bool family_stores(const GraphIR& graph, const std::vector<NodeId>& members, const std::vector<ValueId>& inputs,
                   const std::vector<ElementPlacement>& places) {
  const std::set<NodeId> set(members.begin(), members.end());
  std::set<ValueId> distinct;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const ValueId v = inputs[k];
    const Value& value = graph.value(v);
    // (A member's output among them: a leading Concat that also lies further on in the root, whose
    // inputs the family stores at its start only.)
    if (value.producer == kNoNode || graph.is_view(v) || value.constant || value.is_output || !distinct.insert(v).second ||
        set.count(value.producer))
      return false;
    if (places[k].identity()) continue;
    for (NodeId c : value.consumers)
      if (!set.count(c)) return false;
  }
  for (std::size_t m = 1; m < members.size(); ++m)
    if (graph.value(graph.node(members[m]).output).is_output) return false;
  return true;
}

using Candidates = std::map<NodeId, std::vector<ElementPlacement>>;  // Concats: where their inputs lie

// A family in the making: its members (the root first), what it stores into the root and where, and the
// inputs of each leading Concat, by its output.
struct Draft {
  std::vector<NodeId> members;
  std::vector<ValueId> inputs;
  std::vector<ElementPlacement> places;
  std::map<ValueId, std::vector<ValueId>> leads;
};

// Concat c's inputs with a leading one's inputs in its place, and that one's leading one's, and so on (a
// block of more than 31 layers: [[layer 16's Concat, f16 .. f30], f31, ...]).
std::vector<ValueId> expanded(const GraphIR& graph, const Candidates& candidates, const Draft& draft, NodeId c) {
  std::vector<ValueId> flat = graph.node(c).inputs;
  if (!candidates.at(c)[0].identity()) return flat;
  for (auto lead = draft.leads.find(flat[0]); lead != draft.leads.end(); lead = draft.leads.find(flat[0])) {
    flat.erase(flat.begin());
    flat.insert(flat.begin(), lead->second.begin(), lead->second.end());
  }
  return flat;
}

// The root with its leading Concats: the root's first input, at its start, whose inputs lie where they
// would as the root's own, is a member, its inputs in its place, and so on down: densenet's blocks of
// more than 16 layers, whose Concats the importer chains ([layer 16's Concat, f16, ..., f24],
// host/onnx map_concat).
Draft with_leads(const GraphIR& graph, const Candidates& candidates, const std::set<NodeId>& taken, NodeId root) {
  Draft draft{{root}, graph.node(root).inputs, candidates.at(root), {}};
  const DType dtype = graph.value(graph.node(root).output).dtype;
  while (true) {
    const ValueId first = draft.inputs[0];
    const NodeId lead = graph.value(first).producer;
    if (lead == kNoNode || !candidates.count(lead) || taken.count(lead) || !draft.places[0].identity() ||
        graph.value(first).is_output || graph.value(graph.node(lead).output).dtype != dtype)
      return draft;
    const std::vector<ValueId> lead_inputs = expanded(graph, candidates, draft, lead);
    std::vector<ValueId> flat = lead_inputs;
    flat.insert(flat.end(), draft.inputs.begin() + 1, draft.inputs.end());
    auto flat_places = places_as_inputs(graph, root, flat);
    auto lead_places = places_as_inputs(graph, lead, lead_inputs);
    if (!flat_places || !lead_places || !std::equal(lead_places->begin(), lead_places->end(), flat_places->begin()))
      return draft;
    draft.members.push_back(lead);
    draft.leads[first] = lead_inputs;
    draft.inputs = std::move(flat);
    draft.places = std::move(*flat_places);
  }
}

// Whether Concat c (its leading Concats read as their inputs) is the draft's root's leading elements:
// each of its inputs is one the draft stores, at the same place.
bool inside(const GraphIR& graph, const Candidates& candidates, const Draft& draft, NodeId c) {
  const DType dtype = graph.value(graph.node(draft.members[0]).output).dtype;
  const std::vector<ValueId> c_inputs = expanded(graph, candidates, draft, c);
  const auto c_places = places_as_inputs(graph, c, c_inputs);
  if (!c_places || graph.value(graph.node(c).output).dtype != dtype) return false;
  for (std::size_t j = 0; j < c_inputs.size(); ++j) {
    const auto at = std::find(draft.inputs.begin(), draft.inputs.end(), c_inputs[j]);
    if (at == draft.inputs.end() || draft.places[static_cast<std::size_t>(at - draft.inputs.begin())] != (*c_places)[j])
      return false;
  }
  return true;
}

}  // namespace

std::vector<ConcatFamily> find_concat_families(const GraphIR& graph) {
  Candidates candidates;
  std::vector<NodeId> order;
  for (NodeId n = 0; n < static_cast<NodeId>(graph.nodes.size()); ++n)
    if (auto places = places_as_inputs(graph, n, graph.node(n).inputs))
      candidates[n] = std::move(*places), order.push_back(n);
  // Largest outputs first: a root before the Concats it may hold.
  std::stable_sort(order.begin(), order.end(), [&](NodeId a, NodeId b) {
    return shape_numel(graph.value(graph.node(a).output).shape) > shape_numel(graph.value(graph.node(b).output).shape);
  });
  std::vector<ConcatFamily> families;
  std::set<NodeId> taken;
  for (const NodeId root : order) {
    if (taken.count(root)) continue;
    Draft draft = with_leads(graph, candidates, taken, root);
    for (const NodeId c : order) {
      // (A Concat the root reads is stored into the root's slice: it cannot also be its first bytes.)
      const bool member = std::find(draft.members.begin(), draft.members.end(), c) != draft.members.end();
      if (member || taken.count(c) ||
          std::find(draft.inputs.begin(), draft.inputs.end(), graph.node(c).output) != draft.inputs.end())
        continue;
      if (inside(graph, candidates, draft, c)) draft.members.push_back(c);
    }
    if (!family_stores(graph, draft.members, draft.inputs, draft.places))
      draft = Draft{{root}, graph.node(root).inputs, candidates.at(root), {}};
    if (!family_stores(graph, draft.members, draft.inputs, draft.places)) continue;
    taken.insert(draft.members.begin(), draft.members.end());
    families.push_back({root, std::move(draft.members), std::move(draft.inputs), std::move(draft.places)});
  }
  std::sort(families.begin(), families.end(), [](const ConcatFamily& a, const ConcatFamily& b) { return a.root < b.root; });
  return families;
}

}  // namespace vkfuse
