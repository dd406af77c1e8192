// DeviceCaps: a plain snapshot of what one physical device offers (limits, features, queue, identity).
// Pure data once queried: the planner and the tests can build one by hand.
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "backend/status.h"

namespace vkfuse {

struct DeviceCaps {
  uint32_t index = 0;  // position in vkEnumeratePhysicalDevices
  std::string name;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  uint32_t vendor_id = 0, device_id = 0;
  uint32_t api_version = 0;     // the device's own apiVersion
  uint32_t driver_version = 0;  // vendor-encoded; version_to_string is only right for some vendors (Mesa)
  // From VkPhysicalDeviceDriverProperties (Vulkan 1.2 or VK_KHR_driver_properties), else "".
  std::string driver_name, driver_info;
  VkDriverId driver_id = static_cast<VkDriverId>(0);  // 0 when the driver does not say
  std::array<uint8_t, 16> device_uuid{}, driver_uuid{};  // the kernel cache keys on these

  // Driver workarounds, set by apply_quirks (device_caps.cpp says for which driver and why).
  // Whether a queue submit may run while other threads create pipelines.
  bool submit_beside_pipeline_creation = true;

  uint32_t max_shared_memory_bytes = 0;  // maxComputeSharedMemorySize
  uint32_t max_workgroup_invocations = 0;
  std::array<uint32_t, 3> max_workgroup_size{}, max_workgroup_count{};
  uint32_t subgroup_size = 0;
  // SMs / CUs / shader cores where the device reports them (VK_NV_shader_sm_builtins,
  // VK_AMD_shader_core_properties, VK_ARM_shader_core_builtins); 0 where it does not (lavapipe, Intel).
  uint32_t compute_units = 0;
  VkSubgroupFeatureFlags subgroup_operations = 0;
  bool subgroup_in_compute = false;  // subgroup operations are supported in the compute stage

  uint32_t max_push_constants_bytes = 0;
  uint32_t max_storage_buffers_per_stage = 0;
  uint32_t max_bound_descriptor_sets = 0;
  uint64_t max_storage_buffer_range = 0;
  uint64_t max_memory_allocation_size = 0;  // VkPhysicalDeviceMaintenance3Properties
  uint64_t min_storage_buffer_offset_alignment = 0;
  uint64_t device_local_bytes = 0;  // sum of the DEVICE_LOCAL heaps

  // From query_device_caps: supported. In DeviceContext::caps: supported AND enabled on that VkDevice.
  bool storage_buffer_16bit = false, storage_buffer_8bit = false;
  bool shader_float16 = false, shader_int8 = false, shader_int64 = false;
  bool cooperative_matrix = false;  // VK_KHR_cooperative_matrix or VK_NV_cooperative_matrix is present
  // What roots/gemm_coopmat.glsl needs, at Vulkan 1.2: VK_NV_cooperative_matrix with its feature, a
  // 16x16x16 fp16 x fp16 + fp32 -> fp32 product at subgroup scope (queried only when the instance is
  // given to query_device_caps), the vulkanMemoryModel feature (glslang compiles GL_NV_cooperative_matrix
  // to the Vulkan memory model), vulkanMemoryModelDeviceScope (with the memory model enabled, every shader
  // that uses Device scope needs it: split K's buffer barriers and atomics in roots/gemm_tiled.glsl) and
  // shaderFloat16.
  bool coopmat_nv_f16 = false;
  std::vector<std::string> coopmat_nv_sizes;  // "16x8x16 f16*f16+f32->f32", subgroup scope (for reports)
  // shaderSignedZeroInfNanPreserveFloat32/16 (Vulkan 1.2 or VK_KHR_shader_float_controls): shaders may ask
  // that x - x, x * 0 and the like are not folded, so NaN and Inf propagate as IEEE arithmetic does.
  bool preserve_inf_nan_f32 = false, preserve_inf_nan_f16 = false;
  // VK_KHR_pipeline_executable_properties with pipelineExecutableInfo, at Vulkan 1.2: the driver reports
  // statistics of each compiled pipeline (NVIDIA: its register count). Enabled only under VKFUSE_LOG=debug,
  // which then logs them for every pipeline (backend/pipeline.cpp).
  bool pipeline_statistics = false;
  // timelineSemaphore (Vulkan 1.2 core): submissions may wait on and signal timeline values.
  bool timeline_semaphore = false;

  // Of the compute queue family below.
  bool timestamps = false;
  float timestamp_period_ns = 0.0f;
  uint32_t timestamp_valid_bits = 0;
  uint32_t compute_queue_family = 0;  // a family with COMPUTE: compute-only preferred, then any with compute
};

// Queries everything DeviceCaps holds. `instance_api_version` is the apiVersion the VkInstance was created with
// (Instance::api_version()); the device is queried with the Vulkan 1.1/1.2 property and feature structs when
// both it and the device are at 1.2 or later, else with the 1.1 core and KHR extension structs. The default
// takes the 1.1 route, which is valid with any instance.
// `instance` (optional) is needed only for the cooperative matrix sizes (an instance-level extension call).
// kUnsupported: a Vulkan 1.0 device, or one without a compute queue.
Result<DeviceCaps> query_device_caps(VkPhysicalDevice physical, uint32_t index,
                                     uint32_t instance_api_version = VK_API_VERSION_1_1,
                                     VkInstance instance = VK_NULL_HANDLE);

// A device is used at the lower of the instance's apiVersion and its own: true when that is 1.2 or later, i.e.
// when the Vulkan 1.1/1.2 aggregate feature and property structs may be used with it.
bool usable_at_vulkan_1_2(uint32_t instance_api_version, uint32_t device_api_version);

// "discrete", "integrated", "virtual", "cpu", "other"
const char* device_type_name(VkPhysicalDeviceType type);
// Sets the workaround flags for the device's driver (query_device_caps calls it).
void apply_quirks(DeviceCaps& caps);
// The workarounds that apply, for reports: "none" or their names.
std::string quirks_text(const DeviceCaps& caps);
// 32 lowercase hex digits, no dashes (usable in a file name).
std::string uuid_to_hex(const std::array<uint8_t, 16>& uuid);
// "1.3.239"
std::string version_to_string(uint32_t api_version);

}  // namespace vkfuse
