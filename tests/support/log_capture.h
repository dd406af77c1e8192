// What vkfuse logs while a test runs, whatever VKFUSE_LOG says (backend/log.h's sink). One capture at
// a time; messages logged on any thread are kept.
#pragma once

#include <string>
#include <vector>

#include "backend/log.h"

namespace vkfuse::testing {

class LogCapture {
 public:
  LogCapture();
  ~LogCapture();
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  // How many messages of `level` hold `text` ("" counts them all).
  std::size_t count(LogLevel level, const std::string& text = "") const;
  // Every message so far, one a line, for a failing check's report.
  std::string all() const;
};

}  // namespace vkfuse::testing
