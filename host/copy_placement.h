// Copies stored through: where a value's elements land in the contiguous copy of a view of it.
//
// An Identity that copies a permuting view of X (a Transpose whose result a Reshape cannot take as a
// view: shufflenet's channel shuffle) writes every element of X once, somewhere in its output T. X's
// producers can store there directly, and the copy need not run (host/fusion_planner.cpp, copies in
// place), where each producer's destinations form one ElementPlacement (runs, or blocks of runs).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "codegen/kernel_spec.h"
#include "host/op_def.h"

namespace vkfuse {

// For a view `layout` of a stored tensor of `base_numel` elements: for each element of the base, its
// index in the view's contiguous copy. nullopt where the view does not take every element exactly once
// (a slice, a broadcast) or the base has more than kMaxInvertedElements elements (planning time).
std::optional<std::vector<std::int64_t>> invert_view(const StridedLayout& layout, std::int64_t base_numel);
inline constexpr std::int64_t kMaxInvertedElements = std::int64_t{1} << 24;
// Levels of blocks a placement may have: a 4-D transpose with its batch needs 3.
inline constexpr std::size_t kMaxPlacementBlocks = 3;

// Where the `numel` elements of a part that lies at `at` in the base land in the copy (`copy_index`, from
// invert_view), if they form one ElementPlacement.
std::optional<ElementPlacement> place_through(const std::vector<std::int64_t>& copy_index, const ElementPlacement& at,
                                              std::int64_t numel);

}  // namespace vkfuse
