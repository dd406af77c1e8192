#include "backend/units.h"

#include <cstdio>
#include <limits>

namespace vkfuse {

std::string describe_bytes(std::uint64_t bytes) {
  if (bytes == 1) return "1 byte";
  const std::string exact = std::to_string(bytes) + " bytes";
  if (bytes < 1024) return exact;
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  int unit = 0;
  while (value >= 1024.0 && unit < 5) value /= 1024.0, ++unit;
  char text[32];
  std::snprintf(text, sizeof text, " (%.1f %s)", value, kUnits[unit]);
  return exact + text;
}

std::string describe_timeout_ns(std::uint64_t ns) {
  if (ns == std::numeric_limits<std::uint64_t>::max()) return "no timeout";
  if (ns < 1000) return std::to_string(ns) + " ns";
  const double v = static_cast<double>(ns);
  char text[40];
  if (v < 1e6) std::snprintf(text, sizeof text, "%.1f us", v / 1e3);
  else if (v < 1e9) std::snprintf(text, sizeof text, "%.1f ms", v / 1e6);
  else if (v < 1e12) std::snprintf(text, sizeof text, "%.2f s", v / 1e9);
  else std::snprintf(text, sizeof text, "%.0f s", v / 1e9);
  return text;
}

}  // namespace vkfuse
