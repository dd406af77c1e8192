// The single-assignment rules of an ONNX graph, checked on the whole GraphProto before anything is
// decoded or mapped (dead nodes too): every value name is defined once, by an initializer, a graph
// input or one node output, before any node reads it.
//
// Refused, each with one error naming the node(s) and the value: an initializer or graph input or node
// output with an empty name; two initializers of one name; a node output that redefines an
// initializer, a graph input or an earlier node's output (both nodes are named); a node that lists
// one output twice; a node input that nothing before it defines; a graph output with an empty name.
// An initializer that is also listed as a graph input (IR < 4) is one value, as ONNX says.
#pragma once

#include <string>

#include <vkfuse/status.hpp>

namespace onnx {
class GraphProto;
}

namespace vkfuse::onnx_import {

// The name a node goes by in messages: its own, or "<op>_<index>" when it has none (as the importer
// names it).
std::string node_label(const std::string& name, const std::string& op, std::size_t index);

// `context` prefixes every message ("model.onnx (opset 13)").
Status check_single_assignment(const onnx::GraphProto& graph, const std::string& context);

}  // namespace vkfuse::onnx_import
