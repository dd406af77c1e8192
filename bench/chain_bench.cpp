// Elementwise fusion benchmark: a fused N-op chain vs the same chain unfused vs a plain copy kernel
// (one Identity op through the same code generator), in effective GB/s (one read and one write of the
// tensor, whatever the kernels do in between) and as ratios. GPU time from Vulkan timestamps around
// back-to-back replays of the recorded dispatches; median of the runs. Not a test: it asserts nothing about speed.
//
//   vkfuse_bench_chain [--ops 8,16] [--min-mi 1] [--max-mi 256] [--runs 5] [--min-iterations 5]
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <vkfuse/vkfuse.hpp>

#include "bench_args.h"
#include "host/demo_models.h"

namespace {

using namespace vkfuse;

using bench::arg;

std::vector<int> parse_list(const std::string& text) {
  std::vector<int> out;
  for (const std::string& item : bench::split(text)) out.push_back(std::stoi(item));
  return out;
}

// Median over `runs` of the mean GPU milliseconds of back-to-back replays (after one real run that
// uploads the inputs), or a negative value with the error printed.
double median_ms(const Context& context, const Result<Graph>& graph, bool fusion, const std::map<std::string, HostTensor>& inputs,
                 int runs, int min_iterations, std::size_t* dispatches) {
  if (!graph.ok()) {
    std::fprintf(stderr, "  %s\n", graph.status().to_string().c_str());
    return -1.0;
  }
  auto session = Session::create(context, *graph, {fusion, true});
  if (!session.ok()) {
    std::fprintf(stderr, "  %s\n", session.status().to_string().c_str());
    return -1.0;
  }
  *dispatches = session->dispatch_count();
  if (auto out = session->run(inputs); !out.ok()) {
    std::fprintf(stderr, "  %s\n", out.status().to_string().c_str());
    return -1.0;
  }
  // Size each measurement to ~100 ms of GPU work, and warm up for two of them first: GPU and memory
  // clocks ramp up under load, and a cold first measurement reads low.
  auto probe = session->measure_gpu_ms(3);
  if (!probe.ok()) {
    std::fprintf(stderr, "  %s\n", probe.status().to_string().c_str());
    return -1.0;
  }
  const int iterations = std::clamp(static_cast<int>(100.0 / std::max(*probe, 1e-3)), min_iterations, 5000);
  std::vector<double> times;
  for (int r = -2; r < runs; ++r) {
    auto ms = session->measure_gpu_ms(iterations);
    if (!ms.ok()) {
      std::fprintf(stderr, "  %s\n", ms.status().to_string().c_str());
      return -1.0;
    }
    if (r >= 0) times.push_back(*ms);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<int> op_counts = parse_list(arg(argc, argv, "--ops", "8,16"));
  const int min_mi = std::stoi(arg(argc, argv, "--min-mi", "1"));
  const int max_mi = std::stoi(arg(argc, argv, "--max-mi", "256"));
  const int runs = std::stoi(arg(argc, argv, "--runs", "5"));
  const int iterations = std::stoi(arg(argc, argv, "--min-iterations", "5"));

  auto context = Context::create({});
  if (!context.ok()) {
    std::fprintf(stderr, "%s\n", context.status().to_string().c_str());
    return 1;
  }
  const DeviceSummary device = context->device();
  std::printf("device: %s (%s), Vulkan %s\n\n", device.name.c_str(), device.driver.c_str(), device.api_version.c_str());
  std::printf("| elements | ops | copy GB/s | fused GB/s | unfused GB/s | fused / copy | fused speedup vs unfused | dispatches fused / unfused |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (int mi = min_mi; mi <= max_mi; mi *= 4) {
    const std::int64_t numel = static_cast<std::int64_t>(mi) << 20;
    const auto inputs = make_chain_inputs(numel, 5);
    const double bytes = 2.0 * 4.0 * static_cast<double>(numel);  // one read + one write of f32
    std::size_t copy_dispatches = 0;
    const double copy_ms = median_ms(*context, build_elementwise_chain(numel, 1, true), true, inputs, runs, iterations, &copy_dispatches);
    if (copy_ms <= 0) continue;
    for (int ops : op_counts) {
      std::size_t fused_d = 0, unfused_d = 0;
      const auto chain = build_elementwise_chain(numel, ops);
      const double fused_ms = median_ms(*context, chain, true, inputs, runs, iterations, &fused_d);
      const double unfused_ms = median_ms(*context, chain, false, inputs, runs, iterations, &unfused_d);
      if (fused_ms <= 0 || unfused_ms <= 0) continue;
      auto gbs = [&](double ms) { return bytes / (ms * 1e-3) / 1e9; };
      std::printf("| %d Mi | %d | %.1f | %.1f | %.1f | %.2f | %.2fx | %zu / %zu |\n", mi, ops, gbs(copy_ms), gbs(fused_ms),
                  gbs(unfused_ms), copy_ms / fused_ms, unfused_ms / fused_ms, fused_d, unfused_d);
      std::fflush(stdout);
    }
  }
  return 0;
}
