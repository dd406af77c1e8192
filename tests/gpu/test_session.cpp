// Sessions: the disk kernel cache, bad input to run(), and device selection errors.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "host/context_impl.h"
#include "host/demo_models.h"
#include "host/reference_eval.h"
#include "support/compare.h"
#include "support/gpu_context.h"
#include "support/random_inputs.h"

namespace vkfuse::testing {
namespace {

std::filesystem::path fresh_directory(const char* name) {
  const auto dir = std::filesystem::temp_directory_path() / (std::string(name) + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

Graph small_graph() {
  GraphBuilder b;
  const Tensor x = b.input("x", {7, 13});
  const Tensor y = b.input("y", {13});
  b.output(b.op("Relu", {b.op("Add", {x, y})}), "out");
  auto graph = b.build();
  REQUIRE(graph.ok());
  return *graph;
}

}  // namespace

TEST_CASE("a second compile of the same model hits the disk cache and compiles nothing") {
  const auto dir = fresh_directory("vkfuse-cache-test");
  auto graph = build_giou_loss_graph(2, 33);
  REQUIRE(graph.ok());
  ContextOptions options;
  options.validation = true;
  options.cache_dir = dir.string();
  std::uint32_t first_compiles = 0;
  {
    auto context = Context::create(options);
    REQUIRE_MESSAGE(context.ok(), context.status().to_string());
    for (bool fusion : {true, false}) {
      auto session = Session::create(*context, *graph, {fusion, true});
      REQUIRE_MESSAGE(session.ok(), session.status().to_string());
    }
    first_compiles = context->cache_stats().compiles;
    CHECK(first_compiles > 1);
    CHECK(context->cache_stats().disk_hits == 0);
    CHECK(context->validation_errors() == 0);
  }
  {
    auto context = Context::create(options);  // a new process would see the same: nothing in memory
    REQUIRE(context.ok());
    for (bool fusion : {true, false}) {
      auto session = Session::create(*context, *graph, {fusion, true});
      REQUIRE(session.ok());
      auto out = session->run(make_giou_inputs(2, 33, 1));
      REQUIRE(out.ok());
    }
    CHECK(context->cache_stats().compiles == 0);
    CHECK(context->cache_stats().disk_hits == first_compiles);
    CHECK(context->validation_errors() == 0);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("run() rejects missing, unknown, mis-shaped and mis-typed inputs with their names") {
  auto session = Session::create(gpu_context(), small_graph(), {});
  REQUIRE(session.ok());
  const HostTensor x = HostTensor::from_floats({7, 13}, std::vector<float>(91, 1.0f));
  const HostTensor y = HostTensor::from_floats({13}, std::vector<float>(13, -2.0f));

  auto missing = session->run({{"x", x}});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == ErrorCode::kInvalidArgument);
  CHECK(missing.status().message().find("'y' is missing") != std::string::npos);

  auto unknown = session->run({{"x", x}, {"y", y}, {"z", y}});
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().message().find("no input named 'z'") != std::string::npos);

  auto shape = session->run({{"x", x}, {"y", x}});
  REQUIRE_FALSE(shape.ok());
  CHECK(shape.status().message().find("f32[7,13]") != std::string::npos);
  CHECK(shape.status().message().find("f32[13]") != std::string::npos);

  auto dtype = session->run({{"x", x}, {"y", HostTensor::from_floats({13}, std::vector<float>(13, 0.0f), DType::kF16)}});
  REQUIRE_FALSE(dtype.ok());
  CHECK(dtype.status().message().find("f16[13]") != std::string::npos);

  auto good = session->run({{"x", x}, {"y", y}});  // the session still works after the errors
  REQUIRE(good.ok());
  for (float v : good->at("out").to_floats()) CHECK(v == 0.0f);  // relu(1 - 2)
  CHECK(validation_errors() == 0);
}

TEST_CASE("a device selector that matches nothing is an error that lists the devices") {
  ContextOptions options;
  options.device = "no-such-gpu-anywhere";
  auto context = Context::create(options);
  REQUIRE_FALSE(context.ok());
  CHECK(context.status().code() == ErrorCode::kNotFound);
  CHECK(context.status().message().find("no-such-gpu-anywhere") != std::string::npos);
}

TEST_CASE("runs are repeatable and the recorded command buffer is reused") {
  auto graph = build_elementwise_chain(4099, 9);
  REQUIRE(graph.ok());
  auto session = Session::create(gpu_context(), *graph, {});
  REQUIRE(session.ok());
  const auto first = session->run(make_chain_inputs(4099, 1));
  const auto second = session->run(make_chain_inputs(4099, 2));
  const auto third = session->run(make_chain_inputs(4099, 1));
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  REQUIRE(third.ok());
  CHECK(first->at("y").bytes == third->at("y").bytes);
  CHECK(first->at("y").bytes != second->at("y").bytes);
  CHECK(session->dispatch_count() == 1);
  CHECK(validation_errors() == 0);
}

TEST_CASE("a profiled session times every group, and measure_gpu_ms times whole replays") {
  // Unfused: one group per op, so there are several group times to read.
  auto graph = build_elementwise_chain(4099, 5);
  REQUIRE(graph.ok());
  auto session = Session::create(gpu_context(), *graph, SessionOptions{.fusion = false, .profile = true});
  REQUIRE(session.ok());
  REQUIRE(session->run(make_chain_inputs(4099, 1)).ok());
  REQUIRE(session->groups().size() == session->dispatch_count());
  CHECK(session->dispatch_count() > 1);
  double sum = 0.0;
  for (const GroupInfo& g : session->groups()) {
    CAPTURE(g.label);
    CHECK(g.gpu_ms > 0.0);
    sum += g.gpu_ms;
  }
  CHECK(session->last_gpu_ms() == doctest::Approx(sum));
  // Timestamps only around the replays: two iterations and one both give a positive, finite mean.
  for (int iterations : {1, 2}) {
    const auto ms = session->measure_gpu_ms(iterations);
    REQUIRE_MESSAGE(ms.ok(), ms.status().to_string());
    CHECK(*ms > 0.0);
    CHECK(std::isfinite(*ms));
  }
  CHECK_FALSE(session->measure_gpu_ms(0).ok());
  CHECK(validation_errors() == 0);
}

}  // namespace vkfuse::testing

namespace vkfuse::testing {

TEST_CASE("a kernel op's input larger than one storage buffer binding is bound in chunks") {
  // The same path vgg11's 411 MB classifier weight takes on lavapipe (128 MiB per binding), at a scale
  // a test can afford: this context pretends one binding holds 1 KiB.
  ContextOptions options;
  options.validation = true;
  options.cache_dir = "";
  auto context = Context::create(options);
  REQUIRE_MESSAGE(context.ok(), context.status().to_string());
  context->impl()->plan.max_binding_bytes = 1024;
  context->impl()->plan.binding_alignment = std::max<std::uint64_t>(context->impl()->plan.binding_alignment, 256);
  REQUIRE(1024 % context->impl()->plan.binding_alignment == 0);

  SUBCASE("MatMul and Gemm (with a post-fused Relu) match the reference") {
    GraphBuilder b;
    const Tensor a = b.input("a", {3, 100}), w = b.input("w", {100, 13});     // 1200 and 5200 bytes
    const Tensor x = b.input("x", {5, 40}), v = b.input("v", {30, 40});       // 800 and 4800 bytes
    const Tensor tall = b.input("tall", {200, 13});                           // 10400 bytes
    b.output(b.op("MatMul", {a, w}), "mm");
    b.output(b.op("Relu", {b.op("Gemm", {x, v}, {{"transB", 1.0f}})}), "gemm");
    // A view read in place (rows 100.. of `tall`, from element 1300: the sixth chunk on) binds all of
    // its base's chunks.
    b.output(b.op("MatMul", {a, b.op("Slice", {tall}, {{"axis", 0.0f}, {"start", 100.0f}, {"end", 200.0f}})}), "view");
    auto graph = b.build();
    REQUIRE(graph.ok());
    std::mt19937 rng(5);
    std::map<std::string, HostTensor> feeds;
    for (const auto& [name, shape] : std::vector<std::pair<std::string, Shape>>{
             {"a", {3, 100}}, {"w", {100, 13}}, {"x", {5, 40}}, {"v", {30, 40}}, {"tall", {200, 13}}})
      feeds.emplace(name, random_tensor(shape, DType::kF32, {-1.0f, 1.0f}, rng));
    auto session = Session::create(*context, *graph, {});
    REQUIRE_MESSAGE(session.ok(), session.status().to_string());
    auto got = session->run(feeds);
    REQUIRE_MESSAGE(got.ok(), got.status().to_string());
    auto want = evaluate_reference(*graph, feeds);
    REQUIRE(want.ok());
    for (const char* name : {"mm", "gemm", "view"}) {
      CAPTURE(name);
      const CloseReport report = all_close(got->at(name).to_floats(), want->at(name).to_floats(), 1e-5, 1e-5);
      CHECK_MESSAGE(report.ok, report.describe());
    }
  }
  SUBCASE("an elementwise group cannot chunk: the error names the group, the tensor and the limit") {
    GraphBuilder b;
    const Tensor x = b.input("x", {400});
    b.output(b.op("Exp", {x}), "y");
    auto graph = b.build();
    REQUIRE(graph.ok());
    auto session = Session::create(*context, *graph, {});
    REQUIRE_FALSE(session.ok());
    const std::string message = session.status().to_string();
    CHECK(message.find("group 'Exp'") != std::string::npos);
    CHECK(message.find("'x' [400] (1600 bytes)") != std::string::npos);
    CHECK(message.find("at most 1024 bytes per binding") != std::string::npos);
  }
  CHECK(context->validation_errors() == 0);
}

}  // namespace vkfuse::testing
