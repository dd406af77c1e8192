// Pass (every plan, fused or not): each graph output named in SessionOptions::image_outputs gets the
// kernel op that writes it into an image (host/ops/image_store_ops.h) appended after it. The op's
// result takes the output's name and place among the graph's outputs; the tensor it reads becomes an
// intermediate (renamed "<name>/scores" or "<name>/values"), which the planner may then compute in the
// store's loads where it is an elementwise chain:
//
//   ... -> Conv -> Add -> Sigmoid -> out                    (out: a graph output [1, 3, H, W])
//   ... -> Conv -> [Add -> Sigmoid -> ImageColor] -> out    (out: texels [H, W, 4], in the image)
//
// Covered by tests/interop/test_image_output.cpp (image against the tensor path, fused and unfused).
#pragma once

#include <map>
#include <string>

#include <vkfuse/vkfuse.hpp>

#include "host/graph.h"

namespace vkfuse {

// GLSL's format qualifier for an image output's format ("rgba8", ...).
const char* image_output_format_qualifier(ImageOutput::Format format);

// `graph` with the image outputs' stores appended; kInvalidArgument names an output that is not in the
// graph, is not a float [1, C, H, W], or has settings the mode cannot take.
Result<GraphIR> append_image_outputs(const GraphIR& graph, const std::map<std::string, ImageOutput>& outputs);

}  // namespace vkfuse
