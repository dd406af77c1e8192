// How an input of shape S is indexed from the linear index of a domain D it broadcasts to (numpy
// rules, right-aligned). Dimensions are collapsed where they can be, so the generated index math is
// as short as the broadcast allows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <vkfuse/types.hpp>

namespace vkfuse {

struct BroadcastDim {
  std::int64_t extent;  // extent of this (collapsed) domain dimension
  std::int64_t stride;  // input elements per step along it; 0 when broadcast
};

// Innermost first. Empty when the input is a single element. `strides` are the input's element
// strides per dimension; empty means contiguous.
std::vector<BroadcastDim> broadcast_map(const Shape& domain, const Shape& input,
                                        const std::vector<std::int64_t>& strides = {});

// GLSL expression (uint arithmetic) for the input's element offset given `linear`, a GLSL expression
// of the domain's linear index, plus `offset`. Negative strides are allowed as long as every element
// lands at a non-negative offset.
std::string broadcast_index_glsl(const std::vector<BroadcastDim>& map, const std::string& linear,
                                 std::int64_t offset = 0);

}  // namespace vkfuse
