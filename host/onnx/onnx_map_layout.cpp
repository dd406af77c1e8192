// Layout ONNX ops. Shapes are static, so Flatten, Squeeze and Unsqueeze all become one Reshape to the
// resolved shape; multi-axis Slice becomes a chain of single-axis Slices and Split one Slice per
// output (all views: no dispatch). Constant operands (shape, axes, starts, repeats) must be known while
// loading; the folder has already evaluated the shape chains that compute them.
#include <algorithm>
#include <numeric>

#include "host/onnx/onnx_node_map.h"
#include "host/onnx/onnx_shapes.h"
#include "host/op_registry.h"

namespace vkfuse::onnx_import {
namespace {

// A result of `what` that failed shape arithmetic is the model's error, named after the node.
template <class T>
Result<T> named(const NodeMapping& m, Result<T> result) {
  if (!result.ok()) return m.invalid(result.status().message());
  return result;
}

// Squeeze/Unsqueeze axes: an attribute before opset 13, an (optional for Squeeze) input from 13.
Result<std::vector<std::int64_t>> squeeze_axes(NodeMapping& m) {
  if (m.opset() < 13) return m.attrs().integers("axes");
  if (!m.has_input(1)) return std::vector<std::int64_t>{};
  return m.constant_ints(1, "axes");
}

// Slice attribute values travel as floats: keep them exact.
Status check_exact(const NodeMapping& m, std::int64_t value) {
  if (value > (1 << 24) || value < -(1 << 24)) return m.unsupported("an index past 2^24 along one axis");
  return {};
}

}  // namespace

Status map_reshape(NodeMapping& m) {
  VKFUSE_ASSIGN_OR_RETURN(Tensor x, m.tensor(0));
  const Shape in = m.shape_of(x);
  Shape out;
  const std::string& type = m.op_type();
  if (type == "Reshape") {
    VKFUSE_TRY(m.attrs().only({"allowzero"}));
    VKFUSE_ASSIGN_OR_RETURN(const auto spec, m.constant_ints(1, "shape"));
    VKFUSE_ASSIGN_OR_RETURN(const std::int64_t allowzero, m.attrs().integer("allowzero", 0));
    VKFUSE_ASSIGN_OR_RETURN(out, named(m, reshape_target(in, spec, allowzero != 0)));
  } else if (type == "Flatten") {
    VKFUSE_TRY(m.attrs().only({"axis"}));
    VKFUSE_ASSIGN_OR_RETURN(const std::int64_t axis, m.attrs().integer("axis", 1));
    VKFUSE_ASSIGN_OR_RETURN(out, named(m, flatten_shape(in, axis)));
  } else {
    VKFUSE_TRY(m.attrs().only({"axes"}));
    VKFUSE_ASSIGN_OR_RETURN(const auto axes, squeeze_axes(m));
    if (type == "Unsqueeze" && axes.empty()) return m.invalid("Unsqueeze needs axes");
    VKFUSE_ASSIGN_OR_RETURN(out, named(m, type == "Squeeze" ? squeeze_shape(in, axes) : unsqueeze_shape(in, axes)));
  }
  if (out == in) {
    m.forward_input(0, 0);
    return {};
  }
  m.set_output(0, m.op("Reshape", {x}, {Attr{"shape", out}}));
  return {};
}

Status map_transpose(NodeMapping& m) {
  VKFUSE_TRY(m.attrs().only({"perm"}));
  VKFUSE_ASSIGN_OR_RETURN(Tensor x, m.tensor(0));
  const std::size_t rank = m.shape_of(x).size();
  std::vector<std::int64_t> perm(rank);
  std::iota(perm.rbegin(), perm.rend(), 0);
  VKFUSE_ASSIGN_OR_RETURN(perm, m.attrs().integers("perm", perm));
  std::vector<std::int64_t> identity(rank);
  std::iota(identity.begin(), identity.end(), 0);
  if (perm == identity) {
    m.forward_input(0, 0);
    return {};
  }
  m.set_output(0, m.op("Transpose", {x}, {Attr{"perm", perm}}));
  return {};
}

Status map_slice(NodeMapping& m) {
  VKFUSE_TRY(m.attrs().only({}));
  VKFUSE_ASSIGN_OR_RETURN(Tensor x, m.tensor(0));
  const Shape in = m.shape_of(x);
  VKFUSE_ASSIGN_OR_RETURN(const auto starts, m.constant_ints(1, "starts"));
  VKFUSE_ASSIGN_OR_RETURN(const auto ends, m.constant_ints(2, "ends"));
  std::vector<std::int64_t> axes, steps;
  if (m.has_input(3)) {
    VKFUSE_ASSIGN_OR_RETURN(axes, m.constant_ints(3, "axes"));
  }
  if (m.has_input(4)) {
    VKFUSE_ASSIGN_OR_RETURN(steps, m.constant_ints(4, "steps"));
  }
  VKFUSE_ASSIGN_OR_RETURN(const std::vector<SliceAxis> resolved, named(m, resolve_slice(in, starts, ends, axes, steps)));
  std::vector<SliceAxis> real;  // axes that change something
  for (const SliceAxis& s : resolved)
    if (!(s.start == 0 && s.step == 1 && s.count == in[static_cast<std::size_t>(s.axis)])) real.push_back(s);
  if (real.empty()) {
    m.forward_input(0, 0);
    return {};
  }
  Tensor t = x;
  for (std::size_t k = 0; k < real.size(); ++k) {
    const SliceAxis& s = real[k];
    const std::int64_t dim = in[static_cast<std::size_t>(s.axis)];
    // vkfuse's Slice reads a negative end as counting from the back: a backward slice that runs past
    // index 0 is written with end = -dim - 1 (which resolves to "before 0").
    std::int64_t end = s.start + s.count * s.step;
    if (s.step < 0 && end < 0) end = -dim - 1;
    if (s.step > 0) end = std::min(end, dim);
    VKFUSE_TRY(check_exact(m, s.start));
    VKFUSE_TRY(check_exact(m, end));
    VKFUSE_TRY(check_exact(m, s.step));
    const bool last = k + 1 == real.size();
    t = m.op("Slice", {t},
             {Attr{"axis", static_cast<float>(s.axis)}, Attr{"start", static_cast<float>(s.start)},
              Attr{"end", static_cast<float>(end)}, Attr{"step", static_cast<float>(s.step)}},
             last ? "" : "axis" + std::to_string(s.axis));
  }
  m.set_output(0, t);
  return {};
}

Status map_split(NodeMapping& m) {
  VKFUSE_TRY(m.attrs().only({"axis", "split", "num_outputs"}));
  VKFUSE_ASSIGN_OR_RETURN(Tensor x, m.tensor(0));
  const Shape in = m.shape_of(x);
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t axis_attr, m.attrs().integer("axis", 0));
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t axis, named(m, normalize_axis(axis_attr, static_cast<std::int64_t>(in.size()), "Split axis")));
  const std::int64_t dim = in[static_cast<std::size_t>(axis)];
  const auto outputs = static_cast<std::int64_t>(m.output_count());
  std::vector<std::int64_t> sizes;
  // The sizes: an attribute before opset 13, an optional input from 13; without them, equal parts
  // (opset 18: num_outputs, the last part may be smaller).
  if (m.opset() < 13) {
    VKFUSE_ASSIGN_OR_RETURN(sizes, m.attrs().integers("split"));
  } else if (m.has_input(1)) {
    VKFUSE_ASSIGN_OR_RETURN(sizes, m.constant_ints(1, "split"));
  }
  if (sizes.empty()) {
    VKFUSE_ASSIGN_OR_RETURN(const std::int64_t parts, m.attrs().integer("num_outputs", outputs));
    if (parts != outputs) return m.invalid("num_outputs is " + std::to_string(parts) + " but the node has " + std::to_string(outputs) + " outputs");
    if (m.opset() < 18 && dim % parts != 0)
      return m.invalid("axis " + std::to_string(axis) + " of " + shape_to_string(in) + " does not split into " + std::to_string(parts) + " equal parts");
    const std::int64_t chunk = (dim + parts - 1) / parts;
    for (std::int64_t at = 0; at < dim; at += chunk) sizes.push_back(std::min(chunk, dim - at));
  }
  for (std::int64_t size : sizes)
    if (size < 0 || size > dim) return m.invalid("split sizes " + shape_to_string(sizes) + " do not fit axis " + std::to_string(axis));
  const std::int64_t total = std::accumulate(sizes.begin(), sizes.end(), std::int64_t{0});
  if (static_cast<std::int64_t>(sizes.size()) != outputs || total != dim)
    return m.invalid("split sizes " + shape_to_string(sizes) + " do not cut axis " + std::to_string(axis) + " of " +
                     shape_to_string(in) + " into " + std::to_string(outputs) + " outputs");
  if (outputs == 1) {
    m.forward_input(0, 0);
    return {};
  }
  std::int64_t start = 0;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    if (m.output_used(k)) {  // unused parts get no node
      VKFUSE_TRY(check_exact(m, start + sizes[k]));
      m.set_output(k, m.op("Slice", {x},
                           {Attr{"axis", static_cast<float>(axis)}, Attr{"start", static_cast<float>(start)},
                            Attr{"end", static_cast<float>(start + sizes[k])}, Attr{"step", 1.0f}},
                           "part" + std::to_string(k)));
    }
    start += sizes[k];
  }
  return {};
}

