// Threads: sessions made and run on several threads over one context, several contexts at once, and
// one session or execution used from several threads at once (serialized: every result right, no
// hang), with the validation layer's thread-safety checks on. Each thread collects its failures as
// text; the test thread checks them, so no assertion runs off the test thread.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <vkfuse/interop.hpp>
#include <vkfuse/vkfuse.hpp>

#include "host/context_impl.h"
#include "support/gpu_context.h"

namespace vkfuse::testing {
namespace {

constexpr std::int64_t kSize = 4099;  // not a multiple of any workgroup size

// out = Relu(x * 2 - 1): each thread's inputs carry its own seed, so a result that belongs to another
// thread's run, or to no run, is caught.
Graph affine_graph() {
  GraphBuilder b;
  const Tensor x = b.input("x", {kSize});
  b.output(b.op("Relu", {b.op("Sub", {b.op("Mul", {x, b.scalar(2.0f)}), b.scalar(1.0f)})}), "out");
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  return *graph;
}

std::vector<float> input_values(int seed) {
  std::vector<float> x(static_cast<std::size_t>(kSize));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((static_cast<int>(i) * 7 + seed * 131) % 1000) / 250.0f;
  return x;
}

std::map<std::string, HostTensor> inputs_for(int seed) { return {{"x", HostTensor::from_floats({kSize}, input_values(seed))}}; }

// "" when `outputs` is what a run on inputs_for(seed) gives, else what is wrong.
std::string check_outputs(const Result<std::map<std::string, HostTensor>>& outputs, int seed) {
  if (!outputs.ok()) return outputs.status().to_string();
  const auto out = outputs->find("out");
  if (out == outputs->end()) return "no output 'out'";
  const std::vector<float> got = out->second.to_floats();
  const std::vector<float> x = input_values(seed);
  if (got.size() != x.size()) return "output has " + std::to_string(got.size()) + " elements";
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float want = std::max(0.0f, x[i] * 2.0f - 1.0f);
    if (std::fabs(got[i] - want) > 1e-5f)
      return "seed " + std::to_string(seed) + ": out[" + std::to_string(i) + "] = " + std::to_string(got[i]) +
             ", want " + std::to_string(want);
  }
  return "";
}

// Runs body(t) on `threads` threads and returns every failure they reported.
std::vector<std::string> on_threads(int threads, const std::function<std::string(int)>& body) {
  std::vector<std::string> failures(static_cast<std::size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { failures[static_cast<std::size_t>(t)] = body(t); });
  for (std::thread& thread : pool) thread.join();
  std::vector<std::string> reported;
  for (std::string& f : failures)
    if (!f.empty()) reported.push_back(std::move(f));
  return reported;
}

void check_none(const std::vector<std::string>& failures) {
  for (const std::string& f : failures) FAIL_CHECK(f);
  CHECK(failures.empty());
}

constexpr int kThreads = 4;
constexpr int kRuns = 6;

}  // namespace

TEST_CASE("threads: sessions made and run on several threads share one context") {
  const Graph graph = affine_graph();
  check_none(on_threads(kThreads, [&](int t) -> std::string {
    auto session = Session::create(gpu_context(), graph, {t % 2 == 0, false});
    if (!session.ok()) return session.status().to_string();
    for (int run = 0; run < kRuns; ++run) {
      const int seed = t * 100 + run;
      if (std::string bad = check_outputs(session->run(inputs_for(seed)), seed); !bad.empty()) return bad;
    }
    return "";
  }));
  CHECK(validation_errors() == 0);
}

TEST_CASE("threads: contexts of their own on several threads") {
  const Graph graph = affine_graph();
  check_none(on_threads(3, [&](int t) -> std::string {
    ContextOptions options;
    options.validation = true;
    options.cache_dir = "";
    auto context = Context::create(options);
    if (!context.ok()) return context.status().to_string();
    auto session = Session::create(*context, graph, {});
    if (!session.ok()) return session.status().to_string();
    for (int run = 0; run < kRuns; ++run)
      if (std::string bad = check_outputs(session->run(inputs_for(t * 10 + run)), t * 10 + run); !bad.empty()) return bad;
    if (context->validation_errors() != 0) return std::to_string(context->validation_errors()) + " validation errors";
    return "";
  }));
}

TEST_CASE("threads: one session run from several threads at once is serialized") {
  auto session = Session::create(gpu_context(), affine_graph(), {});
  REQUIRE_MESSAGE(session.ok(), session.status().to_string());
  check_none(on_threads(kThreads, [&](int t) -> std::string {
    for (int run = 0; run < kRuns; ++run) {
      const int seed = t * 100 + run;
      if (std::string bad = check_outputs(session->run(inputs_for(seed)), seed); !bad.empty()) return bad;
      if (session->groups().size() != session->dispatch_count()) return "groups() and dispatch_count() disagree";
    }
    return "";
  }));
  // measure_gpu_ms beside runs: it replays the same command buffer, so it must wait its turn too.
  if (gpu_context().impl()->ctx().caps.timestamps) {
    check_none(on_threads(2, [&](int t) -> std::string {
      for (int run = 0; run < 3; ++run) {
        if (t == 0) {
          if (auto ms = session->measure_gpu_ms(2); !ms.ok()) return ms.status().to_string();
        } else if (std::string bad = check_outputs(session->run(inputs_for(run)), run); !bad.empty()) {
          return bad;
        }
      }
      return "";
    }));
  }
  CHECK(validation_errors() == 0);
}

TEST_CASE("threads: one execution used from several threads at once is serialized") {
  auto session = Session::create(gpu_context(), affine_graph(), {});
  REQUIRE_MESSAGE(session.ok(), session.status().to_string());
  auto execution = session->create_execution();
  REQUIRE_MESSAGE(execution.ok(), execution.status().to_string());
  check_none(on_threads(kThreads, [&](int t) -> std::string {
    for (int run = 0; run < kRuns; ++run) {
      const int seed = t * 100 + run;
      if (std::string bad = check_outputs(execution->run(inputs_for(seed)), seed); !bad.empty()) return bad;
      (void)execution->in_flight();
      (void)execution->last_staging_bytes();
    }
    return "";
  }));
  CHECK(validation_errors() == 0);
}

}  // namespace vkfuse::testing
