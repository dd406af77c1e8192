// What an application embedding vkfuse has: its own instance (validation and synchronization
// validation on, every message counted), device, queue, buffers, command buffers and semaphores.
// The interop tests build on it; nothing here uses vkfuse.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <string>
#include <vector>

namespace vkfuse::testing {

struct AppBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  void* mapped = nullptr;  // host-visible buffers only
};

class AppVulkan {
 public:
  struct Options {
    bool storage16 = true;   // enable storageBuffer16BitAccess where supported
    bool storage8 = true;    // storageBuffer8BitAccess
    bool timeline = true;    // timelineSemaphore
  };
  // REQUIREs success (validation layer installed, a device with compute).
  explicit AppVulkan(Options options);
  AppVulkan() : AppVulkan(Options{}) {}
  ~AppVulkan();
  AppVulkan(const AppVulkan&) = delete;
  AppVulkan& operator=(const AppVulkan&) = delete;

  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0;
  VkDeviceCreateInfo create_info{};  // as the device was created (its pNext chain lives in this object)
  bool has_storage16 = false, has_storage8 = false, has_timeline = false;

  AppBuffer make_buffer(VkDeviceSize size, VkBufferUsageFlags usage, bool host_visible);
  void destroy(AppBuffer& buffer);
  VkCommandBuffer begin_commands();  // a fresh primary command buffer, begun
  VkSemaphore make_semaphore(bool timeline);
  // Ends `cb`, submits it with the waits and signals, and waits for it on a fence.
  void submit(VkCommandBuffer cb, const std::vector<VkSemaphore>& waits, const std::vector<uint64_t>& wait_values,
              const std::vector<VkSemaphore>& signals, const std::vector<uint64_t>& signal_values, bool wait = true);
  void wait_idle();

  // Validation messages (any severity from warning up) since creation, and the first one's text.
  uint32_t messages() const;
  std::string first_message() const;

  struct Counter;

 private:
  Counter* counter_ = nullptr;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  std::vector<VkSemaphore> semaphores_;
  std::vector<VkFence> fences_;
  VkPhysicalDeviceVulkan11Features f11_{};
  VkPhysicalDeviceVulkan12Features f12_{};
  VkPhysicalDeviceFeatures2 features_{};
  VkDeviceQueueCreateInfo queue_info_{};
  float priority_ = 1.0f;
};

}  // namespace vkfuse::testing
