// What an application enabled on its VkDevice, read from the VkDeviceCreateInfo it used, and what
// vkfuse still misses on such a device. Pure (no Vulkan calls): unit-tested without a GPU.
#pragma once

#include <vulkan/vulkan.h>

#include <string>
#include <vector>

#include <vkfuse/interop.hpp>

#include "backend/device_caps.h"

namespace vkfuse {

struct EnabledFeatures {
  bool storage_buffer_16bit = false, storage_buffer_8bit = false;
  bool shader_float16 = false, shader_int8 = false, shader_int64 = false;
  bool timeline_semaphore = false;
  bool vulkan_memory_model = false, vulkan_memory_model_device_scope = false;
  bool cooperative_matrix_nv = false;  // VK_NV_cooperative_matrix enabled with its feature
  bool float_controls = false;         // VK_KHR_shader_float_controls enabled (core at 1.2)
  bool timeline_extension = false;     // VK_KHR_timeline_semaphore enabled (core at 1.2)
};

// Walks info's pNext chain (VkPhysicalDeviceFeatures2, the Vulkan 1.1/1.2 aggregates and the per-feature
// structs vkfuse uses), pEnabledFeatures and the enabled extensions. Null: nothing optional.
EnabledFeatures read_enabled_features(const VkDeviceCreateInfo* info);

// One line per requirement the device misses: Vulkan 1.1 on the instance and the device, and what
// `wanted` requires (fp16, bool, timeline), each saying whether the device lacks it or the
// application did not enable it, and how to. `at_1_2`: the device is used at Vulkan 1.2 or later.
std::vector<std::string> missing_requirements(const DeviceCaps& supported, const EnabledFeatures& enabled,
                                              const ExternalDevice& wanted, bool at_1_2);

// The supported caps narrowed to what `enabled` turned on (DeviceContext::caps of a borrowed device).
DeviceCaps enabled_caps(DeviceCaps supported, const EnabledFeatures& enabled, bool at_1_2);

}  // namespace vkfuse