Status map_concat(NodeMapping& m) {
  VKFUSE_TRY(m.attrs().only({"axis"}));
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t axis, m.attrs().integer("axis", 0));
  std::vector<Tensor> inputs;
  for (std::size_t i = 0; i < m.input_count(); ++i) {
    if (!m.has_input(i)) continue;
    VKFUSE_ASSIGN_OR_RETURN(Tensor t, m.tensor(i));
    inputs.push_back(t);
  }
  if (inputs.empty()) return m.invalid("has no inputs");
  if (inputs.size() == 1) {
    m.forward_input(0, 0);
    return {};
  }
  const OpDef* def = find_op("Concat");
  const auto most = static_cast<std::size_t>(std::max(def->arity, 2));
  const auto rank = static_cast<std::int64_t>(m.shape_of(inputs[0]).size());
  auto key_of = [&](const std::vector<Tensor>& parts) {
    std::vector<std::int64_t> key{axis < 0 ? axis + rank : axis};
    for (const Tensor& t : parts) key.push_back(t.id);
    return key;
  };
  // A Concat of `parts` along the axis: a new one, remembered unless one of the same parts came first.
  auto concat = [&](const std::vector<Tensor>& parts, std::string_view suffix) {
    const Tensor made = m.op("Concat", parts, {Attr{"axis", static_cast<float>(axis)}}, suffix);
    m.concats().try_emplace(key_of(parts), made);
    return made;
  };
  // More inputs than the op takes: concatenation along one axis is associative, so a leading chunk of
  // `most` may stand first in their place, while an earlier Concat of exactly those exists: a dense
  // block's layer 17 reads [layer 16's Concat, f16], the block's 25-input Concat [layer 16's Concat, f16,
  // ..., f24], so that each is the leading part of the next and all share one buffer
  // (host/concat_families.h). Where none exists, the inputs go in chunks of `most`, side by side, and
  // the chunks are concatenated (a tree: each value copied about twice where the Concats run).
  for (int round = 0; inputs.size() > most; ++round) {
    const std::vector<Tensor> head(inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(most));
    if (auto earlier = m.concats().find(key_of(head)); earlier != m.concats().end()) {
      inputs.erase(inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(most - 1));
      inputs[0] = earlier->second;
      continue;
    }
    std::vector<Tensor> next;
    for (std::size_t at = 0; at < inputs.size(); at += most) {
      const std::vector<Tensor> chunk(inputs.begin() + static_cast<std::ptrdiff_t>(at),
                                      inputs.begin() + static_cast<std::ptrdiff_t>(std::min(inputs.size(), at + most)));
      next.push_back(chunk.size() == 1 ? chunk[0] : concat(chunk, "chunk" + std::to_string(round) + "_" + std::to_string(at / most)));
    }
    inputs = std::move(next);
  }
  m.set_output(0, concat(inputs, {}));
  return {};
}

