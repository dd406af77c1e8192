// Device selection and the two ways to hold a device: OwnedDevice (vkfuse creates everything) and
// BorrowedDevice (an application's objects, e.g. a game embedding vkfuse). Both hand out a DeviceContext.
#pragma once

#include <vulkan/vulkan.h>

#include <string_view>
#include <vector>

#include "backend/device_caps.h"
#include "backend/handle.h"
#include "backend/instance.h"
#include "backend/status.h"

namespace vkfuse {

// Non-owning view of a ready device: what the rest of vkfuse uses. Cheap to copy; valid as long as the
// OwnedDevice / BorrowedDevice (or the application's objects) it came from.
struct DeviceContext {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;  // externally synchronized (Vulkan rule): one submitting thread at a time
  uint32_t queue_family = 0;
  // storage_buffer_16bit, storage_buffer_8bit, shader_float16, shader_int8, shader_int64 and cooperative_matrix
  // mean "supported AND enabled on this VkDevice". compute_queue_family == queue_family, and the timestamp
  // fields describe that family.
  DeviceCaps caps;
  bool debug_utils = false;  // vkSetDebugUtilsObjectNameEXT usable (set_debug_name)
};

// Every usable physical device (Vulkan 1.1+, with a compute queue), in enumeration order; devices that do not
// qualify are skipped with a warning in the log. Empty when there is none (not an error here).
Result<std::vector<DeviceCaps>> enumerate_devices(const Instance& instance);

// selector: "" = VKFUSE_DEVICE from the environment if set, else the best by type: discrete > integrated >
// virtual > cpu > other (ties: lowest index). All digits = an index into vkEnumeratePhysicalDevices; anything
// else = a case-insensitive substring of the device name (first match).
// kNotFound when there is no device at all (with how to get lavapipe) or when nothing matches (listing devices).
Result<DeviceCaps> select_device(const Instance& instance, std::string_view selector);

// Owns the Instance and a VkDevice with one queue from caps.compute_queue_family. Move-only.
// Enables, where supported: storageBuffer16BitAccess, storageBuffer8BitAccess, shaderFloat16, shaderInt8,
// shaderInt64 (with VK_KHR_8bit_storage / VK_KHR_shader_float16_int8 on a device used at Vulkan 1.1), and
// VK_KHR_portability_subset where the device has it (required then); at Vulkan 1.2, VK_NV_cooperative_matrix
// with the Vulkan memory model where roots/gemm_coopmat.glsl can use it (caps.coopmat_nv_f16, then
// caps.cooperative_matrix), and VK_KHR_pipeline_executable_properties under VKFUSE_LOG=debug
// (caps.pipeline_statistics).
// Every object created from the context (buffers, pipelines, recorders) must be destroyed before this;
// the destructor waits for the device to go idle first. Device loss is the caller's business.
class OwnedDevice {
 public:
  static Result<OwnedDevice> create(const InstanceOptions& options, std::string_view selector = "");

  OwnedDevice(OwnedDevice&&) noexcept = default;
  OwnedDevice& operator=(OwnedDevice&& other) noexcept;  // releases this one's device, then its instance

  const DeviceContext& context() const { return context_; }
  const Instance& instance() const { return instance_; }

 private:
  explicit OwnedDevice(Instance instance) : instance_(std::move(instance)) {}

  Instance instance_;  // declared first: destroyed last
  UniqueHandle<VkDevice> device_;
  DeviceContext context_;
};

// Wraps an application's instance, device and queue; destroys nothing. Move-only like OwnedDevice so that the
// two are used alike; the application keeps its objects alive for as long as vkfuse uses them.
class BorrowedDevice {
 public:
  // What the application enabled on its VkInstance / VkDevice. The context's feature flags are these AND what
  // the device supports.
  struct Enabled {
    bool storage_buffer_16bit = false, storage_buffer_8bit = false, shader_float16 = false, shader_int8 = false;
    bool shader_int64 = false;
    bool shader_float_controls = false;  // VK_KHR_shader_float_controls enabled (implied on a Vulkan 1.2 device)
    bool debug_utils = false;  // VK_EXT_debug_utils enabled on the application's instance
    // The apiVersion the application's VkInstance was created with; decides whether the Vulkan 1.2 structs
    // may be used to query the device.
    uint32_t instance_api_version = VK_API_VERSION_1_1;
  };

  // Queries the caps itself. kInvalidArgument: a null handle, or a queue family without compute.
  static Result<BorrowedDevice> wrap(VkInstance instance, VkPhysicalDevice physical, VkDevice device, VkQueue queue,
                                     uint32_t queue_family, Enabled enabled);

  BorrowedDevice(BorrowedDevice&&) noexcept = default;
  BorrowedDevice& operator=(BorrowedDevice&&) noexcept = default;
  BorrowedDevice(const BorrowedDevice&) = delete;
  BorrowedDevice& operator=(const BorrowedDevice&) = delete;

  const DeviceContext& context() const { return context_; }

 private:
  BorrowedDevice() = default;

  DeviceContext context_;
};

}  // namespace vkfuse
