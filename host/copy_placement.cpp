#include "host/copy_placement.h"

namespace vkfuse {

std::optional<std::vector<std::int64_t>> invert_view(const StridedLayout& layout, std::int64_t base_numel) {
  std::int64_t numel = 1;
  for (std::int64_t d : layout.shape) numel *= d;
  if (numel != base_numel || numel <= 0 || numel > kMaxInvertedElements || layout.strides.size() != layout.shape.size())
    return std::nullopt;
  std::vector<std::int64_t> copy_index(static_cast<std::size_t>(numel), -1);
  std::vector<std::int64_t> idx(layout.shape.size(), 0);
  std::int64_t at = layout.offset;  // the base element the view's element j reads
  for (std::int64_t j = 0; j < numel; ++j) {
    if (at < 0 || at >= numel || copy_index[static_cast<std::size_t>(at)] >= 0) return std::nullopt;
    copy_index[static_cast<std::size_t>(at)] = j;
    for (std::size_t d = layout.shape.size(); d-- > 0;) {  // the next index, row-major
      at += layout.strides[d];
      if (++idx[d] < layout.shape[d]) break;
      at -= layout.strides[d] * layout.shape[d];
      idx[d] = 0;
    }
  }
  return copy_index;  // numel distinct indices in [0, numel): every element once
}

std::optional<ElementPlacement> place_through(const std::vector<std::int64_t>& copy_index, const ElementPlacement& at,
                                              std::int64_t numel) {
  const auto total = static_cast<std::int64_t>(copy_index.size());
  auto dest = [&](std::int64_t i) -> std::int64_t {
    const std::int64_t q = at.at(i);
    return q >= 0 && q < total ? copy_index[static_cast<std::size_t>(q)] : -1;
  };
  if (numel <= 0 || dest(0) < 0) return std::nullopt;
  ElementPlacement fit{.offset = dest(0)};
  std::int64_t run = 1;  // the first run of consecutive destinations
  while (run < numel && dest(run) == fit.offset + run) ++run;
  if (run < numel) {
    fit.slice = run;
    fit.stride = dest(run) - fit.offset;
    // Each level: as many of the blocks below, `step` apart, as follow the first.
    std::int64_t inner = run, step = fit.stride;
    for (;;) {
      if (step <= 0 || numel % inner != 0 || fit.blocks.size() > kMaxPlacementBlocks) return std::nullopt;
      std::int64_t count = 1;
      while (count * inner < numel && dest(count * inner) == fit.offset + count * step) ++count;
      if (count * inner == numel) break;
      fit.blocks.push_back({count * inner, dest(count * inner) - fit.offset});
      inner = count * inner;
      step = fit.blocks.back().second;
    }
  }
  for (std::int64_t i = 0; i < numel; ++i)
    if (dest(i) != fit.at(i)) return std::nullopt;
  return fit;
}

}  // namespace vkfuse
