#include "backend/enabled_features.h"

#include <cstring>

namespace vkfuse {
namespace {

// The chain's structs all start with sType and pNext.
struct ChainLink {
  VkStructureType type;
  const void* next;
};

bool enabled_extension(const VkDeviceCreateInfo& info, const char* name) {
  for (uint32_t i = 0; i < info.enabledExtensionCount; ++i)
    if (info.ppEnabledExtensionNames && std::strcmp(info.ppEnabledExtensionNames[i], name) == 0) return true;
  return false;
}

void read_link(const void* link, EnabledFeatures& e, bool& coopmat_feature) {
  switch (static_cast<const ChainLink*>(link)->type) {
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2:
      e.shader_int64 |= static_cast<const VkPhysicalDeviceFeatures2*>(link)->features.shaderInt64 != VK_FALSE;
      break;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES:
      e.storage_buffer_16bit |= static_cast<const VkPhysicalDeviceVulkan11Features*>(link)->storageBuffer16BitAccess != VK_FALSE;
      break;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES: {
      const auto* f = static_cast<const VkPhysicalDeviceVulkan12Features*>(link);
      e.storage_buffer_8bit |= f->storageBuffer8BitAccess != VK_FALSE;
      e.shader_float16 |= f->shaderFloat16 != VK_FALSE;
      e.shader_int8 |= f->shaderInt8 != VK_FALSE;
      e.timeline_semaphore |= f->timelineSemaphore != VK_FALSE;
      e.vulkan_memory_model |= f->vulkanMemoryModel != VK_FALSE;
      e.vulkan_memory_model_device_scope |= f->vulkanMemoryModelDeviceScope != VK_FALSE;
      break;
    }
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES:
      e.storage_buffer_16bit |= static_cast<const VkPhysicalDevice16BitStorageFeatures*>(link)->storageBuffer16BitAccess != VK_FALSE;
      break;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES:
      e.storage_buffer_8bit |= static_cast<const VkPhysicalDevice8BitStorageFeatures*>(link)->storageBuffer8BitAccess != VK_FALSE;
      break;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES: {
      const auto* f = static_cast<const VkPhysicalDeviceShaderFloat16Int8Features*>(link);
      e.shader_float16 |= f->shaderFloat16 != VK_FALSE;
      e.shader_int8 |= f->shaderInt8 != VK_FALSE;
      break;
    }
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TIMELINE_SEMAPHORE_FEATURES:
      e.timeline_semaphore |= static_cast<const VkPhysicalDeviceTimelineSemaphoreFeatures*>(link)->timelineSemaphore != VK_FALSE;
      break;
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_MEMORY_MODEL_FEATURES: {
      const auto* f = static_cast<const VkPhysicalDeviceVulkanMemoryModelFeatures*>(link);
      e.vulkan_memory_model |= f->vulkanMemoryModel != VK_FALSE;
      e.vulkan_memory_model_device_scope |= f->vulkanMemoryModelDeviceScope != VK_FALSE;
      break;
    }
    case VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV:
      coopmat_feature |= static_cast<const VkPhysicalDeviceCooperativeMatrixFeaturesNV*>(link)->cooperativeMatrix != VK_FALSE;
      break;
    default:
      break;
  }
}

// "storageBuffer16BitAccess (f16 tensors): ..." for one required feature.
std::string missing_line(const char* feature, const char* why, bool supported, const char* how) {
  std::string line = std::string(feature) + " (" + why + "): ";
  if (!supported) return line + "this device does not support it";
  return line + "supported but not enabled; enable it with " + how;
}

}  // namespace

EnabledFeatures read_enabled_features(const VkDeviceCreateInfo* info) {
  EnabledFeatures e;
  if (info == nullptr) return e;
  if (info->pEnabledFeatures) e.shader_int64 = info->pEnabledFeatures->shaderInt64 != VK_FALSE;
  bool coopmat_feature = false;
  for (const void* link = info->pNext; link != nullptr; link = static_cast<const ChainLink*>(link)->next)
    read_link(link, e, coopmat_feature);
  e.cooperative_matrix_nv = coopmat_feature && enabled_extension(*info, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  e.float_controls = enabled_extension(*info, VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME);
  e.timeline_extension = enabled_extension(*info, VK_KHR_TIMELINE_SEMAPHORE_EXTENSION_NAME);
  return e;
}

std::vector<std::string> missing_requirements(const DeviceCaps& supported, const EnabledFeatures& enabled,
                                              const ExternalDevice& wanted, bool at_1_2) {
  std::vector<std::string> missing;
  auto below_1_1 = [](uint32_t version) {
    return VK_API_VERSION_MAJOR(version) < 1 || (VK_API_VERSION_MAJOR(version) == 1 && VK_API_VERSION_MINOR(version) < 1);
  };
  if (below_1_1(wanted.instance_api_version))
    missing.push_back("Vulkan 1.1 on the instance: create it with VkApplicationInfo::apiVersion = VK_API_VERSION_1_1 "
                      "or later, and pass that as ExternalDevice::instance_api_version");
  if (below_1_1(supported.api_version))
    missing.push_back("Vulkan 1.1: " + supported.name + " supports only " + version_to_string(supported.api_version));
  const char* storage16_how = at_1_2 ? "VkPhysicalDeviceVulkan11Features::storageBuffer16BitAccess in VkDeviceCreateInfo::pNext"
                                     : "VkPhysicalDevice16BitStorageFeatures::storageBuffer16BitAccess in VkDeviceCreateInfo::pNext";
  const char* storage8_how = at_1_2 ? "VkPhysicalDeviceVulkan12Features::storageBuffer8BitAccess in VkDeviceCreateInfo::pNext"
                                    : "VK_KHR_8bit_storage and VkPhysicalDevice8BitStorageFeatures::storageBuffer8BitAccess";
  if (wanted.require_fp16 && !(supported.storage_buffer_16bit && enabled.storage_buffer_16bit))
    missing.push_back(missing_line("storageBuffer16BitAccess", "f16 tensors", supported.storage_buffer_16bit, storage16_how));
  if (wanted.require_bool && !(supported.storage_buffer_8bit && enabled.storage_buffer_8bit))
    missing.push_back(missing_line("storageBuffer8BitAccess", "bool tensors", supported.storage_buffer_8bit, storage8_how));
  const bool timeline_enabled = enabled.timeline_semaphore && (at_1_2 || enabled.timeline_extension);
  if (wanted.require_timeline && !(supported.timeline_semaphore && timeline_enabled))
    missing.push_back(missing_line("timelineSemaphore", "timeline semaphores in Execution::submit",
                                   supported.timeline_semaphore,
                                   at_1_2 ? "VkPhysicalDeviceVulkan12Features::timelineSemaphore in VkDeviceCreateInfo::pNext"
                                          : "VK_KHR_timeline_semaphore and VkPhysicalDeviceTimelineSemaphoreFeatures"));
  return missing;
}

DeviceCaps enabled_caps(DeviceCaps caps, const EnabledFeatures& enabled, bool at_1_2) {
  caps.storage_buffer_16bit = caps.storage_buffer_16bit && enabled.storage_buffer_16bit;
  caps.storage_buffer_8bit = caps.storage_buffer_8bit && enabled.storage_buffer_8bit;
  caps.shader_float16 = caps.shader_float16 && enabled.shader_float16;
  caps.shader_int8 = caps.shader_int8 && enabled.shader_int8;
  caps.shader_int64 = caps.shader_int64 && enabled.shader_int64;
  caps.timeline_semaphore = caps.timeline_semaphore && enabled.timeline_semaphore && (at_1_2 || enabled.timeline_extension);
  const bool float_controls = enabled.float_controls || at_1_2;
  caps.preserve_inf_nan_f32 = caps.preserve_inf_nan_f32 && float_controls;
  caps.preserve_inf_nan_f16 = caps.preserve_inf_nan_f16 && float_controls;
  // roots/gemm_coopmat.glsl needs the extension, its feature, the memory model (device scope) and fp16
  // arithmetic, as OwnedDevice enables them.
  caps.coopmat_nv_f16 = caps.coopmat_nv_f16 && at_1_2 && enabled.cooperative_matrix_nv && enabled.vulkan_memory_model &&
                        enabled.vulkan_memory_model_device_scope && enabled.shader_float16;
  caps.cooperative_matrix = caps.coopmat_nv_f16;
  caps.pipeline_statistics = false;  // needs an extension vkfuse enables only on its own devices
  return caps;
}

}  // namespace vkfuse
