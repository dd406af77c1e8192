// Builds a RowChain (codegen/kernel_spec.h) from graph nodes, for the roots that walk rows held in
// shared memory: roots/attention.glsl (host/attention_kernel.cpp) and roots/element_rows.glsl
// (host/element_rows_kernel.cpp).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "host/group_kernel.h"

namespace vkfuse {

class RowChainBuilder {
 public:
  // `reductions`: how many reductions the chain will fold; its source (the value the root computes
  // into shared memory) is then the operand kReduced `reductions`.
  RowChainBuilder(const GraphIR& graph, std::string label, Shape domain, int reductions);

  KernelOperand source() const { return {KernelOperand::Source::kReduced, reductions_}; }
  // Value v is operand `o` of the chain (its source, or the source scaled).
  void hold(ValueId v, KernelOperand o) { operand_[v] = o; }
  // The chain input that reads stored tensor (or literal) u, added on first use.
  Result<KernelOperand> input(ValueId u);
  // Appends an elementwise op on `args` (node_op); its result becomes the chain's newest operand.
  KernelOperand add_op(const Node& node, std::vector<KernelOperand> args);
  // Appends node n, reading the values the chain holds and chain inputs: a reduction folds along the
  // row, an elementwise op runs per element. An error for any other op, or one that reads a view of a
  // value the chain computes.
  Status add(NodeId n);
  // The finished chain, its value `v` (an error where the chain does not compute it, or folds fewer
  // reductions than announced), and the stored tensors it reads in order of first use.
  Result<RowChain> finish(ValueId v);
  const std::vector<ValueId>& stored() const { return stored_; }

 private:
  const GraphIR& graph_;
  std::string label_;
  int reductions_;
  RowChain chain_;
  std::map<ValueId, KernelOperand> operand_;
  std::map<ValueId, int> inputs_;
  std::vector<ValueId> stored_;
};

}  // namespace vkfuse
