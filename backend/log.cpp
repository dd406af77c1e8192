#include "backend/log.h"

#include <atomic>
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

std::atomic<LogSink> g_sink{nullptr};

}  // namespace

bool log_enabled(LogLevel level) { return static_cast<int>(level) <= static_cast<int>(configured_level()); }

void log_message(LogLevel level, std::string_view message) {
  if (const LogSink sink = g_sink.load()) sink(level, message);
  if (!log_enabled(level)) return;
  static const char* kNames[] = {"warn", "info", "debug"};
  std::fprintf(stderr, "[vkfuse %s] %.*s\n", kNames[static_cast<int>(level)], static_cast<int>(message.size()),
               message.data());
}

LogSink set_log_sink(LogSink sink) { return g_sink.exchange(sink); }

}  // namespace vkfuse
