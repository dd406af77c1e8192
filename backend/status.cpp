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
    VKFUSE_CASE(VK_EVENT_SET)
    VKFUSE_CASE(VK_EVENT_RESET)
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
    VKFUSE_CASE(VK_ERROR_UNKNOWN)
    VKFUSE_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    VKFUSE_CASE(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    VKFUSE_CASE(VK_ERROR_FRAGMENTATION)
    VKFUSE_CASE(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    VKFUSE_CASE(VK_PIPELINE_COMPILE_REQUIRED)
    VKFUSE_CASE(VK_ERROR_SURFACE_LOST_KHR)
    VKFUSE_CASE(VK_ERROR_NATIVE_WINDOW_IN_USE_KHR)
    VKFUSE_CASE(VK_SUBOPTIMAL_KHR)
    VKFUSE_CASE(VK_ERROR_OUT_OF_DATE_KHR)
    VKFUSE_CASE(VK_ERROR_INCOMPATIBLE_DISPLAY_KHR)
    VKFUSE_CASE(VK_ERROR_VALIDATION_FAILED_EXT)
    VKFUSE_CASE(VK_ERROR_INVALID_SHADER_NV)
    VKFUSE_CASE(VK_ERROR_NOT_PERMITTED_KHR)
    VKFUSE_CASE(VK_ERROR_FULL_SCREEN_EXCLUSIVE_MODE_LOST_EXT)
    VKFUSE_CASE(VK_ERROR_COMPRESSION_EXHAUSTED_EXT)
#undef VKFUSE_CASE
    default: return nullptr;
  }
}

ErrorCode vk_result_code(VkResult result) {
  switch (result) {
    case VK_SUCCESS:
    case VK_INCOMPLETE:
    case VK_SUBOPTIMAL_KHR: return ErrorCode::kOk;  // success codes: the call did its work
    case VK_NOT_READY:
    case VK_TIMEOUT: return ErrorCode::kNotReady;
    case VK_ERROR_DEVICE_LOST: return ErrorCode::kDeviceLost;
    // Some resource ran out: device or host memory, a descriptor pool, address space to map, objects.
    case VK_ERROR_OUT_OF_HOST_MEMORY:
    case VK_ERROR_OUT_OF_DEVICE_MEMORY:
    case VK_ERROR_OUT_OF_POOL_MEMORY:
    case VK_ERROR_FRAGMENTED_POOL:
    case VK_ERROR_FRAGMENTATION:
    case VK_ERROR_MEMORY_MAP_FAILED:
    case VK_ERROR_TOO_MANY_OBJECTS:
    case VK_ERROR_COMPRESSION_EXHAUSTED_EXT: return ErrorCode::kOutOfMemory;
    // The driver, layer or device lacks what was asked for.
    case VK_ERROR_LAYER_NOT_PRESENT:
    case VK_ERROR_EXTENSION_NOT_PRESENT:
    case VK_ERROR_FEATURE_NOT_PRESENT:
    case VK_ERROR_INCOMPATIBLE_DRIVER:
    case VK_ERROR_FORMAT_NOT_SUPPORTED: return ErrorCode::kUnsupported;
    case VK_ERROR_INVALID_SHADER_NV: return ErrorCode::kCompile;
    case VK_ERROR_INVALID_EXTERNAL_HANDLE:
    case VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS: return ErrorCode::kInvalidArgument;
    default: return ErrorCode::kVulkan;
  }
}

std::string vk_result_text(VkResult result) {
  const char* name = vk_result_name(result);
  return name ? std::string(name) : "VkResult " + std::to_string(static_cast<int>(result));
}

Status vk_error(VkResult result, const char* call_text, const char* file, int line) {
  ErrorCode code = vk_result_code(result);
  if (code == ErrorCode::kOk) code = ErrorCode::kVulkan;  // a success code treated as a failure by its caller
  const char* base = std::strrchr(file, '/');
  return {code, std::string(call_text) + " returned " + vk_result_text(result) + " (" + (base ? base + 1 : file) +
                    ":" + std::to_string(line) + ")"};
}

}  // namespace vkfuse
