// Whether a graph's inputs and outputs can live on a device, asked before anything is compiled,
// allocated or generated for it (`vkfuse bench` and `run` ask before making or reading inputs). Each
// of them has a buffer of its own, so each must fit one allocation (maxMemoryAllocationSize), and
// together they must fit the device's memory. Pure: no device is touched.
#pragma once

#include <vkfuse/vkfuse.hpp>

#include "host/graph.h"

namespace vkfuse {

// kUnsupported naming the first tensor that cannot fit (name, dtype and shape, its bytes, the device
// and the limit), or the total when only all of them together cannot. A limit of 0 is unknown and
// not checked.
Status check_graph_fits(const GraphIR& graph, const DeviceSummary& device);

}  // namespace vkfuse
