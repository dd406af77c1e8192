// Device selection and the two ways to hold a device: OwnedDevice (vkfuse creates everything) and
// BorrowedDevice (an application's objects, e.g. a game embedding vkfuse). Both hand out a DeviceContext.
#pragma once

#include <vulkan/vulkan.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include <vkfuse/interop.hpp>

#include "backend/device_caps.h"
#include "backend/handle.h"
#include "backend/instance.h"
#include "backend/status.h"

namespace vkfuse {

// Device memory vkfuse holds on one device, counted by every Buffer made from it (Context reports it).
struct DeviceMemoryCounter {
  std::atomic<uint64_t> bytes{0};
};

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
  // Taken around every vkQueueSubmit on `queue` (submit_to_queue): a mutex of the OwnedDevice's, or the
  // application's lock for a borrowed queue (none: the application promised not to submit concurrently).
  QueueLock queue_lock;
  std::shared_ptr<DeviceMemoryCounter> memory = std::make_shared<DeviceMemoryCounter>();
};

// vkQueueSubmit on ctx.queue under ctx.queue_lock.
VkResult submit_to_queue(const DeviceContext& ctx, const VkSubmitInfo& submit, VkFence fence);

// Every usable physical device (Vulkan 1.1+, with a compute queue), in enumeration order; devices that do not
// qualify are skipped with a warning in the log. Empty when there is none (not an error here); a failing
// vkEnumeratePhysicalDevices is an error (enumeration_failure).
Result<std::vector<DeviceCaps>> enumerate_devices(const Instance& instance);

// The error of a vkEnumeratePhysicalDevices that returned `result`: it names the call and the VkResult
// (the "install mesa-vulkan-drivers" hint is for an enumeration that finds no device, not for this).
Status enumeration_failure(VkResult result);

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
  std::unique_ptr<std::mutex> queue_mutex_ = std::make_unique<std::mutex>();  // stable address for queue_lock
  UniqueHandle<VkDevice> device_;
  DeviceContext context_;
};

// Wraps an application's instance, device and queue (ExternalDevice); destroys nothing. Move-only like
// OwnedDevice so that the two are used alike; the application keeps its objects alive for as long as
// vkfuse uses them.
class BorrowedDevice {
 public:
  // Reads what the application enabled from device.device_create_info and queries the caps itself: the
  // context's feature flags are what the device supports AND the application enabled. Fails with one
  // kUnsupported error listing every missing requirement (Vulkan 1.1, a compute queue family, and what
  // device.require_* asks), each with the feature struct or extension that enables it;
  // kInvalidArgument for null handles.
  static Result<BorrowedDevice> wrap(const ExternalDevice& device);

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
