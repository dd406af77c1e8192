// Moved-from Context, Session and Execution: every call returns a clear error or an empty value, and the
// object moved to works.
#include <doctest/doctest.h>

#include <string>
#include <utility>

#include <vkfuse/interop.hpp>
#include <vkfuse/vkfuse.hpp>

#include "support/gpu_context.h"

namespace vkfuse::testing {
namespace {

Graph add_one_graph() {
  GraphBuilder b;
  b.output(b.op("Add", {b.input("x", {5}), b.scalar(1.0f)}), "y");
  auto graph = b.build();
  REQUIRE(graph.ok());
  return *graph;
}

template <class R>
void check_moved_from(const R& result, const char* call) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.code() == ErrorCode::kInvalidArgument);
  CHECK(result.message().find(call) != std::string::npos);
  CHECK(result.message().find("moved from") != std::string::npos);
}

template <class T>
void check_moved_from(const Result<T>& result, const char* call) {
  check_moved_from(result.status(), call);
}

const std::map<std::string, HostTensor> kInputs = {{"x", HostTensor::from_floats({5}, {0, 1, 2, 3, 4})}};

}  // namespace

TEST_CASE("moved-from: a Context's calls say it was moved from; the one it moved to works") {
  ContextOptions options;
  options.cache_dir = "";
  auto created = Context::create(options);
  REQUIRE(created.ok());
  Context context = std::move(*created);
  Context moved_to = std::move(context);
  CHECK(context.device().name.empty());  // NOLINT(bugprone-use-after-move): what this test is about
  CHECK(context.cache_stats().compiles == 0);
  CHECK(context.validation_errors() == 0);
  CHECK_FALSE(context.borrowed());
  CHECK(context.device_memory_bytes() == 0);
  CHECK(vulkan_handles(context).device == VK_NULL_HANDLE);
  check_moved_from(Session::create(context, add_one_graph(), {}), "Session::create");
  auto session = Session::create(moved_to, add_one_graph(), {});
  REQUIRE_MESSAGE(session.ok(), session.status().to_string());
  CHECK(session->run(kInputs).ok());
}

TEST_CASE("moved-from: a Session's and an Execution's calls say they were moved from") {
  auto created = Session::create(gpu_context(), add_one_graph(), {});
  REQUIRE(created.ok());
  Session session = std::move(*created);
  Session moved_to = std::move(session);
  check_moved_from(session.run(kInputs), "Session::run");  // NOLINT(bugprone-use-after-move)
  check_moved_from(session.create_execution(), "Session::create_execution");
  check_moved_from(session.measure_gpu_ms(1), "Session::measure_gpu_ms");
  CHECK(session.groups().empty());
  CHECK(session.dispatch_count() == 0);
  CHECK(session.barrier_count() == 0);
  CHECK(session.last_gpu_ms() == 0.0);
  CHECK_FALSE(session.fusion_enabled());
  CHECK(session.arena_bytes() == 0);
  CHECK(session.weight_bytes() == 0);
  CHECK(session.create_stats().total_ms == 0.0);
  auto outputs = moved_to.run(kInputs);
  REQUIRE_MESSAGE(outputs.ok(), outputs.status().to_string());
  CHECK(outputs->at("y").to_floats() == std::vector<float>{1, 2, 3, 4, 5});

  auto made = moved_to.create_execution();
  REQUIRE(made.ok());
  Execution execution = std::move(*made);
  Execution live = std::move(execution);
  check_moved_from(execution.run(kInputs), "Execution::run");  // NOLINT(bugprone-use-after-move)
  check_moved_from(execution.upload("x", kInputs.at("x")), "Execution::upload");
  check_moved_from(execution.download("y"), "Execution::download");
  check_moved_from(execution.device_tensor("x"), "Execution::device_tensor");
  check_moved_from(execution.bind("x", {}), "Execution::bind");
  check_moved_from(execution.bind_image("x", {}), "Execution::bind_image");
  check_moved_from(execution.record(VK_NULL_HANDLE), "Execution::record");
  check_moved_from(execution.submit(), "Execution::submit");
  check_moved_from(execution.wait(), "Execution::wait");
  check_moved_from(execution.last_gpu_ms(), "Execution::last_gpu_ms");
  CHECK_FALSE(execution.in_flight());
  CHECK(execution.input_names().empty());
  CHECK(execution.output_names().empty());
  CHECK(execution.last_staging_bytes() == 0);
  CHECK(execution.memory().arena_bytes == 0);
  CHECK(execution.dispatch_count() == 0);
  auto ran = live.run(kInputs);
  REQUIRE_MESSAGE(ran.ok(), ran.status().to_string());
  CHECK(ran->at("y").to_floats() == std::vector<float>{1, 2, 3, 4, 5});
  CHECK(validation_errors() == 0);
}

}  // namespace vkfuse::testing
