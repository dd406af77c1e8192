#include "host/row_chain_builder.h"

#include <utility>

namespace vkfuse {

RowChainBuilder::RowChainBuilder(const GraphIR& graph, std::string label, Shape domain, int reductions)
    : graph_(graph), label_(std::move(label)), reductions_(reductions) {
  chain_.domain = std::move(domain);
}

Result<KernelOperand> RowChainBuilder::input(ValueId u) {
  if (auto it = inputs_.find(u); it != inputs_.end()) return KernelOperand{KernelOperand::Source::kInput, it->second};
  VKFUSE_ASSIGN_OR_RETURN(KernelInput input, stage_input(graph_, u));
  if (!input.is_literal) stored_.push_back(u);
  chain_.inputs.push_back(std::move(input));
  inputs_[u] = static_cast<int>(chain_.inputs.size() - 1);
  return KernelOperand{KernelOperand::Source::kInput, inputs_[u]};
}

KernelOperand RowChainBuilder::add_op(const Node& node, std::vector<KernelOperand> args) {
  chain_.ops.push_back(node_op(graph_, node, std::move(args)));
  return {KernelOperand::Source::kOp, static_cast<int>(chain_.ops.size() - 1)};
}

Status RowChainBuilder::add(NodeId n) {
  const Node& node = graph_.node(n);
  auto fail = [&](const std::string& why) {
    return group_error(ErrorCode::kInternal, label_, "'" + node.name + "' " + why);
  };
  std::vector<KernelOperand> args;
  for (ValueId u : node.inputs) {
    if (auto it = operand_.find(u); it != operand_.end()) {
      args.push_back(it->second);
      continue;
    }
    if (graph_.is_view(u) && operand_.count(graph_.view_base(u))) return fail("reads a view of the chain");
    VKFUSE_ASSIGN_OR_RETURN(KernelOperand in, input(u));
    args.push_back(in);
  }
  if (node.op->kind == OpKind::kReduce) {
    chain_.reductions.push_back({args.at(0), to_kernel_combine(node.op->combine), node.op->combine == ReduceCombine::kMean});
    operand_[node.output] = {KernelOperand::Source::kReduced, static_cast<int>(chain_.reductions.size() - 1)};
    return {};
  }
  if (node.op->kind != OpKind::kElementwise) return fail("in the row chain");
  operand_[node.output] = add_op(node, std::move(args));
  return {};
}

Result<RowChain> RowChainBuilder::finish(ValueId v) {
  if (static_cast<int>(chain_.reductions.size()) != reductions_ || !operand_.count(v))
    return group_error(ErrorCode::kInternal, label_, "a row chain without its value");
  chain_.value = operand_.at(v);
  return std::move(chain_);
}

}  // namespace vkfuse
