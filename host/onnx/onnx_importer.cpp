// load_onnx: parse the ModelProto, check the opset, turn initializers into constants and graph inputs
// into graph inputs with static shapes, then walk the nodes in order. Each node is either
//   - dead (nothing reads its outputs): skipped;
//   - folded on the CPU (all inputs known: the shape chains torch emits), never reaching the GPU;
//   - mapped onto vkfuse ops (onnx_node_map.h);
//   - unsupported: remembered, its outputs poisoned so that its consumers are skipped, and reported
//     together with every other unsupported node in one error at the end.
#include <vkfuse/onnx.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "host/checked_math.h"
#include "host/onnx/onnx_folding.h"
#include "host/onnx/onnx_graph_check.h"
#include "host/onnx/onnx_import_state.h"
#include "host/onnx/onnx_node_map.h"
#include "host/onnx/tensor_proto.h"
#include "host/parallel_for.h"
#include "host/passes/fold_batch_norm.h"
#include "onnx.pb.h"

namespace vkfuse::onnx_import {
namespace {

namespace fs = std::filesystem;

constexpr int kOldestOpset = 11;
constexpr int kNewestOpset = 21;

struct UnsupportedNode {
  std::string op;      // "Conv", or "com.microsoft.FusedConv"
  std::string node;
  std::string reason;
};

constexpr const char* kNotOnnxHint = "; the file is truncated or is not an ONNX model";

// Parsed from the flat bytes: each initializer's raw_data is copied once, in one piece (parsing from a
// stream grew every raw_data string chunk by chunk).
Result<std::unique_ptr<onnx::ModelProto>> parse_model(const void* data, std::size_t bytes, const std::string& name) {
  if (bytes == 0) return make_error(ErrorCode::kInvalidArgument, name + ": the file is empty" + std::string(kNotOnnxHint));
  if (bytes > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    return make_error(ErrorCode::kUnsupported, name + ": larger than protobuf's 2 GiB limit; store the weights as external data");
  auto model = std::make_unique<onnx::ModelProto>();
  if (!model->ParseFromArray(data, static_cast<int>(bytes)))
    return make_error(ErrorCode::kInvalidArgument, name + ": cannot be parsed as an ONNX ModelProto" + std::string(kNotOnnxHint));
  // Protobuf accepts many byte strings as some message: insist on what every ONNX model has.
  if (model->ir_version() <= 0 || !model->has_graph() || model->opset_import_size() == 0)
    return make_error(ErrorCode::kInvalidArgument,
                      name + ": not an ONNX model (no " +
                          (model->ir_version() <= 0 ? "ir_version" : !model->has_graph() ? "graph" : "opset_import") + ")" +
                          kNotOnnxHint);
  return model;
}

// Mapped (the page cache, no copy), then parsed.
Result<std::unique_ptr<onnx::ModelProto>> read_model(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return make_error(ErrorCode::kNotFound, path + ": no such file");
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) return make_error(ErrorCode::kIo, path + ": cannot read its size: " + ec.message());
  if (size > static_cast<std::uintmax_t>(std::numeric_limits<int>::max()))
    return make_error(ErrorCode::kUnsupported, path + ": larger than protobuf's 2 GiB limit; store the weights as external data");
  const auto bytes = static_cast<std::size_t>(size);
  if (bytes == 0) return parse_model(nullptr, 0, path);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error(ErrorCode::kIo, path + ": cannot be opened: " + std::strerror(errno));
  void* mapped = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  const int map_error = errno;
  ::close(fd);
  if (mapped == MAP_FAILED) return make_error(ErrorCode::kIo, path + ": cannot be mapped: " + std::strerror(map_error));
  auto model = parse_model(mapped, bytes, path);
  ::munmap(mapped, bytes);
  return model;
}

Result<int> model_opset(const onnx::ModelProto& model, const std::string& path) {
  for (const auto& entry : model.opset_import()) {
    if (!entry.domain().empty() && entry.domain() != "ai.onnx") continue;
    const std::int64_t version = entry.version();
    if (version < kOldestOpset || version > kNewestOpset)
      return make_error(ErrorCode::kUnsupported, path + ": ai.onnx opset " + std::to_string(version) + " is not supported (opsets " +
                                                     std::to_string(kOldestOpset) + " to " + std::to_string(kNewestOpset) + ")");
    return static_cast<int>(version);
  }
  return make_error(ErrorCode::kInvalidArgument, path + ": the model imports no ai.onnx opset");
}

// The symbolic names a value's declared dims carry ("" for fixed ones, "?" for unnamed symbolic ones);
// empty when none is symbolic.
std::vector<std::string> declared_dim_names(const onnx::ValueInfoProto& value) {
  std::vector<std::string> names;
  if (!value.type().has_tensor_type() || !value.type().tensor_type().has_shape()) return names;
  bool symbolic = false;
  for (const auto& dim : value.type().tensor_type().shape().dim()) {
    names.push_back(dim.has_dim_value() ? "" : dim.has_dim_param() && !dim.dim_param().empty() ? dim.dim_param() : "?");
    symbolic = symbolic || !names.back().empty();
  }
  if (!symbolic) names.clear();
  return names;
}

// A graph input's static shape: the model's dims, with OnnxOptions::input_shapes fixing symbolic ones.
Result<Shape> input_shape(const onnx::ValueInfoProto& input, const OnnxOptions& options, const std::string& path) {
  const std::string where = path + ": input '" + input.name() + "'";
  if (!input.type().has_tensor_type()) return make_error(ErrorCode::kUnsupported, where + " is not a tensor");
  const auto& type = input.type().tensor_type();
  auto given = options.input_shapes.find(input.name());
  if (!type.has_shape() && given == options.input_shapes.end())
    return make_error(ErrorCode::kInvalidArgument, where + " has no shape; give one with OnnxOptions::input_shapes");
  Shape shape;
  for (int d = 0; d < type.shape().dim_size(); ++d) {
    const auto& dim = type.shape().dim(d);
    shape.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
  }
  if (options.batch && given == options.input_shapes.end() && !shape.empty()) shape[0] = *options.batch;
  if (given != options.input_shapes.end()) {
    if (type.has_shape() && given->second.size() != shape.size())
      return make_error(ErrorCode::kInvalidArgument, where + ": the given shape " + shape_to_string(given->second) + " has rank " +
                                                         std::to_string(given->second.size()) + ", the model's has rank " +
                                                         std::to_string(shape.size()));
    shape = given->second;
  }
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    if (shape[static_cast<std::size_t>(d)] >= 0) continue;
    const auto& dim = type.shape().dim(d);
    if (given != options.input_shapes.end() || dim.has_dim_value())
      return make_error(ErrorCode::kInvalidArgument, where + " has a negative dimension in " + shape_to_string(shape));
    const std::string symbol = dim.has_dim_param() && !dim.dim_param().empty() ? " ('" + dim.dim_param() + "')" : "";
    return make_error(ErrorCode::kInvalidArgument, where + ": dimension " + std::to_string(d) + symbol +
                                                       " is symbolic; fix it with OnnxOptions::input_shapes or OnnxOptions::batch (vkfuse run --shape " +
                                                       input.name() + "=...)");
  }
  if (!checked_numel(shape))
    return make_error(ErrorCode::kInvalidArgument, where + ": dimensions " + shape_to_string(shape) + " overflow the element count");
  return shape;
}

Status add_inputs(ImportState& state, onnx::GraphProto& graph, const OnnxOptions& options, const std::string& path,
                  const std::string& base_dir) {
  // Decoded on the worker threads (VKFUSE_COMPILE_THREADS): the copies are bound by first-touch page
  // faults, which scale with cores. Each raw_data is freed once decoded, so the weights are not held
  // twice (and the next tensor may reuse its pages).
  const auto count = static_cast<std::size_t>(graph.initializer_size());
  std::vector<std::shared_ptr<const ConstTensor>> decoded(count);
  VKFUSE_TRY(parallel_for(count, compile_thread_count(), [&](std::size_t i) -> Status {
    onnx::TensorProto& init = *graph.mutable_initializer(static_cast<int>(i));
    VKFUSE_ASSIGN_OR_RETURN(ConstTensor value, const_from_proto(init, base_dir, path + ": initializer '" + init.name() + "'"));
    decoded[i] = std::make_shared<const ConstTensor>(std::move(value));
    std::string().swap(*init.mutable_raw_data());
    return {};
  }));
  for (std::size_t i = 0; i < count; ++i)
    state.values[graph.initializer(static_cast<int>(i)).name()] = OnnxValue{std::move(decoded[i]), Tensor{}, false};
  if (graph.sparse_initializer_size() > 0)
    return make_error(ErrorCode::kUnsupported, path + ": sparse initializers are not supported");
  std::set<std::string> inputs;
  for (const auto& input : graph.input()) {
    if (state.values.count(input.name())) continue;  // an initializer listed as an input (IR < 4): a constant
    VKFUSE_ASSIGN_OR_RETURN(const Shape shape, input_shape(input, options, path));
    VKFUSE_ASSIGN_OR_RETURN(const DType dtype, dtype_for_onnx_type(input.type().tensor_type().elem_type(),
                                                                   path + ": input '" + input.name() + "'"));
    Tensor t = state.builder.input(input.name(), shape, dtype);
    if (dtype == DType::kF32 && state.float_dtype != DType::kF32)  // the graph runs in float_dtype inside
      t = state.builder.op("Cast", {t}, {{"to", static_cast<float>(state.float_dtype)}},
                           state.unique_node_name(input.name() + "/to_" + dtype_name(state.float_dtype)));
    if (!t.valid()) return state.builder.status().with_context(path);
    state.values[input.name()] = OnnxValue{nullptr, t, false};
    inputs.insert(input.name());
    if (auto names = declared_dim_names(input); names.size() == shape.size()) state.builder.set_dim_names(input.name(), names);
  }
  for (const auto& [name, shape] : options.input_shapes)
    if (!inputs.count(name))
      return make_error(ErrorCode::kInvalidArgument, path + ": OnnxOptions::input_shapes names '" + name + "', which is not a graph input");
  return {};
}

// Marks the nodes whose outputs reach a graph output, and counts the live readers of every value.
std::vector<bool> live_nodes(const std::vector<onnx::NodeProto>& nodes, const onnx::GraphProto& graph, ImportState& state) {
  std::set<std::string> needed;
  for (const auto& out : graph.output()) needed.insert(out.name());
  std::vector<bool> live(nodes.size(), false);
  for (std::size_t i = nodes.size(); i-- > 0;) {
    for (const std::string& out : nodes[i].output()) live[i] = live[i] || needed.count(out) > 0;
    if (live[i])
      for (const std::string& in : nodes[i].input()) needed.insert(in);
  }
  state.uses.clear();
  for (const auto& out : graph.output()) ++state.uses[out.name()];
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (live[i])
      for (const std::string& in : nodes[i].input())
        if (!in.empty()) ++state.uses[in];
  return live;
}

class NodeWalker {
 public:
  NodeWalker(ImportState& state, std::string base_dir) : state_(state), base_dir_(std::move(base_dir)) {}

