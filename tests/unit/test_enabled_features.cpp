// What an application enabled on its VkDevice (backend/enabled_features.h), read from its
// VkDeviceCreateInfo, and the requirements vkfuse reports missing. No GPU.
#include <doctest/doctest.h>

#include "backend/enabled_features.h"

namespace vkfuse {
namespace {

DeviceCaps lavapipe_like() {
  DeviceCaps caps;
  caps.name = "test device";
  caps.api_version = VK_API_VERSION_1_3;
  caps.storage_buffer_16bit = caps.storage_buffer_8bit = true;
  caps.shader_float16 = caps.shader_int8 = caps.shader_int64 = true;
  caps.timeline_semaphore = true;
  caps.coopmat_nv_f16 = caps.cooperative_matrix = true;
  caps.preserve_inf_nan_f32 = true;
  return caps;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

}  // namespace

TEST_CASE("enabled features: the Vulkan 1.1 and 1.2 aggregates, and nothing for a null create info") {
  CHECK_FALSE(read_enabled_features(nullptr).storage_buffer_16bit);
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.features.shaderInt64 = VK_TRUE;
  f11.storageBuffer16BitAccess = VK_TRUE;
  f12.timelineSemaphore = VK_TRUE;
  f12.shaderFloat16 = VK_TRUE;
  features.pNext = &f11;
  f11.pNext = &f12;
  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  info.pNext = &features;
  const EnabledFeatures e = read_enabled_features(&info);
  CHECK(e.storage_buffer_16bit);
  CHECK_FALSE(e.storage_buffer_8bit);
  CHECK(e.shader_float16);
  CHECK(e.shader_int64);
  CHECK(e.timeline_semaphore);
  CHECK_FALSE(e.cooperative_matrix_nv);  // the feature needs its extension too

  const DeviceCaps caps = enabled_caps(lavapipe_like(), e, true);
  CHECK(caps.storage_buffer_16bit);
  CHECK_FALSE(caps.storage_buffer_8bit);
  CHECK(caps.timeline_semaphore);
  CHECK_FALSE(caps.coopmat_nv_f16);  // not enabled: roots/gemm_coopmat.glsl is not used
  CHECK(caps.preserve_inf_nan_f32);  // float controls are core at 1.2
}

TEST_CASE("enabled features: the per-feature structs and extensions of a Vulkan 1.1 device") {
  VkPhysicalDevice16BitStorageFeatures storage16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDevice8BitStorageFeatures storage8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
  VkPhysicalDeviceTimelineSemaphoreFeatures timeline{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES};
  storage16.storageBuffer16BitAccess = VK_TRUE;
  storage8.storageBuffer8BitAccess = VK_TRUE;
  timeline.timelineSemaphore = VK_TRUE;
  storage16.pNext = &storage8;
  storage8.pNext = &timeline;
  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  info.pNext = &storage16;
  EnabledFeatures e = read_enabled_features(&info);
  CHECK(e.storage_buffer_16bit);
  CHECK(e.storage_buffer_8bit);
  CHECK(e.timeline_semaphore);
  CHECK_FALSE(e.timeline_extension);
  // At 1.1 a timeline feature without VK_KHR_timeline_semaphore enabled is not usable.
  CHECK_FALSE(enabled_caps(lavapipe_like(), e, false).timeline_semaphore);
  const char* extensions[] = {VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME};
  info.enabledExtensionCount = 1;
  info.ppEnabledExtensionNames = extensions;
  e = read_enabled_features(&info);
  CHECK(enabled_caps(lavapipe_like(), e, false).timeline_semaphore);
}

TEST_CASE("enabled features: every missing requirement in one list, saying how to enable each") {
  ExternalDevice wanted;
  wanted.instance_api_version = VK_API_VERSION_1_0;
  wanted.require_fp16 = wanted.require_bool = wanted.require_timeline = true;
  DeviceCaps caps = lavapipe_like();
  caps.storage_buffer_8bit = false;  // the device itself lacks it
  const std::string text = joined(missing_requirements(caps, EnabledFeatures{}, wanted, true));
  INFO(text);
  CHECK(text.find("Vulkan 1.1 on the instance") != std::string::npos);
  CHECK(text.find("storageBuffer16BitAccess (f16 tensors): supported but not enabled; enable it with "
                  "VkPhysicalDeviceVulkan11Features::storageBuffer16BitAccess") != std::string::npos);
  CHECK(text.find("storageBuffer8BitAccess (bool tensors): this device does not support it") != std::string::npos);
  CHECK(text.find("timelineSemaphore (timeline semaphores in Execution::submit): supported but not enabled") !=
        std::string::npos);

  wanted.instance_api_version = VK_API_VERSION_1_2;
  EnabledFeatures all;
  all.storage_buffer_16bit = all.storage_buffer_8bit = all.timeline_semaphore = true;
  CHECK(missing_requirements(lavapipe_like(), all, wanted, true).empty());
  caps = lavapipe_like();
  caps.api_version = VK_API_VERSION_1_0;
  CHECK(joined(missing_requirements(caps, all, wanted, true)).find("supports only 1.0") != std::string::npos);
}

}  // namespace vkfuse
