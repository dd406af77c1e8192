// Minimal leveled logging to stderr, controlled by VKFUSE_LOG=info|debug (default: warnings only).
#pragma once

#include <string_view>

namespace vkfuse {

enum class LogLevel { kWarn = 0, kInfo = 1, kDebug = 2 };

bool log_enabled(LogLevel level);
void log_message(LogLevel level, std::string_view message);

// Test seam: while a sink is set, every message, whatever VKFUSE_LOG lets through to stderr, is also
// handed to it on the thread that logs it. Returns the sink it replaces; nullptr removes it.
using LogSink = void (*)(LogLevel level, std::string_view message);
LogSink set_log_sink(LogSink sink);

}  // namespace vkfuse
