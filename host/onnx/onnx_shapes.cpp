#include "host/onnx/onnx_shapes.h"

#include "host/slice_range.h"

#include <algorithm>
#include <limits>
#include <string>

#include "host/checked_math.h"
#include "host/graph.h"

namespace vkfuse::onnx_import {
namespace {

Status invalid(const std::string& message) { return make_error(ErrorCode::kInvalidArgument, message); }

std::string list_to_string(const std::vector<std::int64_t>& values) { return shape_to_string(values); }

}  // namespace

Result<std::int64_t> normalize_axis(std::int64_t axis, std::int64_t rank, const char* what) {
  const std::int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= rank)
    return invalid(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return normalized;
}

Result<std::vector<std::int64_t>> normalize_axes(const std::vector<std::int64_t>& axes, std::int64_t rank, const char* what) {
  std::vector<std::int64_t> out;
  for (std::int64_t axis : axes) {
    VKFUSE_ASSIGN_OR_RETURN(const std::int64_t a, normalize_axis(axis, rank, what));
    if (std::find(out.begin(), out.end(), a) != out.end())
      return invalid(std::string(what) + " " + list_to_string(axes) + " name axis " + std::to_string(a) + " twice");
    out.push_back(a);
  }
  return out;
}

std::int64_t dims_product(const Shape& shape, std::size_t begin, std::size_t end) {
  std::int64_t product = 1;
  for (std::size_t d = begin; d < end && d < shape.size(); ++d) product *= shape[d];  // the whole shape's numel bounds it
  return product;
}

Result<Shape> reshape_target(const Shape& input, const std::vector<std::int64_t>& spec, bool allowzero) {
  Shape out(spec.size());
  std::int64_t known = 1;
  int inferred = -1;
  for (std::size_t d = 0; d < spec.size(); ++d) {
    std::int64_t dim = spec[d];
    if (dim == 0 && !allowzero) {
      if (d >= input.size())
        return invalid("Reshape shape " + list_to_string(spec) + " copies dim " + std::to_string(d) + " of the rank-" +
                       std::to_string(input.size()) + " input " + shape_to_string(input));
      dim = input[d];
    }
    if (dim == -1) {
      if (inferred >= 0) return invalid("Reshape shape " + list_to_string(spec) + " has more than one -1");
      inferred = static_cast<int>(d);
      continue;
    }
    if (dim < 0) return invalid("Reshape shape " + list_to_string(spec) + " has a negative dimension");
    out[d] = dim;
    VKFUSE_ASSIGN_OR_RETURN(known, mul_or_error(known, dim, "Reshape shape " + list_to_string(spec) + ": the element count"));
  }
  const std::int64_t numel = shape_numel(input);
  if (inferred >= 0) {
    if (known == 0 || numel % known != 0)
      return invalid("Reshape cannot infer the -1 in " + list_to_string(spec) + " for the input " + shape_to_string(input));
    out[static_cast<std::size_t>(inferred)] = numel / known;
  } else if (known != numel) {
    return invalid("Reshape of " + shape_to_string(input) + " (" + std::to_string(numel) + " elements) to " +
                   shape_to_string(out) + " (" + std::to_string(known) + " elements)");
  }
  return out;
}

Result<Shape> flatten_shape(const Shape& input, std::int64_t axis) {
  const auto rank = static_cast<std::int64_t>(input.size());
  const std::int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a > rank) return invalid("Flatten axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  const auto split = static_cast<std::size_t>(a);
  return Shape{dims_product(input, 0, split), dims_product(input, split, input.size())};
}

Result<Shape> squeeze_shape(const Shape& input, const std::vector<std::int64_t>& axes) {
  const auto rank = static_cast<std::int64_t>(input.size());
  VKFUSE_ASSIGN_OR_RETURN(const std::vector<std::int64_t> normalized, normalize_axes(axes, rank, "Squeeze axis"));
  Shape out;
  for (std::int64_t d = 0; d < rank; ++d) {
    const bool listed = std::find(normalized.begin(), normalized.end(), d) != normalized.end();
    const std::int64_t dim = input[static_cast<std::size_t>(d)];
    if (listed && dim != 1)
      return invalid("Squeeze axis " + std::to_string(d) + " of " + shape_to_string(input) + " has size " + std::to_string(dim));
    if (listed || (axes.empty() && dim == 1)) continue;
    out.push_back(dim);
  }
  return out;
}

Result<Shape> unsqueeze_shape(const Shape& input, const std::vector<std::int64_t>& axes) {
  const auto rank = static_cast<std::int64_t>(input.size() + axes.size());
  VKFUSE_ASSIGN_OR_RETURN(const std::vector<std::int64_t> normalized, normalize_axes(axes, rank, "Unsqueeze axis"));
  Shape out;
  std::size_t next = 0;
  for (std::int64_t d = 0; d < rank; ++d) {
    if (std::find(normalized.begin(), normalized.end(), d) != normalized.end()) out.push_back(1);
    else out.push_back(input[next++]);
  }
  return out;
}

Result<Shape> broadcast_all(const std::vector<Shape>& shapes) {
  Shape out;
  for (const Shape& s : shapes) {
    auto b = broadcast_shapes(out, s);
    if (!b) return invalid("shapes " + shape_to_string(out) + " and " + shape_to_string(s) + " do not broadcast");
    out = *b;
  }
  return out;
}

Result<std::vector<SliceAxis>> resolve_slice(const Shape& input, const std::vector<std::int64_t>& starts,
                                             const std::vector<std::int64_t>& ends, const std::vector<std::int64_t>& axes_in,
                                             const std::vector<std::int64_t>& steps) {
  const auto rank = static_cast<std::int64_t>(input.size());
  if (starts.size() != ends.size())
    return invalid("Slice starts " + list_to_string(starts) + " and ends " + list_to_string(ends) + " differ in length");
  std::vector<std::int64_t> axes = axes_in;
  if (axes.empty())
    for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
  if (axes.size() != starts.size() || (!steps.empty() && steps.size() != starts.size()))
    return invalid("Slice starts, ends, axes and steps differ in length");
  VKFUSE_ASSIGN_OR_RETURN(const std::vector<std::int64_t> normalized, normalize_axes(axes, rank, "Slice axis"));
  std::vector<SliceAxis> out;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const std::int64_t dim = input[static_cast<std::size_t>(normalized[i])];
    const std::int64_t step = std::clamp<std::int64_t>(steps.empty() ? 1 : steps[i], -(std::int64_t{1} << 62), std::int64_t{1} << 62);
    if (step == 0) return invalid("Slice step is 0");
    if (dim == 0) {
      out.push_back({normalized[i], 0, step, 0});
      continue;
    }
    const SliceRange range = resolve_slice_range(dim, starts[i], ends[i], step);
    out.push_back({normalized[i], range.start, step, range.count});
  }
  return out;
}

std::vector<std::int64_t> row_major_strides(const Shape& shape) {
  std::vector<std::int64_t> strides(shape.size());
  std::int64_t stride = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

}  // namespace vkfuse::onnx_import
