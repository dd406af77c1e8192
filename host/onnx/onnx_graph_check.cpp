// One pass over the node list in file order with a map from each defined name to its definer: enough
// for SSA, since ONNX requires the nodes to be topologically sorted.
#include "host/onnx/onnx_graph_check.h"

#include <map>

#include "onnx.pb.h"

namespace vkfuse::onnx_import {
namespace {

Status invalid(const std::string& context, const std::string& message) {
  return make_error(ErrorCode::kInvalidArgument, context + ": " + message);
}

}  // namespace

std::string node_label(const std::string& name, const std::string& op, std::size_t index) {
  return name.empty() ? op + "_" + std::to_string(index) : name;
}

Status check_single_assignment(const onnx::GraphProto& graph, const std::string& context) {
  std::map<std::string, std::string> definer;  // value name -> "the initializer 'w'", "node 'a' (Relu)", ...
  for (int i = 0; i < graph.initializer_size(); ++i) {
    const std::string& name = graph.initializer(i).name();
    if (name.empty()) return invalid(context, "initializer " + std::to_string(i) + " has no name");
    if (!definer.emplace(name, "the initializer '" + name + "'").second)
      return invalid(context, "two initializers are named '" + name + "'");
  }
  for (int i = 0; i < graph.input_size(); ++i) {
    const std::string& name = graph.input(i).name();
    if (name.empty()) return invalid(context, "graph input " + std::to_string(i) + " has no name");
    definer.emplace(name, "the graph input '" + name + "'");  // an initializer listed as an input stays one
  }
  for (int n = 0; n < graph.node_size(); ++n) {
    const onnx::NodeProto& node = graph.node(n);
    const std::string where =
        "node '" + node_label(node.name(), node.op_type(), static_cast<std::size_t>(n)) + "' (" + node.op_type() + ")";
    for (const std::string& in : node.input())
      if (!in.empty() && !definer.count(in))
        return invalid(context, where + ": input '" + in + "' is not an initializer, a graph input or the output of an earlier node");
    for (int k = 0; k < node.output_size(); ++k) {
      const std::string& out = node.output(k);
      if (out.empty()) continue;  // an optional output left out
      for (int j = 0; j < k; ++j)
        if (node.output(j) == out) return invalid(context, where + " lists output '" + out + "' twice");
      auto [it, fresh] = definer.emplace(out, where);
      if (!fresh) return invalid(context, where + ": output '" + out + "' is already defined by " + it->second);
    }
  }
  for (int i = 0; i < graph.output_size(); ++i)
    if (graph.output(i).name().empty()) return invalid(context, "graph output " + std::to_string(i) + " has no name");
  return {};
}

}  // namespace vkfuse::onnx_import
