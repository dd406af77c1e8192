#include "host/reference_eval.h"

#include <algorithm>
#include <cmath>

#include "host/graph.h"
#include "host/group_kernel.h"
#include "host/shape_inference.h"

namespace vkfuse {
namespace {

// The element of a tensor of shape `from` that broadcasts to index `linear` of shape `to`.
std::int64_t broadcast_source(const Shape& from, const Shape& to, std::int64_t linear) {
  std::int64_t offset = 0, stride = 1;
  const std::size_t lead = to.size() - from.size();
  for (std::size_t d = to.size(); d-- > lead;) {
    const std::int64_t coord = linear % to[d];
    linear /= to[d];
    const std::int64_t extent = from[d - lead];
    if (extent != 1) offset += coord * stride;
    stride *= extent;
  }
  return offset;
}

std::vector<double> to_doubles(const HostTensor& t) {
  const std::vector<float> f = t.to_floats();
  return {f.begin(), f.end()};
}

// The value as stored in its dtype (f16 rounds, i32 truncates, u8 truncates and saturates, bool is 0/1).
void round_to_dtype(std::vector<double>& data, DType dtype) {
  if (dtype == DType::kF32 || dtype == DType::kF16) {
    std::vector<float> f(data.begin(), data.end());
    const HostTensor t = HostTensor::from_floats({static_cast<std::int64_t>(f.size())}, f, dtype);
    const std::vector<float> back = t.to_floats();
    data.assign(back.begin(), back.end());
  } else if (dtype == DType::kI32) {
    for (double& x : data) x = std::trunc(x);
  } else if (dtype == DType::kU8) {
    for (double& x : data) x = std::isnan(x) ? 0.0 : std::clamp(std::trunc(x), 0.0, 255.0);
  } else {
    for (double& x : data) x = x != 0.0 ? 1.0 : 0.0;
  }
}

}  // namespace

Result<std::map<std::string, HostTensor>> evaluate_reference(const Graph& graph,
                                                             const std::map<std::string, HostTensor>& inputs) {
  const GraphIR& ir = graph_ir(graph);
  std::vector<std::vector<double>> data(ir.values.size());
  for (ValueId v : ir.inputs) {
    auto it = inputs.find(ir.value(v).name);
    if (it == inputs.end())
      return make_error(ErrorCode::kInvalidArgument, "reference: input '" + ir.value(v).name + "' is missing");
    data[static_cast<std::size_t>(v)] = to_doubles(it->second);
  }
  for (std::size_t v = 0; v < ir.values.size(); ++v)
    if (ir.values[v].constant) data[v] = to_doubles(*ir.values[v].constant);

  for (const Node& node : ir.nodes) {
    const Value& out = ir.value(node.output);
    const std::int64_t numel = shape_numel(out.shape);
    std::vector<double> result(static_cast<std::size_t>(numel));
    switch (node.op->kind) {
      case OpKind::kElementwise: {
        std::vector<double> args(node.inputs.size());
        for (std::int64_t i = 0; i < numel; ++i) {
          for (std::size_t k = 0; k < node.inputs.size(); ++k) {
            const Value& in = ir.value(node.inputs[k]);
            args[k] = data[static_cast<std::size_t>(node.inputs[k])]
                          [static_cast<std::size_t>(broadcast_source(in.shape, out.shape, i))];
          }
          result[static_cast<std::size_t>(i)] = node.op->reference(args, node.attrs);
        }
        break;
      }
      case OpKind::kReduce: {
        const Value& in = ir.value(node.inputs[0]);
        const std::vector<double>& x = data[static_cast<std::size_t>(node.inputs[0])];
        const std::int64_t inner = shape_numel(in.shape) / numel;
        for (std::int64_t row = 0; row < numel; ++row) {
          double acc = x[static_cast<std::size_t>(row * inner)];
          for (std::int64_t k = 1; k < inner; ++k) {
            const double pair[2] = {acc, x[static_cast<std::size_t>(row * inner + k)]};
            acc = node.op->reference(std::span<const double>(pair, 2), node.attrs);
          }
          if (node.op->combine == ReduceCombine::kMean) acc /= static_cast<double>(inner);
          result[static_cast<std::size_t>(row)] = acc;
        }
        break;
      }
      case OpKind::kKernel: {
        std::vector<RefTensor> ins;
        for (ValueId v : node.inputs) ins.push_back({ir.value(v).shape, data[static_cast<std::size_t>(v)]});
        RefTensor out_tensor{out.shape, std::vector<double>(static_cast<std::size_t>(numel))};
        if (Status s = node.op->reference_kernel(ins, node.op_attrs(), out_tensor); !s.ok())
          return s.with_context("reference: node '" + node.name + "'");
        result = std::move(out_tensor.data);
        break;
      }
      case OpKind::kComposite:  // GraphBuilder expands composites; none reach a graph
        return make_error(ErrorCode::kInternal, "reference: node '" + node.name + "' is an unexpanded composite");
      case OpKind::kView: {
        VKFUSE_ASSIGN_OR_RETURN(ResolvedView view, resolve_view(ir, node.output));
        const std::vector<double>& base = data[static_cast<std::size_t>(view.base)];
        for (std::int64_t i = 0; i < numel; ++i) {
          std::int64_t rest = i, offset = view.layout.offset;
          for (std::size_t d = view.layout.shape.size(); d-- > 0;) {
            offset += (rest % view.layout.shape[d]) * view.layout.strides[d];
            rest /= view.layout.shape[d];
          }
          result[static_cast<std::size_t>(i)] = base[static_cast<std::size_t>(offset)];
        }
        break;
      }
    }
    round_to_dtype(result, out.dtype);
    data[static_cast<std::size_t>(node.output)] = std::move(result);
  }

  std::map<std::string, HostTensor> outputs;
  for (ValueId v : ir.outputs) {
    const Value& value = ir.value(v);
    const std::vector<double>& d = data[static_cast<std::size_t>(v)];
    outputs.emplace(value.name, HostTensor::from_floats(value.shape, std::vector<float>(d.begin(), d.end()), value.dtype));
  }
  return outputs;
}

}  // namespace vkfuse