Status map_gather(NodeMapping& m) {
  VKFUSE_TRY(m.attrs().only({"axis"}));
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t axis, m.attrs().integer("axis", 0));
  VKFUSE_ASSIGN_OR_RETURN(Tensor data, m.tensor(0));
  // One constant index (a scalar, or a 1-element list) selects a slice: a view (Slice, then Squeeze for
  // a scalar), which its readers address in place, instead of a copy in a Gather dispatch of its own.
  //   qkv[3, 197, 1, 768] ─ Gather(0), Gather(1), Gather(2)   => three views at offsets 0, 1, 2 x 151296
  // (vit_b_16 as torch 2.x exports its attention: 36 dispatches at batch 1).
  if (const ConstTensor* index = m.constant(1); index && index->numel() == 1 && index->shape.size() <= 1 && !index->is_float()) {
    const Shape in = m.shape_of(data);
    VKFUSE_ASSIGN_OR_RETURN(const std::int64_t a, named(m, normalize_axis(axis, static_cast<std::int64_t>(in.size()), "Gather axis")));
    const std::int64_t dim = in[static_cast<std::size_t>(a)];
    std::int64_t at = index->ints[0];
    if (at < -dim || at >= dim)
      return m.invalid("Gather index " + std::to_string(at) + " is out of range for axis " + std::to_string(a) + " of " +
                       shape_to_string(in));
    if (at < 0) at += dim;
    VKFUSE_TRY(check_exact(m, at + 1));
    const bool scalar = index->shape.empty();
    const Tensor slice = m.op("Slice", {data},
                              {Attr{"axis", static_cast<float>(a)}, Attr{"start", static_cast<float>(at)},
                               Attr{"end", static_cast<float>(at + 1)}, Attr{"step", 1.0f}},
                              scalar ? "slice" : "");
    m.set_output(0, scalar ? m.op("Squeeze", {slice}, {Attr{"axes", std::vector<std::int64_t>{a}}}) : slice);
    return {};
  }
  VKFUSE_ASSIGN_OR_RETURN(Tensor indices, m.tensor(1));  // int64 constants become i32 constants here
  m.set_output(0, m.op("Gather", {data, indices}, {Attr{"axis", static_cast<float>(axis)}}));
  return {};
}

