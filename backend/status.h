// Vulkan side of the error model: every VkResult goes through VKFUSE_CHECK_VK.
#pragma once

#include <vulkan/vulkan.h>

#include <string>

#include <vkfuse/status.hpp>

namespace vkfuse {

// "VK_ERROR_OUT_OF_POOL_MEMORY"; nullptr for a value this build does not list.
const char* vk_result_name(VkResult result);
// The name, or "VkResult <number>" for an unlisted value.
std::string vk_result_text(VkResult result);
// The ErrorCode a VkResult stands for: kOk for success codes, kNotReady (not ready, timeout),
// kDeviceLost, kOutOfMemory (device, host or pool memory, fragmentation, mapping, too many objects),
// kUnsupported (missing layer, extension, feature, format, incompatible driver), kCompile (invalid
// shader), kInvalidArgument (invalid handles and addresses), kVulkan for the rest.
ErrorCode vk_result_code(VkResult result);
// The error of a failed call: vk_result_code's code and "<call> returned <name> (<file>:<line>)".
Status vk_error(VkResult result, const char* call_text, const char* file, int line);

}  // namespace vkfuse

// Every VkResult goes through here: the error names the call, the file and the line.
#define VKFUSE_CHECK_VK(call)                                                   \
  do {                                                                          \
    VkResult vkfuse_vk_result_ = (call);                                        \
    if (vkfuse_vk_result_ != VK_SUCCESS)                                        \
      return ::vkfuse::vk_error(vkfuse_vk_result_, #call, __FILE__, __LINE__);  \
  } while (0)
