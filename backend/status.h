// Vulkan side of the error model: every VkResult goes through VKFUSE_CHECK_VK.
#pragma once

#include <vulkan/vulkan.h>

#include <vkfuse/status.hpp>

namespace vkfuse {

const char* vk_result_name(VkResult result);
Status vk_error(VkResult result, const char* call_text, const char* file, int line);

}  // namespace vkfuse

// Every VkResult goes through here: the error names the call, the file and the line.
#define VKFUSE_CHECK_VK(call)                                                   \
  do {                                                                          \
    VkResult vkfuse_vk_result_ = (call);                                        \
    if (vkfuse_vk_result_ != VK_SUCCESS)                                        \
      return ::vkfuse::vk_error(vkfuse_vk_result_, #call, __FILE__, __LINE__);  \
  } while (0)
