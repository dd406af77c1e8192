#include "backend/log.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace vkfuse {
namespace {

LogLevel configured_level() {
  static const LogLevel level = [] {
    const char* env = std::getenv("VKFUSE_LOG");
    if (env && std::strcmp(env, "debug") == 0) return LogLevel::kDebug;
    if (env && std::strcmp(env, "info") == 0) return LogLevel::kInfo;
    return LogLevel::kWarn;
  }();
  return level;
}

}  // namespace

bool log_enabled(LogLevel level) { return static_cast<int>(level) <= static_cast<int>(configured_level()); }

void log_message(LogLevel level, std::string_view message) {
  if (!log_enabled(level)) return;
  static const char* kNames[] = {"warn", "info", "debug"};
  std::fprintf(stderr, "[vkfuse %s] %.*s\n", kNames[static_cast<int>(level)], static_cast<int>(message.size()),
               message.data());
}

}  // namespace vkfuse
