// Loading ONNX models into a vkfuse Graph.
#pragma once

#include <map>
#include <string>

#include <vkfuse/status.hpp>
#include <vkfuse/vkfuse.hpp>

namespace vkfuse {

struct OnnxOptions {
  // Fixes symbolic (or overrides) input dimensions: {"input", {1, 3, 224, 224}}.
  std::map<std::string, Shape> input_shapes;
};

// Reads an .onnx file (opsets 11 to 21) and its external data, folds constants and shape chains, and
// maps every node onto vkfuse ops. Errors name the file, the node, the op type and the opset; a model
// with unsupported ops fails with one error that lists every unsupported op type with its nodes.
Result<Graph> load_onnx(const std::string& path, const OnnxOptions& options = {});

}  // namespace vkfuse
