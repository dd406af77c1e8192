// CPU reference: evaluates a graph node by node from the op table's scalar references, in double.
// Slow and simple on purpose: it is what the GPU results are checked against.
#pragma once

#include <map>
#include <string>

#include <vkfuse/vkfuse.hpp>

namespace vkfuse {

// Every graph output by name, converted to its dtype (f16 rounded, bool 0/1).
Result<std::map<std::string, HostTensor>> evaluate_reference(const Graph& graph,
                                                             const std::map<std::string, HostTensor>& inputs);

}  // namespace vkfuse