  // Ok, or an error that stops the import (unsupported nodes are collected instead).
  Status visit(const onnx::NodeProto& node, std::size_t index) {
    const std::string& op = node.op_type();
    const std::string name = state_.unique_node_name(node_label(node.name(), op, index));
    const std::string where = "node '" + name + "' (" + op + ")";
    bool poisoned = false, all_constant = true;
    for (const std::string& in : node.input()) {
      if (in.empty()) continue;
      auto it = state_.values.find(in);
      if (it == state_.values.end())
        return make_error(ErrorCode::kInvalidArgument,
                          where + ": input '" + in + "' is not an initializer, a graph input or the output of an earlier node");
      poisoned = poisoned || it->second.poisoned;
      all_constant = all_constant && it->second.constant != nullptr;
    }
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      return unsupported(node, node.domain() + "." + op, name, "operator domain '" + node.domain() + "' is not supported");
    if (poisoned) {
      Status available = onnx_op_available(op);
      return available.ok() ? poison(node) : unsupported(node, op, name, available.message());
    }
    const NodeAttributes attrs(node, where);
    // Shape and Size read only the static shape of their input.
    if ((op == "Shape" || op == "Size") && node.input_size() > 0) {
      const Shape shape = shape_of(node.input(0));
      ConstTensor value = fold_size_of(shape);
      if (op == "Shape") {
        VKFUSE_ASSIGN_OR_RETURN(value, fold_shape_of(shape, attrs));
      }
      return set_constant(node, 0, std::move(value));
    }
    if (all_constant) {
      std::vector<const ConstTensor*> inputs;
      for (const std::string& in : node.input()) inputs.push_back(in.empty() ? nullptr : state_.values.at(in).constant.get());
      const FoldContext context{node, attrs, state_.opset, base_dir_, &fold_budget_};
      VKFUSE_ASSIGN_OR_RETURN(std::optional<std::vector<ConstTensor>> folded, fold_node(context, inputs));
      if (folded) {
        for (std::size_t k = 0; k < folded->size(); ++k) VKFUSE_TRY(set_constant(node, k, std::move((*folded)[k])));
        return {};
      }
    }
    if (Status available = onnx_op_available(op); !available.ok()) return unsupported(node, op, name, available.message());
    NodeMapping mapping(state_, node, name);
    const Status mapped = find_onnx_mapping(op)->map(mapping);
    if (!state_.builder.status().ok()) return state_.builder.status();
    if (mapped.code() == ErrorCode::kUnsupported) {
      std::string reason = mapped.message();
      if (reason.rfind(where + ": ", 0) == 0) reason = reason.substr(where.size() + 2);
      return unsupported(node, op, name, reason);
    }
    if (!mapped.ok()) return mapped;
    for (int k = 0; k < node.output_size(); ++k)
      if (mapping.output_used(static_cast<std::size_t>(k)) && !state_.values.count(node.output(k)))
        return make_error(ErrorCode::kInternal, where + ": the importer produced no value for output '" + node.output(k) + "'");
    return {};
  }

