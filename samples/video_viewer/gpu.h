// The viewer's own Vulkan: instance, device and queue, created the way an application that embeds
// vkfuse creates them (every feature vkfuse can use enabled where the device has it), and the small
// allocation helpers the viewer's buffers and images use. vkfuse runs on this device through
// vkfuse::Context::wrap; nothing here is vkfuse's.
//
// Ownership: Gpu owns everything it creates and destroys it in its destructor, after waiting for the
// device to go idle; Buffer and Image are destroyed with destroy(). One thread.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace viewer {

struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  void* mapped = nullptr;  // host-visible buffers stay mapped
};

struct Image {
  VkImage image = VK_NULL_HANDLE;
  VkImageView view = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkFormat format = VK_FORMAT_UNDEFINED;
  VkExtent2D extent{0, 0};
};

struct GpuOptions {
  bool validation = false;                     // Khronos validation + synchronization validation
  std::vector<std::string> instance_extensions;  // what the window system needs (GLFW's list)
  bool presentation = false;                   // the device needs VK_KHR_swapchain
  int device_index = -1;                       // -1: the first device that can do the job
};

class Gpu {
 public:
  // The instance only: the device comes with create_device, once a window's surface exists.
  static std::unique_ptr<Gpu> create(const GpuOptions& options, std::string* error);
  ~Gpu();
  Gpu(const Gpu&) = delete;
  Gpu& operator=(const Gpu&) = delete;

  // Creates the device, choosing a physical device whose queue family can present to `surface`
  // (VK_NULL_HANDLE: no presentation).
  bool create_device(VkSurfaceKHR surface, std::string* error);

  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  uint32_t family = 0;
  VkQueue queue = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;  // resettable command buffers of `family`
  VkDeviceCreateInfo device_info{};     // as the device was created (vkfuse reads what is enabled)
  VkPhysicalDeviceProperties properties{};
  bool fp16 = false;                    // storageBuffer16BitAccess enabled: --precision fp16 works
  uint32_t validation_messages() const { return *messages_; }

  Buffer make_buffer(VkDeviceSize size, VkBufferUsageFlags usage, bool host_visible, std::string* error);
  Image make_image(VkExtent2D extent, VkFormat format, VkImageUsageFlags usage, std::string* error);
  void destroy(Buffer& buffer);
  void destroy(Image& image);

  // One-time work on the queue, waited for (uploads at startup, screenshots).
  bool run_once(const std::function<void(VkCommandBuffer)>& record, std::string* error);

 private:
  Gpu() = default;
  GpuOptions options_;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  std::unique_ptr<uint32_t> messages_ = std::make_unique<uint32_t>(0);
  // The feature chain device_info points into.
  VkPhysicalDeviceFeatures2 features_{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  VkPhysicalDeviceVulkan11Features f11_{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12_{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coopmat_{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  VkDeviceQueueCreateInfo queue_info_{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  float priority_ = 1.0f;
  std::vector<const char*> extensions_;
  bool find_memory(uint32_t bits, VkMemoryPropertyFlags want, uint32_t* type) const;
};

// A layout transition of a whole single-mip colour image with its dependency.
void image_barrier(VkCommandBuffer cb, VkImage image, VkImageLayout from, VkImageLayout to, VkPipelineStageFlags src_stage,
                   VkAccessFlags src, VkPipelineStageFlags dst_stage, VkAccessFlags dst);

// "vkCreateDevice failed: VK_ERROR_..." for messages.
std::string vk_error(const char* call, VkResult result);

}  // namespace viewer
