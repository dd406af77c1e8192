// Host-side scaling benchmark: the part of Session::create that runs before Vulkan (graph build, the
// passes, fusion planning, kernel specs and GLSL, optionally glslang and spirv-opt) on an N-op
// elementwise chain (or a chain of MatMul -> Relu pairs), for growing N. Wall-clock ms per phase; no GPU. Not a test: it asserts nothing
// about speed. Results: bench/results/planner_scaling.md.
//
//   vkfuse_bench_planner [--ops 1000,2000,4000,8000] [--graph chain|matmul] [--mode fused|unfused] [--compile 0|1]
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include <vkfuse/vkfuse.hpp>

#include "bench_args.h"
#include "codegen/glsl_compiler.h"
#include "codegen/kernel_builder.h"
#include "codegen/spirv_optimizer.h"
#include "host/demo_models.h"
#include "host/fusion_planner.h"
#include "host/graph.h"
#include "host/group_kernel.h"
#include "host/passes/fold_layer_norm.h"

namespace {

using namespace vkfuse;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// A chain of `ops` ops that fuse in pairs: MatMul by a [16, 16] weight, then Relu in its stores. Each
// pair is a kernel group that reads the one before it.
Result<Graph> build_matmul_chain(int ops) {
  GraphBuilder b;
  Tensor x = b.input("x", {64, 16});
  const Tensor w = b.constant(HostTensor::from_floats({16, 16}, std::vector<float>(256, 0.0625f)), "w");
  for (int i = 0; i < ops; ++i) x = i % 2 == 0 ? b.op("MatMul", {x, w}) : b.op("Relu", {x});
  b.output(x, "y");
  return b.build();
}

int fail(const Status& status) {
  std::fprintf(stderr, "%s\n", status.to_string().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const auto ops = bench::parse_items(bench::arg(argc, argv, "--ops", "1000,2000,4000,8000"),
                                      [](const std::string& t) { return std::optional<int>(std::stoi(t)); }, "--ops takes");
  if (!ops) return 2;
  const FusionMode mode = bench::arg(argc, argv, "--mode", "fused") == "unfused" ? FusionMode::kUnfused : FusionMode::kFused;
  const bool matmuls = bench::arg(argc, argv, "--graph", "chain") == "matmul";
  const bool compile = bench::arg(argc, argv, "--compile", "0") == "1";
  DevicePlan device{};
  device.subgroup_arithmetic = true;
  std::printf("%8s %10s %10s %10s %10s %10s %10s %8s %10s\n", "ops", "build_ms", "passes_ms", "plan_ms", "kernels_ms",
              "glslang_ms", "spirvopt_ms", "groups", "glsl_kb");
  for (int n : *ops) {
    auto start = Clock::now();
    auto graph = matmuls ? build_matmul_chain(n) : build_elementwise_chain(1024, n);
    if (!graph.ok()) return fail(graph.status());
    const double build_ms = ms_since(start);
    start = Clock::now();
    std::optional<FoldedLayerNorms> folded;
    const GraphIR& ir = graph_to_plan(graph_ir(*graph), mode, folded);
    const double passes_ms = ms_since(start);
    start = Clock::now();
    auto plan = plan_fusion(ir, device, mode);
    if (!plan.ok()) return fail(plan.status());
    const double plan_ms = ms_since(start);
    start = Clock::now();
    std::size_t glsl_bytes = 0;
    std::vector<std::string> sources;
    for (const FusionGroup& group : plan->groups) {
      auto kernel = make_group_kernel(ir, group, device);
      if (!kernel.ok()) return fail(kernel.status());
      auto source = build_kernel(kernel->spec);
      if (!source.ok()) return fail(source.status());
      glsl_bytes += source->size();
      sources.push_back(std::move(*source));
    }
    const double kernels_ms = ms_since(start);
    double glslang_ms = 0.0, optimize_ms = 0.0;
    for (std::size_t k = 0; k < sources.size() && compile; ++k) {
      start = Clock::now();
      auto spirv = compile_glsl_compute(sources[k], plan->groups[k].label);
      if (!spirv.ok()) return fail(spirv.status());
      glslang_ms += ms_since(start);
      start = Clock::now();
      auto optimized = optimize_and_validate(*spirv, plan->groups[k].label);
      if (!optimized.ok()) return fail(optimized.status());
      optimize_ms += ms_since(start);
    }
    std::printf("%8d %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %8zu %10.1f\n", n, build_ms, passes_ms, plan_ms, kernels_ms,
                glslang_ms, optimize_ms, plan->groups.size(), static_cast<double>(glsl_bytes) / 1024.0);
    std::fflush(stdout);
  }
  return 0;
}