  const std::vector<UnsupportedNode>& unsupported_nodes() const { return unsupported_; }

 private:
  Shape shape_of(const std::string& name) const {
    const OnnxValue& v = state_.values.at(name);
    return v.constant ? v.constant->shape : state_.builder.shape(v.tensor);
  }
  Status set_constant(const onnx::NodeProto& node, std::size_t k, ConstTensor value) {
    if (k < static_cast<std::size_t>(node.output_size()) && !node.output(static_cast<int>(k)).empty())
      state_.values[node.output(static_cast<int>(k))] = OnnxValue{std::make_shared<const ConstTensor>(std::move(value)), Tensor{}, false};
    return {};
  }
  Status poison(const onnx::NodeProto& node) {
    for (const std::string& out : node.output())
      if (!out.empty()) state_.values[out] = OnnxValue{nullptr, Tensor{}, true};
    return {};
  }
  Status unsupported(const onnx::NodeProto& node, std::string op, std::string name, std::string reason) {
    unsupported_.push_back({std::move(op), std::move(name), std::move(reason)});
    return poison(node);
  }

  ImportState& state_;
  std::string base_dir_;
  FoldBudget fold_budget_;  // one per model
  std::vector<UnsupportedNode> unsupported_;
};

// One message for every unsupported node, grouped by op type (and reason), in model order:
//   model.onnx (ai.onnx opset 17): 3 nodes use ops vkfuse cannot run:
//     Conv: 'conv1', 'conv2' (needs vkfuse op 'Conv', which is not in the op table yet)
//     Resize: 'up' (mode='cubic' is not supported)
std::string unsupported_message(const std::string& path, int opset, const std::vector<UnsupportedNode>& nodes) {
  std::vector<std::pair<std::string, std::string>> groups;  // (op, reason) in first-seen order
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> names;
  for (const UnsupportedNode& n : nodes) {
    auto key = std::make_pair(n.op, n.reason);
    if (!names.count(key)) groups.push_back(key);
    names[key].push_back(n.node);
  }
  std::string text = path + " (ai.onnx opset " + std::to_string(opset) + "): " + std::to_string(nodes.size()) +
                     (nodes.size() == 1 ? " node uses an op" : " nodes use ops") + " vkfuse cannot run:";
  constexpr std::size_t kShown = 20;
  for (const auto& key : groups) {
    const std::vector<std::string>& list = names[key];
    text += "\n  " + key.first + ": ";
    for (std::size_t i = 0; i < list.size() && i < kShown; ++i) text += (i ? ", '" : "'") + list[i] + "'";
    if (list.size() > kShown) text += " and " + std::to_string(list.size() - kShown) + " more";
    if (!key.second.empty()) text += " (" + key.second + ")";
  }
  return text;
}

Status add_outputs(ImportState& state, const onnx::GraphProto& graph, const OnnxOptions& options, const std::string& path) {
  std::set<int> taken;
  for (const auto& output : graph.output()) {
    const std::string& name = output.name();
    if (!state.values.count(name))
      return make_error(ErrorCode::kInvalidArgument, path + ": graph output '" + name + "' is not produced by any node");
    VKFUSE_ASSIGN_OR_RETURN(Tensor t, state.graph_tensor(name));
    // A float output leaves in the model's dtype (f32 unless it declares FLOAT16), whatever the graph
    // computed in; the Cast also makes the copy a second output name of the same value needs.
    const bool declared_f16 = output.type().has_tensor_type() && output.type().tensor_type().elem_type() == onnx::TensorProto::FLOAT16;
    if (state.float_dtype != DType::kF32 && state.builder.dtype(t) == state.float_dtype && !declared_f16) {
      t = state.builder.op("Cast", {t}, {{"to", static_cast<float>(DType::kF32)}}, state.unique_node_name(name + "/to_f32"));
      taken.insert(t.id);
    } else if (!taken.insert(t.id).second) {  // one value under two output names: a copy for the second
      t = state.builder.op("Identity", {t}, {}, state.unique_node_name(name + "/copy"));
    }
    const Shape shape = state.builder.shape(t);
    state.builder.output(t, name);
    if (auto names = declared_dim_names(output); names.size() == shape.size()) state.builder.set_dim_names(name, names);
    if (!state.builder.status().ok()) return state.builder.status().with_context(path);
    // The declared shape, when the model has one, checks the import (shapes are all static here).
    if (!output.type().has_tensor_type() || !output.type().tensor_type().has_shape()) continue;
    const auto& dims = output.type().tensor_type().shape().dim();
    bool same = dims.size() == static_cast<int>(shape.size());
    // (Only the rank where the inputs' shapes were changed: the declared dims are the model's own.)
    const bool inputs_as_declared = options.input_shapes.empty() && !options.batch;
    for (int d = 0; same && d < dims.size() && inputs_as_declared; ++d)
      same = !dims[d].has_dim_value() || dims[d].dim_value() == shape[static_cast<std::size_t>(d)];
    if (!same) {
      Shape declared;
      for (const auto& d : dims) declared.push_back(d.has_dim_value() ? d.dim_value() : -1);
      return make_error(ErrorCode::kInvalidArgument, path + ": graph output '" + name + "' is declared as " +
                                                         shape_to_string(declared) + " (rank " + std::to_string(declared.size()) +
                                                         ") but computes " + shape_to_string(shape) + " (rank " +
                                                         std::to_string(shape.size()) + ")");
    }
  }
  return {};
}

// `path` names the model in messages; external data is read from `base_dir` (none: refused).
Result<Graph> import_parsed(onnx::ModelProto* model, const std::string& path, const std::string& base_dir,
                            const OnnxOptions& options) {
  if (options.batch && *options.batch <= 0)
    return make_error(ErrorCode::kInvalidArgument, path + ": OnnxOptions::batch is " + std::to_string(*options.batch) + ", not positive");
  VKFUSE_ASSIGN_OR_RETURN(const int opset, model_opset(*model, path));
  onnx::GraphProto& graph = *model->mutable_graph();
  const std::string context = path + " (opset " + std::to_string(opset) + ")";

  ImportState state;
  state.model = path;
  state.opset = opset;
  if (options.float_dtype != DType::kF32 && options.float_dtype != DType::kF16)
    return make_error(ErrorCode::kInvalidArgument, path + ": OnnxOptions::float_dtype is " + dtype_name(options.float_dtype) +
                                                       "; float tensors can run as f32 or f16");
  state.float_dtype = options.float_dtype;
  VKFUSE_TRY(check_single_assignment(graph, context));
  VKFUSE_TRY(add_inputs(state, graph, options, path, base_dir));
  graph.clear_initializer();  // decoded: the weights are not kept twice

  // The passes rewrite nodes: take them out of the model.
  std::vector<onnx::NodeProto> nodes;
  nodes.reserve(static_cast<std::size_t>(graph.node_size()));
  for (onnx::NodeProto& node : *graph.mutable_node()) nodes.push_back(std::move(node));
  live_nodes(nodes, graph, state);
  if (auto folded = fold_batch_norms(nodes, state); !folded.ok()) return folded.status().with_context(context);
  const std::vector<bool> live = live_nodes(nodes, graph, state);

  NodeWalker walker(state, base_dir);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!live[i]) continue;
    if (Status s = walker.visit(nodes[i], i); !s.ok()) return s.with_context(context);
  }
  if (!walker.unsupported_nodes().empty())
    return make_error(ErrorCode::kUnsupported, unsupported_message(path, opset, walker.unsupported_nodes()));
  VKFUSE_TRY(add_outputs(state, graph, options, path));
  state.builder.set_source_op_count(nodes.size());
  auto built = state.builder.build();
  if (!built.ok()) return built.status().with_context(context);
  return built;
}

