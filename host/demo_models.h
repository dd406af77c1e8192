// The embedded demo models: built with the public GraphBuilder, used by `vkfuse demo`, the tests and
// the benchmarks.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include <vkfuse/vkfuse.hpp>

namespace vkfuse {

// Generalized-IoU loss over boxes (x1, y1, x2, y2): inputs "pred" and "target" [batch, boxes, 4];
// a box counts where the target is valid (x2 > x1 and y2 > y1); output "loss" [1] is the masked mean
// of 1 - GIoU. About 36 elementwise ops, two reductions and the division after them.
Result<Graph> build_giou_loss_graph(std::int64_t batch, std::int64_t boxes);
// Random boxes for it (fixed seed); about one target in eight is invalid.
std::map<std::string, HostTensor> make_giou_inputs(std::int64_t batch, std::int64_t boxes, std::uint32_t seed);

// A chain of `ops` cheap elementwise ops over input "x" [numel] -> output "y" (Mul, Add, Max, Sub,
// Min with constants, Neg, Abs, Add, cycled). `ops` = 1 with identity = true gives a plain copy.
Result<Graph> build_elementwise_chain(std::int64_t numel, int ops, bool identity = false);
std::map<std::string, HostTensor> make_chain_inputs(std::int64_t numel, std::uint32_t seed);

}  // namespace vkfuse
