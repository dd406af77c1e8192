// The state of one ONNX import, and the view a node mapper gets of the node it maps.
//
// Every ONNX value name maps to an OnnxValue: a constant known at import time (initializers and what
// the CPU folder computed), a graph tensor, or "poisoned" (made by a node we cannot map: its consumers
// are skipped so that one error can list every unsupported node).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <vkfuse/vkfuse.hpp>

#include "host/onnx/const_tensor.h"
#include "host/onnx/onnx_attributes.h"

namespace onnx {
class NodeProto;
}

namespace vkfuse::onnx_import {

struct OnnxValue {
  std::shared_ptr<const ConstTensor> constant;  // known at import time
  Tensor tensor;                                // the graph tensor (for a constant: once a GPU op read it)
  bool poisoned = false;
};

struct ImportState {
  GraphBuilder builder;
  std::string model;  // the file, for messages
  int opset = 0;      // ai.onnx opset of the model
  std::map<std::string, OnnxValue, std::less<>> values;
  std::map<std::string, int, std::less<>> uses;  // consumers and graph outputs of each value
  std::set<std::string, std::less<>> node_names;  // vkfuse node names handed out
  DType float_dtype = DType::kF32;  // what FLOAT tensors run as (OnnxOptions::float_dtype)
  // The Concats emitted so far, by their axis and input ids ({axis, id0, id1, ...}), the first of each:
  // a long Concat's leading chunk is an earlier Concat of the same inputs where there is one (map_concat).
  std::map<std::vector<std::int64_t>, Tensor> concats;

  // The dtype a tensor of ONNX type `onnx_type` runs as in the graph: dtype_for_onnx_type, with f32
  // replaced by float_dtype.
  Result<DType> graph_dtype(int onnx_type, const std::string& what) const;

  // `base`, or `base` with a numeric suffix when taken.
  std::string unique_node_name(const std::string& base);
  // The graph tensor of a value; a constant becomes a graph constant on first use.
  Result<Tensor> graph_tensor(const std::string& name);
};

class NodeMapping {
 public:
  NodeMapping(ImportState& state, const onnx::NodeProto& node, std::string name);

  const onnx::NodeProto& node() const { return node_; }
  const NodeAttributes& attrs() const { return attrs_; }
  int opset() const { return state_.opset; }
  const std::string& name() const { return name_; }
  const std::string& op_type() const;
  // "node 'conv1' (Conv)": the prefix of this node's errors.
  const std::string& where() const { return attrs_.where(); }

  // ONNX leaves trailing optional inputs out and marks skipped ones with "".
  std::size_t input_count() const;
  bool has_input(std::size_t i) const;
  const std::string& input_name(std::size_t i) const;
  const ConstTensor* constant(std::size_t i) const;  // nullptr unless known at import time
  Result<Tensor> tensor(std::size_t i);              // the graph tensor
  Shape shape(std::size_t i) const;
  // An input that must be an integer constant (axes, pads, sizes); `what` names it in errors.
  Result<std::vector<std::int64_t>> constant_ints(std::size_t i, const std::string& what) const;
  // A float scalar input that must be a constant (Clip's min/max, Pad's value).
  Result<float> constant_scalar(std::size_t i, const std::string& what) const;

  std::size_t output_count() const;
  // Whether anything reads output k (a node or a graph output).
  bool output_used(std::size_t k) const;
  void set_output(std::size_t k, Tensor tensor);
  void set_output(std::size_t k, ConstTensor value);
  // Output k is input i, unchanged (Identity, Dropout, a Reshape to the same shape).
  void forward_input(std::size_t k, std::size_t i);

  // Emits a vkfuse op named after this node: "name" for the node's own result, "name/suffix" for
  // helper ops. The builder keeps the first error; the importer reports it after the mapper returns.
  Tensor op(std::string_view type, const std::vector<Tensor>& inputs, const std::vector<Attr>& attrs = {},
            std::string_view suffix = {});
  Shape shape_of(Tensor tensor) const { return state_.builder.shape(tensor); }
  DType dtype_of(Tensor tensor) const { return state_.builder.dtype(tensor); }
  Result<DType> graph_dtype(int onnx_type, const std::string& what) const { return state_.graph_dtype(onnx_type, what); }
  GraphBuilder& builder() { return state_.builder; }
  // ImportState::concats.
  std::map<std::vector<std::int64_t>, Tensor>& concats() { return state_.concats; }

  // kUnsupported unless the op table has `vkfuse_op` (other ops land in the table over time).
  Status require(std::string_view vkfuse_op) const;
  Status invalid(const std::string& message) const;      // kInvalidArgument, prefixed with where()
  Status unsupported(const std::string& message) const;  // kUnsupported: listed with the other unsupported nodes

 private:
  ImportState& state_;
  const onnx::NodeProto& node_;
  std::string name_;
  NodeAttributes attrs_;
  bool own_name_taken_ = false;  // the first op() without a suffix gets the node's own name
};

}  // namespace vkfuse::onnx_import
