#include "backend/device_caps.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

namespace vkfuse {
namespace {

// Spelled out: VK_KHR_cooperative_matrix is newer than the headers we build against (1.3.239).
constexpr const char* kKhrCooperativeMatrix = "VK_KHR_cooperative_matrix";
constexpr const char* kNvCooperativeMatrix = "VK_NV_cooperative_matrix";

Result<std::vector<VkExtensionProperties>> device_extensions(VkPhysicalDevice physical) {
  uint32_t count = 0;
  VKFUSE_CHECK_VK(vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, nullptr));
  std::vector<VkExtensionProperties> extensions(count);
  VKFUSE_CHECK_VK(vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, extensions.data()));
  extensions.resize(count);
  return extensions;
}

bool has_extension(const std::vector<VkExtensionProperties>& extensions, const char* name) {
  return std::any_of(extensions.begin(), extensions.end(), [&](const VkExtensionProperties& extension) {
    return std::strcmp(extension.extensionName, name) == 0;
  });
}

template <size_t N>
void copy_uuid(std::array<uint8_t, 16>& out, const uint8_t (&in)[N]) {
  static_assert(N == 16);
  std::copy(std::begin(in), std::end(in), out.begin());
}

const char* component_name(VkComponentTypeNV type) {
  switch (type) {
    case VK_COMPONENT_TYPE_FLOAT16_NV: return "f16";
    case VK_COMPONENT_TYPE_FLOAT32_NV: return "f32";
    case VK_COMPONENT_TYPE_SINT8_NV: return "s8";
    case VK_COMPONENT_TYPE_SINT32_NV: return "s32";
    case VK_COMPONENT_TYPE_UINT8_NV: return "u8";
    case VK_COMPONENT_TYPE_UINT32_NV: return "u32";
    default: return "other";
  }
}

