// Where the viewer draws: a window's swapchain (GLFW), or offscreen images when there is no window
// system at all. Both hand out an image to draw into, its framebuffer, and a way to show it; the
// screenshot reads the last image shown.
//
// Ownership: a Target owns its swapchain or images, views and framebuffers; the window is the
// caller's. One thread.
#pragma once

#include <vulkan/vulkan.h>

#include <memory>
#include <string>
#include <vector>

#include "gpu.h"

struct GLFWwindow;

namespace viewer {

class Renderer;

class Target {
 public:
  // The swapchain of `surface` (FIFO: the display's rate), sized to the window's framebuffer.
  static std::unique_ptr<Target> window(Gpu& gpu, GLFWwindow* window, VkSurfaceKHR surface, std::string* error);
  // `count` offscreen RGBA8 images of `extent`, one per frame in flight.
  static std::unique_ptr<Target> offscreen(Gpu& gpu, VkExtent2D extent, uint32_t count, std::string* error);
  ~Target();

  bool is_window() const { return swapchain_ != VK_NULL_HANDLE; }
  VkFormat format() const { return format_; }
  VkImageLayout final_layout() const { return is_window() ? VK_IMAGE_LAYOUT_PRESENT_SRC_KHR : VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL; }
  VkExtent2D extent() const { return extent_; }
  uint32_t image_count() const { return static_cast<uint32_t>(images_.size()); }
  VkFramebuffer framebuffer(uint32_t index) const { return framebuffers_[index]; }
  VkSemaphore rendered(uint32_t index) const { return rendered_[index]; }

  // Framebuffers for `renderer`'s render pass (again after every recreate()).
  bool make_framebuffers(const Renderer& renderer, std::string* error);
  // The image to draw next: the swapchain's (signalling `acquired`), or offscreen slot `slot`.
  // *stale: the swapchain no longer fits the window; recreate() and try again.
  bool acquire(uint32_t slot, VkSemaphore acquired, uint32_t* index, bool* stale, std::string* error);
  // Presents (window) after `rendered(index)`; *stale as for acquire.
  bool present(uint32_t index, bool* stale, std::string* error);
  // After a resize: a new swapchain at the window's size (waits while the window is minimized).
  bool recreate(const Renderer& renderer, std::string* error);
  // Copies image `index` (in final_layout, its rendering complete) into tightly packed RGBA8.
  bool read_back(uint32_t index, std::vector<uint8_t>* rgba, std::string* error);

 private:
  explicit Target(Gpu& gpu) : gpu_(gpu) {}
  bool make_swapchain(std::string* error);
  void destroy_views();
  Gpu& gpu_;
  GLFWwindow* window_ = nullptr;
  VkSurfaceKHR surface_ = VK_NULL_HANDLE;
  VkSwapchainKHR swapchain_ = VK_NULL_HANDLE;
  VkFormat format_ = VK_FORMAT_UNDEFINED;
  bool readable_ = true;  // the swapchain's images allow TRANSFER_SRC (screenshots)
  VkExtent2D extent_{0, 0};
  std::vector<VkImage> images_;
  std::vector<VkImageView> views_;
  std::vector<Image> offscreen_;
  std::vector<VkFramebuffer> framebuffers_;
  std::vector<VkSemaphore> rendered_;  // per image: its rendering is done, present may read it
};

}  // namespace viewer