Result<OnnxModelInfo> inspect_parsed(const onnx::ModelProto* model, const std::string& path) {
  OnnxModelInfo info;
  VKFUSE_ASSIGN_OR_RETURN(info.opset, model_opset(*model, path));
  const onnx::GraphProto& graph = model->graph();
  info.node_count = static_cast<std::size_t>(graph.node_size());
  info.producer = model->producer_name() + (model->producer_version().empty() ? "" : " " + model->producer_version());
  std::set<std::string> initializers;
  for (const auto& init : graph.initializer()) initializers.insert(init.name());
  auto describe = [&](const onnx::ValueInfoProto& value, const char* kind) -> Result<TensorDesc> {
    const std::string where = path + ": " + kind + " '" + value.name() + "'";
    if (!value.type().has_tensor_type()) return make_error(ErrorCode::kUnsupported, where + " is not a tensor");
    TensorDesc desc{value.name(), {}, DType::kF32, declared_dim_names(value)};
    VKFUSE_ASSIGN_OR_RETURN(desc.dtype, dtype_for_onnx_type(value.type().tensor_type().elem_type(), where));
    for (const auto& dim : value.type().tensor_type().shape().dim()) desc.shape.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
    return desc;
  };
  for (const auto& input : graph.input()) {
    if (initializers.count(input.name())) continue;
    VKFUSE_ASSIGN_OR_RETURN(TensorDesc desc, describe(input, "input"));
    info.inputs.push_back(std::move(desc));
  }
  for (const auto& output : graph.output()) {
    VKFUSE_ASSIGN_OR_RETURN(TensorDesc desc, describe(output, "output"));
    info.outputs.push_back(std::move(desc));
  }
  return info;
}

}  // namespace
}  // namespace vkfuse::onnx_import

namespace vkfuse {

Result<OnnxModelInfo> inspect_onnx(const std::string& path) {
  VKFUSE_ASSIGN_OR_RETURN(const auto model, onnx_import::read_model(path));
  return onnx_import::inspect_parsed(model.get(), path);
}

Result<OnnxModelInfo> inspect_onnx_from_memory(const void* data, std::size_t size, const std::string& name) {
  VKFUSE_ASSIGN_OR_RETURN(const auto model, onnx_import::parse_model(data, size, name));
  return onnx_import::inspect_parsed(model.get(), name);
}

Result<Graph> load_onnx(const std::string& path, const OnnxOptions& options) {
  VKFUSE_ASSIGN_OR_RETURN(const auto model, onnx_import::read_model(path));
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  return onnx_import::import_parsed(model.get(), path, folder.empty() ? "." : folder.string(), options);
}

Result<Graph> load_onnx_from_memory(const void* data, std::size_t size, const OnnxOptions& options, const std::string& name) {
  VKFUSE_ASSIGN_OR_RETURN(const auto model, onnx_import::parse_model(data, size, name));
  return onnx_import::import_parsed(model.get(), name, "", options);
}

}  // namespace vkfuse
