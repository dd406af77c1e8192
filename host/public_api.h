// What the public classes' methods share: the error a call on a moved-from object returns (instead of
// dereferencing its empty Impl).
#pragma once

#include <string>

#include <vkfuse/status.hpp>

namespace vkfuse {

inline Status moved_from_error(const char* call) {
  return make_error(ErrorCode::kInvalidArgument,
                    std::string(call) + ": this object was moved from; use the object it was moved to");
}

}  // namespace vkfuse
