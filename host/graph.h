// Graph IR: values (shape, dtype, optional constant data) and nodes (an op of the table, its inputs,
// its attributes), in topological order. Built by GraphBuilder, read by the passes and planners.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <vkfuse/vkfuse.hpp>

#include "host/op_def.h"

namespace vkfuse {

using ValueId = int;
using NodeId = int;
inline constexpr int kNoNode = -1;

struct Value {
  std::string name;
  Shape shape;
  DType dtype = DType::kF32;
  NodeId producer = kNoNode;         // kNoNode for graph inputs and constants
  std::vector<NodeId> consumers;
  // Set for constants; shared, so that a copy of the graph (a pass's rewrite) does not copy the data.
  std::shared_ptr<const HostTensor> constant;
  bool is_input = false;
  bool is_output = false;

  // Bytes of the tensor in a GPU buffer (and in host memory): elements times dtype_size.
  std::uint64_t bytes() const { return static_cast<std::uint64_t>(shape_numel(shape)) * dtype_size(dtype); }
};

struct Node {
  std::string name;  // unique; given or generated ("Add_3")
  const OpDef* op = nullptr;
  std::vector<ValueId> inputs;
  ValueId output = -1;
  std::vector<float> attrs;  // one per op->attrs entry, defaults filled in
  AttrLists lists;           // list attributes, by name (only those op->list_attrs allows)

  OpAttrs op_attrs() const { return {attrs, lists}; }
};

struct GraphIR {
  std::vector<Value> values;
  std::vector<Node> nodes;  // topological order
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  std::size_t source_op_count = 0;  // ops in the source model (ONNX nodes); 0 for C++ graphs
  // Graph inputs' and outputs' symbolic dimension names, by name (GraphBuilder::set_dim_names).
  std::map<std::string, std::vector<std::string>> dim_names;

  const Value& value(ValueId id) const { return values[static_cast<std::size_t>(id)]; }
  const Node& node(NodeId id) const { return nodes[static_cast<std::size_t>(id)]; }
  // Whether value `id` is a view's result: an index map over a stored tensor, with no memory of its own.
  bool is_view(ValueId id) const {
    const NodeId p = value(id).producer;
    return p != kNoNode && node(p).op->kind == OpKind::kView;
  }
  // The stored tensor a chain of views reads (`id` itself where it is stored).
  ValueId view_base(ValueId id) const {
    while (is_view(id)) id = node(value(id).producer).inputs[0];
    return id;
  }
  // What an op's launchers see of node `n`'s inputs: their shapes and dtypes, and the layout of each
  // strided view it reads in place (OpDef::reads_in_place; group_kernel.cpp).
  std::vector<TensorInfo> input_infos(NodeId n) const;
  TensorInfo input_info(NodeId n, ValueId u) const;
};

// Graph rewrites (host/passes/): appends `node`, whose inputs and output are values of `g` already,
// setting the output's producer and the inputs' consumers; appends a constant value.
void append_node(GraphIR& g, Node node);
ValueId add_constant(GraphIR& g, HostTensor data, std::string name);

// numpy broadcasting of two shapes; nullopt when they do not broadcast.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);

// The graph behind a public Graph handle.
const GraphIR& graph_ir(const Graph& graph);

}  // namespace vkfuse
