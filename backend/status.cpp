#include "backend/status.h"

#include <cstring>

namespace vkfuse {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "Ok";
    case ErrorCode::kInvalidArgument: return "InvalidArgument";
    case ErrorCode::kUnsupported: return "Unsupported";
    case ErrorCode::kNotFound: return "NotFound";
    case ErrorCode::kOutOfMemory: return "OutOfMemory";
    case ErrorCode::kDeviceLost: return "DeviceLost";
    case ErrorCode::kVulkan: return "Vulkan";
    case ErrorCode::kCompile: return "Compile";
    case ErrorCode::kIo: return "Io";
    case ErrorCode::kInternal: return "Internal";
    case ErrorCode::kNotReady: return "NotReady";
  }
  return "Unknown";
}

std::string Status::to_string() const {
  if (ok()) return "Ok";
  return std::string(error_code_name(code_)) + ": " + message_;
}

Status Status::with_context(const std::string& context) const {
  if (ok()) return *this;
  return {code_, context + ": " + message_};
}

const char* vk_result_name(VkResult result) {
  switch (result) {
#define VKFUSE_CASE(name) case name: return #name;
    VKFUSE_CASE(VK_SUCCESS)
    VKFUSE_CASE(VK_NOT_READY)
    VKFUSE_CASE(VK_TIMEOUT)
    VKFUSE_CASE(VK_INCOMPLETE)
    VKFUSE_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    VKFUSE_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    VKFUSE_CASE(VK_ERROR_INITIALIZATION_FAILED)
    VKFUSE_CASE(VK_ERROR_DEVICE_LOST)
    VKFUSE_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    VKFUSE_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    VKFUSE_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    VKFUSE_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    VKFUSE_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    VKFUSE_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    VKFUSE_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    VKFUSE_CASE(VK_ERROR_FRAGMENTED_POOL)
    VKFUSE_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    VKFUSE_CASE(VK_ERROR_INVALID_SHADER_NV)
#undef VKFUSE_CASE
    default: return "VK_ERROR_UNKNOWN";
  }
}

Status vk_error(VkResult result, const char* call_text, const char* file, int line) {
  ErrorCode code = ErrorCode::kVulkan;
  if (result == VK_ERROR_DEVICE_LOST) code = ErrorCode::kDeviceLost;
  if (result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY)
    code = ErrorCode::kOutOfMemory;
  const char* base = std::strrchr(file, '/');
  return {code, std::string(call_text) + " returned " + vk_result_name(result) + " (" +
                    (base ? base + 1 : file) + ":" + std::to_string(line) + ")"};
}

}  // namespace vkfuse