// VK_NV_cooperative_matrix's subgroup-scope sizes ("16x8x16 f16*f16+f32->f32"), into caps.coopmat_nv_sizes;
// true when 16x16x16 fp16 x fp16 + fp32 -> fp32 is among them.
bool query_coopmat_nv_sizes(VkInstance instance, VkPhysicalDevice physical, DeviceCaps& caps) {
  auto list = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
      vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
  if (!list) return false;
  uint32_t count = 0;
  if (list(physical, &count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkCooperativeMatrixPropertiesNV> sizes(count, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
  if (list(physical, &count, sizes.data()) != VK_SUCCESS) return false;
  bool found = false;
  for (uint32_t i = 0; i < count; ++i) {
    const VkCooperativeMatrixPropertiesNV& p = sizes[i];
    if (p.scope != VK_SCOPE_SUBGROUP_NV) continue;
    caps.coopmat_nv_sizes.push_back(std::to_string(p.MSize) + "x" + std::to_string(p.NSize) + "x" + std::to_string(p.KSize) +
                                    " " + component_name(p.AType) + "*" + component_name(p.BType) + "+" +
                                    component_name(p.CType) + "->" + component_name(p.DType));
    found = found || (p.MSize == 16 && p.NSize == 16 && p.KSize == 16 && p.AType == VK_COMPONENT_TYPE_FLOAT16_NV &&
                      p.BType == VK_COMPONENT_TYPE_FLOAT16_NV && p.CType == VK_COMPONENT_TYPE_FLOAT32_NV &&
                      p.DType == VK_COMPONENT_TYPE_FLOAT32_NV);
  }
  return found;
}

// Properties and features at Vulkan 1.2: the two aggregate structs carry everything (and the NV
// cooperative matrix feature, chained when the extension is there).
void query_at_1_2(VkPhysicalDevice physical, const std::vector<VkExtensionProperties>& extensions, DeviceCaps& caps) {
  VkPhysicalDeviceVulkan12Properties p12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
  VkPhysicalDeviceVulkan11Properties p11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
  p11.pNext = &p12;
  VkPhysicalDeviceProperties2 properties{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  properties.pNext = &p11;
  vkGetPhysicalDeviceProperties2(physical, &properties);

  caps.driver_name = p12.driverName;
  caps.driver_info = p12.driverInfo;
  caps.driver_id = p12.driverID;
  copy_uuid(caps.device_uuid, p11.deviceUUID);
  copy_uuid(caps.driver_uuid, p11.driverUUID);
  caps.subgroup_size = p11.subgroupSize;
  caps.subgroup_operations = p11.subgroupSupportedOperations;
  caps.subgroup_in_compute = (p11.subgroupSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
  caps.max_memory_allocation_size = p11.maxMemoryAllocationSize;
  caps.preserve_inf_nan_f32 = p12.shaderSignedZeroInfNanPreserveFloat32;
  caps.preserve_inf_nan_f16 = p12.shaderSignedZeroInfNanPreserveFloat16;

  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  f11.pNext = &f12;
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coopmat{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  const bool has_coopmat_nv = has_extension(extensions, kNvCooperativeMatrix);
  void** tail = &f12.pNext;
  if (has_coopmat_nv) *tail = &coopmat, tail = &coopmat.pNext;
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executable{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  const bool has_executable = has_extension(extensions, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
  if (has_executable) *tail = &executable;
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &f11;
  vkGetPhysicalDeviceFeatures2(physical, &features);
  // The sizes are checked by query_device_caps, which has the instance.
  caps.coopmat_nv_f16 = has_coopmat_nv && coopmat.cooperativeMatrix && f12.vulkanMemoryModel &&
                       f12.vulkanMemoryModelDeviceScope && f12.shaderFloat16;
  caps.pipeline_statistics = has_executable && executable.pipelineExecutableInfo;

  caps.storage_buffer_16bit = f11.storageBuffer16BitAccess;
  caps.storage_buffer_8bit = f12.storageBuffer8BitAccess;
  caps.shader_float16 = f12.shaderFloat16;
  caps.shader_int8 = f12.shaderInt8;
  caps.shader_int64 = features.features.shaderInt64;
  caps.timeline_semaphore = f12.timelineSemaphore;
}

// At Vulkan 1.1: the 1.1 core structs, plus the KHR extension structs of what 1.2 later promoted, chained only
// when the device offers the extension.
void query_at_1_1(VkPhysicalDevice physical, const std::vector<VkExtensionProperties>& extensions,
                  DeviceCaps& caps) {
  const bool has_driver_properties = has_extension(extensions, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
  const bool has_8bit_storage = has_extension(extensions, VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
  const bool has_float16_int8 = has_extension(extensions, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
  const bool has_float_controls = has_extension(extensions, VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME);

  VkPhysicalDeviceDriverPropertiesKHR driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES_KHR};
  VkPhysicalDeviceFloatControlsPropertiesKHR float_controls{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES_KHR};
  driver.pNext = has_float_controls ? &float_controls : nullptr;
  VkPhysicalDeviceMaintenance3Properties maintenance3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  maintenance3.pNext = has_driver_properties ? &driver : has_float_controls ? static_cast<void*>(&float_controls) : nullptr;
  VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
  id.pNext = &maintenance3;
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  subgroup.pNext = &id;
  VkPhysicalDeviceProperties2 properties{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  properties.pNext = &subgroup;
  vkGetPhysicalDeviceProperties2(physical, &properties);

  if (has_driver_properties) {
    caps.driver_name = driver.driverName;
    caps.driver_info = driver.driverInfo;
    caps.driver_id = driver.driverID;
  }
  copy_uuid(caps.device_uuid, id.deviceUUID);
  copy_uuid(caps.driver_uuid, id.driverUUID);
  caps.subgroup_size = subgroup.subgroupSize;
  caps.subgroup_operations = subgroup.supportedOperations;
  caps.subgroup_in_compute = (subgroup.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) != 0;
  caps.max_memory_allocation_size = maintenance3.maxMemoryAllocationSize;
  caps.preserve_inf_nan_f32 = has_float_controls && float_controls.shaderSignedZeroInfNanPreserveFloat32;
  caps.preserve_inf_nan_f16 = has_float_controls && float_controls.shaderSignedZeroInfNanPreserveFloat16;

  VkPhysicalDeviceShaderFloat16Int8FeaturesKHR float16_int8{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR};
  VkPhysicalDevice8BitStorageFeaturesKHR storage8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES_KHR};
  VkPhysicalDevice16BitStorageFeatures storage16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  void** tail = &storage16.pNext;
  if (has_8bit_storage) {
    *tail = &storage8;
    tail = &storage8.pNext;
  }
  if (has_float16_int8) *tail = &float16_int8;
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &storage16;
  vkGetPhysicalDeviceFeatures2(physical, &features);

  caps.storage_buffer_16bit = storage16.storageBuffer16BitAccess;
  caps.storage_buffer_8bit = has_8bit_storage && storage8.storageBuffer8BitAccess;
  caps.shader_float16 = has_float16_int8 && float16_int8.shaderFloat16;
  caps.shader_int8 = has_float16_int8 && float16_int8.shaderInt8;
  caps.shader_int64 = features.features.shaderInt64;
}

// One extension's properties struct, filled by vkGetPhysicalDeviceProperties2.
template <typename T>
T extension_properties(VkPhysicalDevice physical, VkStructureType type) {
  T out{};
  out.sType = type;
  VkPhysicalDeviceProperties2 properties{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  properties.pNext = &out;
  vkGetPhysicalDeviceProperties2(physical, &properties);
  return out;
}

// The compute-unit count from whichever vendor extension the device has (Vulkan has no core query).
uint32_t query_compute_units(VkPhysicalDevice physical, const std::vector<VkExtensionProperties>& extensions) {
  if (has_extension(extensions, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME))
    return extension_properties<VkPhysicalDeviceShaderSMBuiltinsPropertiesNV>(
               physical, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV)
        .shaderSMCount;
  if (has_extension(extensions, VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME)) {
    const auto amd = extension_properties<VkPhysicalDeviceShaderCorePropertiesAMD>(
        physical, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD);
    return amd.shaderEngineCount * amd.shaderArraysPerEngineCount * amd.computeUnitsPerShaderArray;
  }
  if (has_extension(extensions, VK_ARM_SHADER_CORE_BUILTINS_EXTENSION_NAME))
    return extension_properties<VkPhysicalDeviceShaderCoreBuiltinsPropertiesARM>(
               physical, VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_BUILTINS_PROPERTIES_ARM)
        .shaderCoreCount;
  return 0;
}

}  // namespace

void apply_quirks(DeviceCaps& caps) {
  // Mesa lavapipe (22.3) crashes or hangs now and then when its queue runs a submit while other threads
  // create pipelines (seen in tests/interop's image-input test; docs/history.md).
  caps.submit_beside_pipeline_creation = caps.driver_id != VK_DRIVER_ID_MESA_LLVMPIPE;
}

std::string quirks_text(const DeviceCaps& caps) {
  return caps.submit_beside_pipeline_creation ? "none" : "no submit beside pipeline creation";
}

Result<DeviceCaps> query_device_caps(VkPhysicalDevice physical, uint32_t index, uint32_t instance_api_version,
                                     VkInstance instance) {
  if (physical == VK_NULL_HANDLE) return make_error(ErrorCode::kInvalidArgument, "query_device_caps: null device");
  VkPhysicalDeviceProperties base{};
  vkGetPhysicalDeviceProperties(physical, &base);

  DeviceCaps caps;
  caps.index = index;
  caps.name = base.deviceName;
  caps.type = base.deviceType;
  caps.vendor_id = base.vendorID;
  caps.device_id = base.deviceID;
  caps.api_version = base.apiVersion;
  caps.driver_version = base.driverVersion;
  if (VK_API_VERSION_MAJOR(base.apiVersion) == 1 && VK_API_VERSION_MINOR(base.apiVersion) < 1) {
    return make_error(ErrorCode::kUnsupported, "device " + std::to_string(index) + " (" + caps.name +
                                                   ") only supports Vulkan " + version_to_string(base.apiVersion) +
                                                   "; vkfuse needs Vulkan 1.1");
  }

  const VkPhysicalDeviceLimits& limits = base.limits;
  caps.max_shared_memory_bytes = limits.maxComputeSharedMemorySize;
  caps.max_workgroup_invocations = limits.maxComputeWorkGroupInvocations;
  std::copy(std::begin(limits.maxComputeWorkGroupSize), std::end(limits.maxComputeWorkGroupSize),
            caps.max_workgroup_size.begin());
  std::copy(std::begin(limits.maxComputeWorkGroupCount), std::end(limits.maxComputeWorkGroupCount),
            caps.max_workgroup_count.begin());
  caps.max_push_constants_bytes = limits.maxPushConstantsSize;
  caps.max_storage_buffers_per_stage = limits.maxPerStageDescriptorStorageBuffers;
  caps.max_bound_descriptor_sets = limits.maxBoundDescriptorSets;
  caps.max_storage_buffer_range = limits.maxStorageBufferRange;
  caps.min_storage_buffer_offset_alignment = limits.minStorageBufferOffsetAlignment;

  VKFUSE_ASSIGN_OR_RETURN(std::vector<VkExtensionProperties> extensions, device_extensions(physical));
  if (usable_at_vulkan_1_2(instance_api_version, base.apiVersion)) {
    query_at_1_2(physical, extensions, caps);
    const bool sized = instance != VK_NULL_HANDLE && has_extension(extensions, kNvCooperativeMatrix) &&
                       query_coopmat_nv_sizes(instance, physical, caps);
    caps.coopmat_nv_f16 = caps.coopmat_nv_f16 && sized;
  } else {
    query_at_1_1(physical, extensions, caps);
  }
  caps.cooperative_matrix =
      has_extension(extensions, kKhrCooperativeMatrix) || has_extension(extensions, kNvCooperativeMatrix);
  caps.compute_units = query_compute_units(physical, extensions);

  VkPhysicalDeviceMemoryProperties memory{};
  vkGetPhysicalDeviceMemoryProperties(physical, &memory);
  for (uint32_t i = 0; i < memory.memoryHeapCount; ++i) {
    if (memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) {
      caps.device_local_bytes += memory.memoryHeaps[i].size;
    }
  }

  uint32_t family_count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &family_count, families.data());
  // A compute-only family is usually an async-compute engine that does not share time with graphics.
  int chosen = -1;
  for (uint32_t i = 0; i < family_count && chosen < 0; ++i) {
    if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && !(families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT) &&
        families[i].queueCount > 0)
      chosen = static_cast<int>(i);
  }
  for (uint32_t i = 0; i < family_count && chosen < 0; ++i) {
    if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && families[i].queueCount > 0) chosen = static_cast<int>(i);
  }
  if (chosen < 0) {
    return make_error(ErrorCode::kUnsupported,
                      "device " + std::to_string(index) + " (" + caps.name + ") has no queue family with compute");
  }
  caps.compute_queue_family = static_cast<uint32_t>(chosen);
  caps.timestamp_valid_bits = families[caps.compute_queue_family].timestampValidBits;
  caps.timestamp_period_ns = limits.timestampPeriod;
  caps.timestamps = caps.timestamp_valid_bits > 0 && caps.timestamp_period_ns > 0.0f;
  apply_quirks(caps);
  return caps;
}

bool usable_at_vulkan_1_2(uint32_t instance_api_version, uint32_t device_api_version) {
  // Variant and patch bits do not matter; only major.minor of the lower of the two.
  auto major_minor = [](uint32_t v) { return VK_API_VERSION_MAJOR(v) * 1000 + VK_API_VERSION_MINOR(v); };
  return std::min(major_minor(instance_api_version), major_minor(device_api_version)) >= 1002;
}

const char* device_type_name(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

std::string uuid_to_hex(const std::array<uint8_t, 16>& uuid) {
  static const char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(32);
  for (uint8_t byte : uuid) {
    hex.push_back(kDigits[byte >> 4]);
    hex.push_back(kDigits[byte & 0xf]);
  }
  return hex;
}

std::string version_to_string(uint32_t api_version) {
  return std::to_string(VK_API_VERSION_MAJOR(api_version)) + "." + std::to_string(VK_API_VERSION_MINOR(api_version)) +
         "." + std::to_string(VK_API_VERSION_PATCH(api_version));
}

}  // namespace vkfuse
