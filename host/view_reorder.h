// Post-fusion through a reordering view: a kernel group's post chain read through a Transpose (or a
// Reshape) of a value the group computes, evaluated in the order the anchor stores its elements.
//
// A view that takes every element of the value it views exactly once (a Transpose, a Reshape, a chain
// of them; no slice, no broadcast) only renames the value's elements. The anchor stores element i of its
// result (its own order); a chain after the view can run right there, at element i, if everything the
// chain reads and writes is addressed through the same renaming. Both orders split into one set of axes,
// the value's elements in its own order (ReorderedSpace): a tensor read per element of the value, or of
// the view, is a strided tensor over those axes, and so is where a result of the view's shape lies.
//   Y[3136, 96] = MatMul ... -> Transpose -> [1, 96, 56, 56] -> Mul(scale[96, 1, 1]) -> Add(r) -> z
//   => the MatMul's stores run Mul and Add at element (m, n) of Y, reading scale[n] and r[n * 3136 + m],
//      and store z[n * 3136 + m] (convnext_tiny's layer scale and residual after each block's MLP)
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "codegen/kernel_spec.h"
#include "host/op_def.h"

namespace vkfuse {

// The axes a value of shape `value` and a reordering view of it both split into, outermost first; the
// value's elements in its own order (contiguous over `domain`).
struct ReorderedSpace {
  Shape domain;
  std::vector<std::int64_t> step;  // per axis of `domain`: the value's elements per step along it
};

// The space of `view` over a value of shape `value`, or nullopt where the view is no reordering of all
// of it (an offset, a slice, a broadcast) or the two orders share no split into axes (a [2, 3] value
// read as [3, 2] through a Reshape).
std::optional<ReorderedSpace> reordered_space(const Shape& value, const StridedLayout& view);

// The strides over `space.domain` of a tensor read at element `at_axis` per step along each axis of
// `layout` (the view, or the value's own contiguous layout; 0 where the tensor broadcasts). Axes of
// extent 1 in `layout` are never stepped along.
std::vector<std::int64_t> strides_over(const ReorderedSpace& space, const StridedLayout& layout,
                                       const std::vector<std::int64_t>& at_axis);

// A tensor of `shape` read (numpy broadcasting, right-aligned) at `strides` (empty: contiguous) per
// element of a domain of `domain` axes: its strides per domain axis, 0 where it broadcasts.
std::vector<std::int64_t> broadcast_strides(const Shape& shape, const std::vector<std::int64_t>& strides,
                                            const Shape& domain);

// Where element i of `extents` (contiguous) lies when its axes step `strides` elements apart: the
// ElementPlacement of runs and blocks (axes of extent 1 are skipped).
ElementPlacement placement_of(const Shape& extents, const std::vector<std::int64_t>& strides);

}  // namespace vkfuse
