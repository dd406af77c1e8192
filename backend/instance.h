// Instance: the owned VkInstance, with the Khronos validation layer and its message counter when asked for.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "backend/handle.h"
#include "backend/status.h"

namespace vkfuse {

struct InstanceOptions {
  // Enables VK_LAYER_KHRONOS_validation and counts its messages. VKFUSE_VALIDATION in the environment set to
  // anything but "" or "0" turns it on as well (it never turns a request off); VKFUSE_VALIDATION=sync
  // adds the layer's synchronization validation (hazards between commands that lack a barrier),
  // VKFUSE_VALIDATION=gpu its GPU-assisted validation (shaders instrumented: out-of-range buffer accesses;
  // the device then enables descriptorIndexing where it has it, which that check needs).
  bool validation = false;
  bool sync_validation = false;  // implies validation
};

// The hint given when there is no Vulkan driver or no device at all (Instance::create, select_device).
std::string_view no_vulkan_device_hint();

// Owns the VkInstance and, with validation, a VK_EXT_debug_utils messenger that counts what the layer reports.
// Move-only. Everything created from this instance must be destroyed before it.
// Thread-safety: the const accessors may be called from any thread (the counters are atomic; the layer may
// report from any thread that makes Vulkan calls).
class Instance {
 public:
  // Requests Vulkan 1.2 where the loader supports it, else 1.1 (a 1.0-only loader is kUnsupported).
  // Enables VK_EXT_debug_utils whenever the loader or a layer offers it (object names work without validation),
  // and VK_KHR_portability_enumeration where offered, so that portability drivers (MoltenVK) are listed.
  // Fails with kNotFound when validation is wanted but the layer is not installed, or when there is no Vulkan
  // driver at all.
  static Result<Instance> create(const InstanceOptions& options);

  Instance(Instance&&) noexcept;
  Instance& operator=(Instance&& other) noexcept;  // releases this one's objects in destruction order first
  ~Instance();

  VkInstance handle() const { return instance_.get(); }
  // The apiVersion the instance was created with (VK_API_VERSION_1_2 or VK_API_VERSION_1_1). The version a
  // device may be used at is the lower of this and the device's own apiVersion.
  uint32_t api_version() const { return api_version_; }
  // VK_EXT_debug_utils is enabled on this instance: object names (set_debug_name) can be set.
  bool debug_utils_enabled() const { return debug_utils_; }

  bool validation_enabled() const { return validation_; }
  bool gpu_assisted_enabled() const { return gpu_assisted_; }  // VKFUSE_VALIDATION=gpu
  // ERROR-severity messages reported so far (validation layer and loader). Tests fail when this is non-zero.
  uint32_t validation_errors() const;
  uint32_t validation_warnings() const;
  // Text of the most recent ERROR-severity message, "" if none.
  std::string last_validation_error() const;

  // The counters the messenger callback writes; opaque outside instance.cpp. It lives on the heap so that its
  // address, given to the layer as user data, stays valid when the Instance moves.
  struct MessageCounter;

 private:
  Instance() = default;

  // Destruction runs bottom-up: the messenger goes before the instance, the counter after both (the layer
  // may still report while vkDestroyInstance runs, through the create-info messenger).
  std::unique_ptr<MessageCounter> counter_;
  UniqueHandle<VkInstance> instance_;
  UniqueHandle<VkDebugUtilsMessengerEXT> messenger_;
  uint32_t api_version_ = 0;
  bool debug_utils_ = false;
  bool validation_ = false;
  bool gpu_assisted_ = false;
};

}  // namespace vkfuse
