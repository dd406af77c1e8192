// Concat families: Concats that share one buffer when written in place (host/fusion_planner.cpp, Concat
// in place). Found from the graph alone, before any group forms.
#pragma once

#include <vector>

#include "codegen/kernel_spec.h"
#include "host/graph.h"

namespace vkfuse {

// A root Concat (an op with OpDef::place_inputs) and the Concats each of whose inputs lies where it lies
// in the root's output, so that their outputs are the root's leading elements: densenet's dense blocks
// at batch 1, where each layer concatenates the inputs of the one before and its own. Written in place,
// the root's inputs are stored into its slices once, no member runs, and a member's readers bind the
// root's first bytes (FusionPlan::prefix_of).
//   x0 ─┬───────────────── Concat ─ L ─ f1 ─┬─ Concat ─ L ─ f2 ─┐     [... (into Concat)] x0, f1, f2
//       ├───────────────────────────────────┴───────────────────┼─ Concat ─ y   and no Concat runs
//       └───────────────────────────────────────────────────────┘
// A family of one is a plain Concat whose inputs are its own.
struct ConcatFamily {
  NodeId root = kNoNode;
  std::vector<NodeId> members;           // the root first
  std::vector<ValueId> inputs;           // what is stored into the root: its inputs, leading Concats' in their place
  std::vector<ElementPlacement> places;  // where each of `inputs` lies in the root's output
};

// The families of `graph`, in graph order of their roots; each Concat is in at most one. A family's every input
// is a distinct value computed by some node (not a graph input, constant or view) and not a graph
// output, read by the family alone or lying at the start of the root's output (its other readers then
// bind those leading bytes: the block's first input, which densenet's first layer reads directly); no
// member but the root is a graph output, and no member is an input of the root except a leading one: a
// Concat at the start of the root's inputs whose own inputs lie where they would as the root's, which
// the family stores in its place (the importer's chained Concats of more than 16 inputs), as it reads
// any member that starts with it. Where the members cannot all be stored that way, the root alone, if
// its inputs are its own.
std::vector<ConcatFamily> find_concat_families(const GraphIR& graph);

}  // namespace vkfuse
