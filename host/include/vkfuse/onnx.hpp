// Loading ONNX models into a vkfuse Graph.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <vkfuse/status.hpp>
#include <vkfuse/vkfuse.hpp>

namespace vkfuse {

struct OnnxOptions {
  // Fixes symbolic (or overrides) input dimensions: {"input", {1, 3, 224, 224}}.
  std::map<std::string, Shape> input_shapes;
  // The dtype the model's FLOAT (and DOUBLE, BFLOAT16) tensors run as inside the graph: kF32, or kF16
  // for 16-bit storage: float weights are rounded to f16 once, every intermediate is stored as f16,
  // and kernels compute in fp32 between their loads and stores (reductions, MatMul and Conv accumulate
  // in fp32). Graph inputs and outputs keep the model's dtypes: Casts at the boundary convert them.
  DType float_dtype = DType::kF32;
  // Sets dimension 0 of every graph input of rank 1 or more (initializers are not inputs), symbolic or
  // not, to this batch; inputs named in input_shapes take their given shape instead. Must be positive
  // (else kInvalidArgument). Where input shapes change, the model's declared output dims are not checked.
  std::optional<std::int64_t> batch;
};

// Reads an .onnx file (ai.onnx opsets 11 to 21) and its external data, folds constants and shape chains, and
// maps every node onto vkfuse ops. Errors name the file, the node, the op type and the opset; a model
// with unsupported ops fails with one error that lists every unsupported op type with its nodes.
//
// The graph keeps the model's names: graph inputs and outputs are named as in the model, and nodes after
// their ONNX nodes (missing or duplicate names are made unique: "Relu_0", "dup_1"; ops a node expands to
// are named "<node>/<part>"). Every dimension must be static once input_shapes and batch are applied; a
// symbolic one that is not fixed is an error naming the input and the dimension.
//
// Dtypes: FLOAT, DOUBLE and BFLOAT16 run as f32 (or as float_dtype), FLOAT16 as f16, BOOL as bool, and every integer type
// (INT64 included) as i32: integer inputs must be given as i32 tensors and integer outputs come back as
// i32. Integer constants are folded in int64 while loading; one that reaches the GPU must fit in int32.
//
// The graph must be in single-assignment form: each value name defined once (by an initializer, a graph
// input or one node output) before a node reads it, every name non-empty; a violation is an error naming
// the node(s) and the value, dead nodes included. A graph output may not share its name with a graph input.
//
// External data is read relative to the model's folder, from the file actually opened: it must be a
// regular file with one link (not a symbolic link, FIFO, device or directory; a hard link may lead outside
// the folder) whose resolved path lies inside the folder. An absolute location, or one that leaves the
// folder, is refused.
VKFUSE_API Result<Graph> load_onnx(const std::string& path, const OnnxOptions& options = {});
// The same from a model's bytes in memory (embedded in a program, fetched by the application): `data`
// is read during the call only; `name` stands for the file in messages. External data has no folder
// to come from: a model that needs it is refused.
VKFUSE_API Result<Graph> load_onnx_from_memory(const void* data, std::size_t size, const OnnxOptions& options = {},
                                               const std::string& name = "<memory>");

// What an .onnx file declares, read without building a graph: its inputs and outputs as a run takes
// and gives them (dtypes mapped as load_onnx maps them; -1 and TensorDesc::dim_names for symbolic
// dims, so a caller knows what to fix with OnnxOptions), the opset and the node count.
struct OnnxModelInfo {
  std::vector<TensorDesc> inputs;   // initializers excluded
  std::vector<TensorDesc> outputs;
  int opset = 0;
  std::size_t node_count = 0;
  std::string producer;             // "pytorch 2.11.0"
};
VKFUSE_API Result<OnnxModelInfo> inspect_onnx(const std::string& path);
VKFUSE_API Result<OnnxModelInfo> inspect_onnx_from_memory(const void* data, std::size_t size,
                                                          const std::string& name = "<memory>");

}  // namespace vkfuse
