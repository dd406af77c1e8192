// The benchmarks' timing loop: median GPU milliseconds of back-to-back replays of a session.
#pragma once

#include <algorithm>
#include <vector>

#include <vkfuse/vkfuse.hpp>

namespace vkfuse::bench {

// Sizes each measurement to about `target_ms` of GPU work (at least `min_iterations` replays), runs two
// of them as warm-up (GPU clocks ramp up under load, and a cold first measurement reads low), then
// returns the median of `runs` more: each the mean GPU milliseconds per replay.
inline Result<double> median_gpu_ms(Session& session, double target_ms, int min_iterations, int runs) {
  auto probe = session.measure_gpu_ms(1);
  if (!probe.ok()) return probe.status();
  const int iterations = std::clamp(static_cast<int>(target_ms / std::max(*probe, 1e-3)), min_iterations, 5000);
  std::vector<double> times;
  for (int r = -2; r < std::max(runs, 1); ++r) {
    auto ms = session.measure_gpu_ms(iterations);
    if (!ms.ok()) return ms.status();
    if (r >= 0) times.push_back(*ms);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace vkfuse::bench
