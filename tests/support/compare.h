// Comparisons for tests: all-close with the worst element reported, and normalized mean squared error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vkfuse::testing {

struct CloseReport {
  bool ok = true;
  std::int64_t worst_index = -1;
  double got = 0.0, want = 0.0, excess = 0.0;  // the worst element: |got - want| - (atol + rtol |want|)
  std::string describe() const;                 // "worst at [17]: got 0.5, want 0.50001"
};

// |got - want| <= atol + rtol * |want| everywhere; NaN matches NaN, an infinity matches itself.
CloseReport all_close(const std::vector<float>& got, const std::vector<float>& want, double atol, double rtol);

// sum (got - want)^2 / sum want^2 (0 when both are zero).
double nmse(const std::vector<float>& got, const std::vector<float>& want);

}  // namespace vkfuse::testing
