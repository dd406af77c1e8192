#include "support/compare.h"

#include <cmath>
#include <sstream>

namespace vkfuse::testing {

std::string CloseReport::describe() const {
  if (ok) return "all close";
  std::ostringstream out;
  out.precision(9);
  out << "worst at [" << worst_index << "]: got " << got << ", want " << want;
  return out.str();
}

CloseReport all_close(const std::vector<float>& got, const std::vector<float>& want, double atol, double rtol) {
  CloseReport report;
  if (got.size() != want.size()) {
    report.ok = false;
    report.worst_index = static_cast<std::int64_t>(std::min(got.size(), want.size()));
    return report;
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    double excess = 0.0;
    if (std::isnan(w) || std::isnan(g)) {
      excess = std::isnan(w) && std::isnan(g) ? 0.0 : INFINITY;
    } else if (std::isinf(w) || std::isinf(g)) {
      excess = g == w ? 0.0 : INFINITY;
    } else {
      excess = std::fabs(g - w) - (atol + rtol * std::fabs(w));
    }
    if (excess > 0.0 && (report.ok || excess > report.excess)) {
      report.ok = false;
      report.worst_index = static_cast<std::int64_t>(i);
      report.got = g;
      report.want = w;
      report.excess = excess;
    }
  }
  return report;
}

double nmse(const std::vector<float>& got, const std::vector<float>& want) {
  double err = 0.0, ref = 0.0;
  for (std::size_t i = 0; i < got.size() && i < want.size(); ++i) {
    err += (static_cast<double>(got[i]) - want[i]) * (static_cast<double>(got[i]) - want[i]);
    ref += static_cast<double>(want[i]) * want[i];
  }
  return ref == 0.0 ? err : err / ref;
}

}  // namespace vkfuse::testing
