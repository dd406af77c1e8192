#include "support/log_capture.h"

#include <mutex>
#include <utility>

namespace vkfuse::testing {
namespace {

std::mutex g_mutex;
std::vector<std::pair<LogLevel, std::string>> g_messages;

void keep(LogLevel level, std::string_view message) {
  std::lock_guard lock(g_mutex);
  g_messages.emplace_back(level, std::string(message));
}

}  // namespace

LogCapture::LogCapture() {
  std::lock_guard lock(g_mutex);
  g_messages.clear();
  set_log_sink(&keep);
}

LogCapture::~LogCapture() { set_log_sink(nullptr); }

std::size_t LogCapture::count(LogLevel level, const std::string& text) const {
  std::lock_guard lock(g_mutex);
  std::size_t n = 0;
  for (const auto& [l, message] : g_messages) n += l == level && message.find(text) != std::string::npos ? 1 : 0;
  return n;
}

std::string LogCapture::all() const {
  static const char* const kNames[] = {"warn", "info", "debug"};
  std::lock_guard lock(g_mutex);
  std::string text;
  for (const auto& [level, message] : g_messages) text += std::string(kNames[static_cast<int>(level)]) + ": " + message + "\n";
  return text;
}

}  // namespace vkfuse::testing
