#include "host/passes/image_outputs.h"

#include <algorithm>
#include <memory>

#include "host/group_kernel.h"
#include "host/op_registry.h"
#include "host/ops/image_store_ops.h"

namespace vkfuse {

const char* image_output_format_qualifier(ImageOutput::Format format) {
  switch (format) {
    case ImageOutput::Format::kRGBA8: return "rgba8";
    case ImageOutput::Format::kRGBA16F: return "rgba16f";
    case ImageOutput::Format::kRGBA32F: return "rgba32f";
  }
  return "rgba8";
}

namespace {

// The store's node for `out` (not yet appended): its op, attributes and, for a palette, the constant.
Result<Node> store_node(GraphIR& g, ValueId x, const std::string& name, const ImageOutput& out) {
  Node node;
  node.name = name + "/image_store";
  node.inputs = {x};
  const float nhwc = out.nhwc ? 1.0f : 0.0f;
  if (out.mode == ImageOutput::Mode::kColor) {
    node.op = &image_color_op();
    node.attrs = {nhwc};
    for (int c : out.channels) node.attrs.push_back(static_cast<float>(c));
    for (float s : out.scale) node.attrs.push_back(s);
    for (float b : out.bias) node.attrs.push_back(b);
    node.attrs.push_back(out.format == ImageOutput::Format::kRGBA8 ? 1.0f : 0.0f);
    return node;
  }
  if (out.palette.empty() || out.palette.size() > 256)
    return make_error(ErrorCode::kInvalidArgument, "image output '" + name + "': a palette has 1 to 256 entries, not " +
                                                       std::to_string(out.palette.size()));
  node.op = &image_palette_op();
  node.attrs = {nhwc};
  std::vector<float> rgba;
  for (const auto& entry : out.palette) rgba.insert(rgba.end(), entry.begin(), entry.end());
  const Shape shape{static_cast<std::int64_t>(out.palette.size()), 4};
  node.inputs.push_back(add_constant(g, HostTensor::from_floats(shape, rgba), name + "/palette"));
  return node;
}

// A kernel op reads a contiguous tensor: a strided view (a Transpose at the model's end) is copied.
ValueId contiguous(GraphIR& g, ValueId x) {
  if (!g.is_view(x) || is_contiguous_value(g, x)) return x;
  Value copy;
  copy.name = g.value(x).name + "/contiguous";
  copy.shape = g.value(x).shape;
  copy.dtype = g.value(x).dtype;
  g.values.push_back(std::move(copy));
  Node node;
  node.name = g.values.back().name;
  node.op = find_op("Identity");
  node.inputs = {x};
  const auto out = static_cast<ValueId>(g.values.size() - 1);
  node.output = out;
  append_node(g, std::move(node));
  return out;
}

}  // namespace

Result<GraphIR> append_image_outputs(const GraphIR& graph, const std::map<std::string, ImageOutput>& outputs) {
  GraphIR g = graph;
  for (const auto& [output_name, out] : outputs) {
    const std::string& name = output_name;  // Clang 14 cannot capture a structured binding
    const auto at = std::find_if(g.outputs.begin(), g.outputs.end(), [&](ValueId v) { return g.value(v).name == name; });
    if (at == g.outputs.end())
      return make_error(ErrorCode::kInvalidArgument, "image output '" + name + "': the graph has no output of that name");
    if (g.value(*at).is_input)
      return make_error(ErrorCode::kInvalidArgument, "image output '" + name + "' is a graph input too");
    const ValueId x = contiguous(g, *at);
    VKFUSE_ASSIGN_OR_RETURN(Node node, store_node(g, x, name, out));
    std::vector<TensorInfo> infos;
    for (ValueId v : node.inputs) infos.push_back({g.value(v).shape, g.value(v).dtype});
    auto inferred = node.op->infer(infos, node.op_attrs());
    if (!inferred.ok()) return inferred.status().with_context("image output '" + name + "'");
    Value& source = g.values[static_cast<std::size_t>(*at)];
    source.name += out.mode == ImageOutput::Mode::kPalette ? "/scores" : "/values";
    source.is_output = false;
    Value texels;
    texels.name = name;
    texels.shape = inferred->shape;
    texels.dtype = inferred->dtype;
    texels.is_output = true;
    g.values.push_back(std::move(texels));
    node.output = static_cast<ValueId>(g.values.size() - 1);
    *at = node.output;
    append_node(g, std::move(node));
  }
  return g;
}

}  // namespace vkfuse
