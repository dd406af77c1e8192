// Synchronization validation (VKFUSE_VALIDATION=sync, on for every GPU test in CI) catches a missing
// barrier: with the scheduler's barriers dropped on purpose (VKFUSE_DEBUG_DROP_BARRIERS=1) a run of two
// dependent dispatches is reported, and with them in place it is not.
#include <doctest/doctest.h>

#include <string>

#include "host/context_impl.h"
#include "support/test_env.h"

namespace vkfuse::testing {
namespace {

// The synchronization errors of one unfused run of y = Neg(Relu(x)): the second dispatch reads what the
// first wrote.
std::uint32_t sync_errors_of_a_run(bool drop_barriers) {
  const ScopedEnv sync("VKFUSE_VALIDATION", "sync");
  const ScopedEnv drop("VKFUSE_DEBUG_DROP_BARRIERS", drop_barriers ? "1" : "0");
  ContextOptions options;
  options.cache_dir = "";
  auto context = Context::create(options);
  REQUIRE_MESSAGE(context.ok(), context.status().to_string());
  GraphBuilder b;
  b.output(b.op("Neg", {b.op("Relu", {b.input("x", {4096})})}), "y");
  auto graph = b.build();
  REQUIRE(graph.ok());
  auto session = Session::create(*context, *graph, {false, false});
  REQUIRE_MESSAGE(session.ok(), session.status().to_string());
  REQUIRE(session->dispatch_count() == 2);
  auto outputs = session->run({{"x", HostTensor::from_floats({4096}, std::vector<float>(4096, 1.0f))}});
  REQUIRE_MESSAGE(outputs.ok(), outputs.status().to_string());
  const std::uint32_t errors = context->validation_errors();
  if (errors > 0) {
    const std::string last = context->impl()->owned->instance().last_validation_error();
    CHECK_MESSAGE(last.find("SYNC-HAZARD") != std::string::npos, last);
  }
  return errors;
}

}  // namespace

TEST_CASE("sync validation: a dropped barrier between dependent dispatches is caught, the real one is clean") {
  CHECK(sync_errors_of_a_run(true) > 0);
  CHECK(sync_errors_of_a_run(false) == 0);
}

}  // namespace vkfuse::testing
