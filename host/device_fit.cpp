#include "host/device_fit.h"

#include "backend/units.h"

namespace vkfuse {

Status check_graph_fits(const GraphIR& graph, const DeviceSummary& device) {
  std::uint64_t total = 0;
  for (const auto* list : {&graph.inputs, &graph.outputs}) {
    const char* kind = list == &graph.inputs ? "input" : "output";
    for (ValueId v : *list) {
      const Value& value = graph.value(v);
      const std::uint64_t bytes = value.bytes();
      total += bytes;
      if (device.max_allocation_bytes != 0 && bytes > device.max_allocation_bytes)
        return make_error(ErrorCode::kUnsupported,
                          std::string(kind) + " '" + value.name + "' " + dtype_name(value.dtype) +
                              shape_to_string(value.shape) + " takes " + describe_bytes(bytes) + "; " + device.name +
                              " allows at most " + describe_bytes(device.max_allocation_bytes) +
                              " in one allocation (maxMemoryAllocationSize)");
    }
  }
  if (device.device_local_bytes != 0 && total > device.device_local_bytes)
    return make_error(ErrorCode::kUnsupported, "the graph's inputs and outputs take " + describe_bytes(total) +
                                                   " together; " + device.name + " has " +
                                                   describe_bytes(device.device_local_bytes) + " of device memory");
  return {};
}

}  // namespace vkfuse
