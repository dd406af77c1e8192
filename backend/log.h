// Minimal leveled logging to stderr, controlled by VKFUSE_LOG=info|debug (default: warnings only).
#pragma once

#include <string_view>

namespace vkfuse {

enum class LogLevel { kWarn = 0, kInfo = 1, kDebug = 2 };

bool log_enabled(LogLevel level);
void log_message(LogLevel level, std::string_view message);

}  // namespace vkfuse