Status map_expand(NodeMapping& m) {
  VKFUSE_TRY(m.attrs().only({}));
  VKFUSE_ASSIGN_OR_RETURN(Tensor x, m.tensor(0));
  VKFUSE_ASSIGN_OR_RETURN(const auto shape, m.constant_ints(1, "shape"));
  VKFUSE_ASSIGN_OR_RETURN(const Shape out, named(m, broadcast_all({m.shape_of(x), shape})));
  if (out == m.shape_of(x)) {
    m.forward_input(0, 0);
    return {};
  }
  m.set_output(0, m.op("Expand", {x}, {Attr{"shape", out}}));
  return {};
}

Status map_tile(NodeMapping& m) {
  VKFUSE_TRY(m.attrs().only({}));
  VKFUSE_ASSIGN_OR_RETURN(Tensor x, m.tensor(0));
  VKFUSE_ASSIGN_OR_RETURN(const auto repeats, m.constant_ints(1, "repeats"));
  if (std::all_of(repeats.begin(), repeats.end(), [](std::int64_t r) { return r == 1; }) &&
      repeats.size() == m.shape_of(x).size()) {
    m.forward_input(0, 0);
    return {};
  }
  m.set_output(0, m.op("Tile", {x}, {Attr{"repeats", repeats}}));
  return {};
}

Status map_depth_to_space(NodeMapping& m) {
  VKFUSE_TRY(m.attrs().only({"blocksize", "mode"}));
  VKFUSE_ASSIGN_OR_RETURN(const std::int64_t blocksize, m.attrs().integer("blocksize", 0));
  VKFUSE_ASSIGN_OR_RETURN(const std::string mode, m.attrs().text("mode", "DCR"));
  if (mode != "DCR" && mode != "CRD") return m.attrs().unsupported("mode", "expected 'DCR' or 'CRD'");
  VKFUSE_ASSIGN_OR_RETURN(Tensor x, m.tensor(0));
  m.set_output(0, m.op("DepthToSpace", {x},
                       {Attr{"blocksize", static_cast<float>(blocksize)}, Attr{"mode", mode == "CRD" ? 1.0f : 0.0f}}));
  return {};
}

}  // namespace vkfuse::onnx_import
