#include "support/gpu_context.h"

#include <doctest/doctest.h>

#include <memory>

namespace vkfuse::testing {

const Context& gpu_context() {
  static std::unique_ptr<Context> context = [] {
    ContextOptions options;
    options.validation = true;
    options.cache_dir = "";  // memory only
    auto created = Context::create(options);
    if (!created.ok()) FAIL("no Vulkan context: " << created.status().to_string());
    return std::make_unique<Context>(std::move(created).value());
  }();
  return *context;
}

std::map<std::string, HostTensor> run_graph(const Graph& graph, bool fusion,
                                            const std::map<std::string, HostTensor>& inputs,
                                            std::size_t* dispatches) {
  SessionOptions options;
  options.fusion = fusion;
  auto session = Session::create(gpu_context(), graph, options);
  REQUIRE_MESSAGE(session.ok(), session.status().to_string());
  if (dispatches) *dispatches = session->dispatch_count();
  auto outputs = session->run(inputs);
  REQUIRE_MESSAGE(outputs.ok(), outputs.status().to_string());
  return std::move(outputs).value();
}

std::uint32_t validation_errors() { return gpu_context().validation_errors(); }

}  // namespace vkfuse::testing
