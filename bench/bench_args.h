// Command-line helpers the benchmarks share: "--flag value" lookup and comma-separated lists.
#pragma once

#include <cstdio>
#include <optional>
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

// A comma-separated flag value, each item through `parse`; std::nullopt (with `usage` and the bad item
// printed) if one does not parse.
template <typename Parse>
auto parse_items(const std::string& list, Parse parse, const char* usage)
    -> std::optional<std::vector<typename decltype(parse(std::string()))::value_type>> {
  std::vector<typename decltype(parse(std::string()))::value_type> items;
  for (const std::string& text : split(list, ',')) {
    auto item = parse(text);
    if (!item) {
      std::fprintf(stderr, "%s items, not %s\n", usage, text.c_str());
      return std::nullopt;
    }
    items.push_back(*item);
  }
  return items;
}

}  // namespace vkfuse::bench
