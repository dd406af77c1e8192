// Command-line helpers the benchmarks share: "--flag value" lookup and comma-separated lists.
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace vkfuse::bench {

// The value after `flag`, or `fallback`.
inline std::string arg(int argc, char** argv, const std::string& flag, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (flag == argv[i]) return argv[i + 1];
  return fallback;
}

// "a,b,c" -> {"a", "b", "c"}.
inline std::vector<std::string> split(const std::string& text, char separator = ',') {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, separator)) out.push_back(item);
  return out;
}

}  // namespace vkfuse::bench
