#include "codegen/broadcast_map.h"

#include <algorithm>
#include <cassert>

namespace vkfuse {

std::vector<BroadcastDim> broadcast_map(const Shape& domain, const Shape& input,
                                        const std::vector<std::int64_t>& strides) {
  assert(input.size() <= domain.size());
  const std::size_t lead = domain.size() - input.size();
  // Innermost first; the input's contiguous strides follow its own extents.
  std::vector<BroadcastDim> dims;
  std::int64_t input_stride = 1;
  for (std::size_t d = domain.size(); d-- > 0;) {
    const std::int64_t extent = domain[d];
    const std::int64_t in_extent = d >= lead ? input[d - lead] : 1;
    if (extent == 1) continue;  // contributes nothing to the index
    const std::int64_t own_stride = d < lead || strides.empty() ? input_stride : strides[d - lead];
    const std::int64_t stride = in_extent == 1 ? 0 : own_stride;
    input_stride *= in_extent;
    if (!dims.empty()) {
      BroadcastDim& inner = dims.back();
      const bool both_broadcast = inner.stride == 0 && stride == 0;
      const bool contiguous = inner.stride != 0 && stride == inner.stride * inner.extent;
      if (both_broadcast || contiguous) {
        inner.extent *= extent;
        continue;
      }
    }
    dims.push_back({extent, stride});
  }
  // Every dimension broadcast: the input is one element.
  if (std::all_of(dims.begin(), dims.end(), [](const BroadcastDim& d) { return d.stride == 0; })) dims.clear();
  return dims;
}

std::string broadcast_index_glsl(const std::vector<BroadcastDim>& map, const std::string& linear,
                                 std::int64_t offset) {
  // Signed arithmetic when a stride is negative; the final offset is non-negative by construction.
  bool negative = false;
  for (const BroadcastDim& dim : map) negative |= dim.stride < 0;
  std::string expr;
  std::int64_t inner_product = 1;
  for (std::size_t k = 0; k < map.size(); ++k) {
    const BroadcastDim& dim = map[k];
    const bool outermost = k + 1 == map.size();
    if (dim.stride != 0) {
      std::string coord = linear;
      if (inner_product != 1) coord = "(" + coord + " / " + std::to_string(inner_product) + "u)";
      if (!outermost) coord = "(" + coord + " % " + std::to_string(dim.extent) + "u)";
      if (negative) coord = "int(" + coord + ")";
      if (dim.stride != 1) coord += " * " + std::to_string(dim.stride) + (negative ? "" : "u");
      expr += (expr.empty() ? "" : " + ") + coord;
    }
    inner_product *= dim.extent;
  }
  if (offset != 0) expr += (expr.empty() ? "" : " + ") + std::to_string(offset) + (negative ? "" : "u");
  if (expr.empty()) return "0u";
  return negative ? "uint(" + expr + ")" : expr;
}

}  // namespace vkfuse
