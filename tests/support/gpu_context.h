// The Vulkan context GPU tests share: one per process, validation layer on, kernel cache in memory
// only (so tests never read a stale user cache). Every GPU test ends with
// CHECK(validation_errors() == 0).
#pragma once

#include <map>
#include <string>

#include <vkfuse/vkfuse.hpp>

namespace vkfuse::testing {

// Fails the calling test (REQUIRE) when no context can be created.
const Context& gpu_context();

// Runs `graph` fused or unfused and returns its outputs; REQUIREs success.
std::map<std::string, HostTensor> run_graph(const Graph& graph, bool fusion,
                                            const std::map<std::string, HostTensor>& inputs,
                                            std::size_t* dispatches = nullptr);

std::uint32_t validation_errors();

}  // namespace vkfuse::testing
