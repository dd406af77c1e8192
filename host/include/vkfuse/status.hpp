// Status and Result<T>: the error model of vkfuse (public, dependency-free). No exceptions cross the public API; every fallible
// call returns one of these, [[nodiscard]], with a message a user can act on.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

#include <vkfuse/export.h>

namespace vkfuse {

enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,  // bad graph, shape, dtype, option
  kUnsupported,      // valid request the device or the library cannot do
  kNotFound,         // no device, missing op, missing file
  kOutOfMemory,
  kDeviceLost,       // sticky: later calls on the same session fail fast
  kVulkan,           // any other failing VkResult
  kCompile,          // GLSL -> SPIR-V failed
  kIo,
  kInternal,
  kNotReady,         // the GPU has not finished that work yet: wait, or ask again later
};

VKFUSE_API const char* error_code_name(ErrorCode code);

class [[nodiscard]] VKFUSE_API Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok_status() { return {}; }
  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "InvalidArgument: <message>"
  std::string to_string() const;
  // Returns a copy whose message is prefixed with `context: `.
  Status with_context(const std::string& context) const;
  // For call sites that consume a Status on purpose (destructors, best-effort cleanup).
  void ignore() const {}

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

inline Status make_error(ErrorCode code, std::string message) { return {code, std::move(message)}; }

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : data_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(data_).ok() && "a Result built from a Status must carry an error");
  }

  bool ok() const { return std::holds_alternative<T>(data_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(data_);
  }
  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace vkfuse

#define VKFUSE_CONCAT_INNER(a, b) a##b
#define VKFUSE_CONCAT(a, b) VKFUSE_CONCAT_INNER(a, b)

// Returns the Status from the enclosing function if `expr` (a Status) is an error.
#define VKFUSE_TRY(expr)                                  \
  do {                                                    \
    ::vkfuse::Status vkfuse_try_status_ = (expr);         \
    if (!vkfuse_try_status_.ok()) return vkfuse_try_status_; \
  } while (0)

// `lhs` = value of the Result `expr`, or return its Status.
#define VKFUSE_ASSIGN_OR_RETURN(lhs, expr)                                      \
  auto VKFUSE_CONCAT(vkfuse_result_, __LINE__) = (expr);                        \
  if (!VKFUSE_CONCAT(vkfuse_result_, __LINE__).ok())                            \
    return VKFUSE_CONCAT(vkfuse_result_, __LINE__).status();                    \
  lhs = std::move(VKFUSE_CONCAT(vkfuse_result_, __LINE__)).value()
