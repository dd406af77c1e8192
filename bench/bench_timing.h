// The benchmarks' timing loop: median GPU milliseconds of back-to-back replays of a session.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

#include <vkfuse/vkfuse.hpp>

namespace vkfuse::bench {

// Sizes each measurement to about `target_ms` of GPU work (at least `min_iterations` replays), warms up
// with such measurements for at least kWarmUpMs of wall time (and two at least), as `vkfuse bench`
// does, then returns the median of `runs` more: each the mean GPU milliseconds per replay.
// The GPU's clocks ramp up under load and drop after an idle spell; two measurements of ~20 ms were the
// warm-up before. (A side-by-side run on the H100, 2026-11-27, read 4096^3 f32 at 5.86 ms where 16
// runs in separate processes that day, with either warm-up, read 2.89-2.92: not explained by the
// warm-up, bench/results/h100_2026-11-27_2b777e7.md.)
inline constexpr double kWarmUpMs = 500.0;

inline Result<double> median_gpu_ms(Session& session, double target_ms, int min_iterations, int runs) {
  auto probe = session.measure_gpu_ms(1);
  if (!probe.ok()) return probe.status();
  const int iterations = std::clamp(static_cast<int>(target_ms / std::max(*probe, 1e-3)), min_iterations, 5000);
  const auto warm_start = std::chrono::steady_clock::now();
  for (int w = 0; w < 2 || std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - warm_start).count() < kWarmUpMs; ++w) {
    auto ms = session.measure_gpu_ms(iterations);
    if (!ms.ok()) return ms.status();
  }
  std::vector<double> times;
  for (int r = 0; r < std::max(runs, 1); ++r) {
    auto ms = session.measure_gpu_ms(iterations);
    if (!ms.ok()) return ms.status();
    times.push_back(*ms);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace vkfuse::bench
