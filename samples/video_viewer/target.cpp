#include "target.h"

#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cstring>

#include "renderer.h"

namespace viewer {

std::unique_ptr<Target> Target::window(Gpu& gpu, GLFWwindow* window, VkSurfaceKHR surface, std::string* error) {
  std::unique_ptr<Target> t(new Target(gpu));
  t->window_ = window;
  t->surface_ = surface;
  if (!t->make_swapchain(error)) return nullptr;
  return t;
}

std::unique_ptr<Target> Target::offscreen(Gpu& gpu, VkExtent2D extent, uint32_t count, std::string* error) {
  std::unique_ptr<Target> t(new Target(gpu));
  t->format_ = VK_FORMAT_R8G8B8A8_UNORM;
  t->extent_ = extent;
  for (uint32_t i = 0; i < count; ++i) {
    t->offscreen_.push_back(gpu.make_image(extent, t->format_,
                                           VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT, error));
    if (!t->offscreen_.back().image) return nullptr;
    t->images_.push_back(t->offscreen_.back().image);
    t->views_.push_back(t->offscreen_.back().view);
  }
  return t;
}

bool Target::make_swapchain(std::string* error) {
  VkSurfaceCapabilitiesKHR caps{};
  vkGetPhysicalDeviceSurfaceCapabilitiesKHR(gpu_.physical, surface_, &caps);
  int width = 0, height = 0;
  glfwGetFramebufferSize(window_, &width, &height);
  extent_ = caps.currentExtent.width != UINT32_MAX
                ? caps.currentExtent
                : VkExtent2D{std::clamp(static_cast<uint32_t>(width), caps.minImageExtent.width, caps.maxImageExtent.width),
                             std::clamp(static_cast<uint32_t>(height), caps.minImageExtent.height, caps.maxImageExtent.height)};
  uint32_t count = 0;
  vkGetPhysicalDeviceSurfaceFormatsKHR(gpu_.physical, surface_, &count, nullptr);
  std::vector<VkSurfaceFormatKHR> formats(count);
  vkGetPhysicalDeviceSurfaceFormatsKHR(gpu_.physical, surface_, &count, formats.data());
  // UNORM, not SRGB: the frame's bytes and the model's texels reach the screen as they are.
  VkSurfaceFormatKHR chosen = formats.empty() ? VkSurfaceFormatKHR{} : formats[0];
  for (const VkSurfaceFormatKHR& f : formats)
    if (f.format == VK_FORMAT_B8G8R8A8_UNORM || f.format == VK_FORMAT_R8G8B8A8_UNORM) {
      chosen = f;
      break;
    }
  if (format_ != VK_FORMAT_UNDEFINED && chosen.format != format_) {
    *error = "the window's surface format changed; the viewer cannot follow it";
    return false;
  }
  format_ = chosen.format;
  VkSwapchainCreateInfoKHR info{VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR};
  info.surface = surface_;
  info.minImageCount = std::max(caps.minImageCount, 3u);
  if (caps.maxImageCount > 0) info.minImageCount = std::min(info.minImageCount, caps.maxImageCount);
  info.imageFormat = chosen.format;
  info.imageColorSpace = chosen.colorSpace;
  info.imageExtent = extent_;
  info.imageArrayLayers = 1;
  info.imageUsage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | (caps.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_SRC_BIT);
  readable_ = (caps.supportedUsageFlags & VK_IMAGE_USAGE_TRANSFER_SRC_BIT) != 0;
  info.imageSharingMode = VK_SHARING_MODE_EXCLUSIVE;
  info.preTransform = caps.currentTransform;
  info.compositeAlpha = (caps.supportedCompositeAlpha & VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR)
                            ? VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR
                            : static_cast<VkCompositeAlphaFlagBitsKHR>(caps.supportedCompositeAlpha & -caps.supportedCompositeAlpha);
  info.presentMode = VK_PRESENT_MODE_FIFO_KHR;  // always there; the display's rate
  info.clipped = VK_TRUE;
  info.oldSwapchain = swapchain_;
  VkSwapchainKHR made = VK_NULL_HANDLE;
  const VkResult r = vkCreateSwapchainKHR(gpu_.device, &info, nullptr, &made);
  if (swapchain_) vkDestroySwapchainKHR(gpu_.device, swapchain_, nullptr);
  swapchain_ = made;
  if (r != VK_SUCCESS) {
    *error = vk_error("vkCreateSwapchainKHR", r);
    return false;
  }
  vkGetSwapchainImagesKHR(gpu_.device, swapchain_, &count, nullptr);
  images_.resize(count);
  vkGetSwapchainImagesKHR(gpu_.device, swapchain_, &count, images_.data());
  for (VkImage image : images_) {
    VkImageViewCreateInfo view{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    view.image = image;
    view.viewType = VK_IMAGE_VIEW_TYPE_2D;
    view.format = format_;
    view.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    views_.push_back(VK_NULL_HANDLE);
    if (VkResult v = vkCreateImageView(gpu_.device, &view, nullptr, &views_.back()); v != VK_SUCCESS) {
      *error = vk_error("vkCreateImageView", v);
      return false;
    }
  }
  return true;
}

void Target::destroy_views() {
  for (VkFramebuffer f : framebuffers_) vkDestroyFramebuffer(gpu_.device, f, nullptr);
  framebuffers_.clear();
  for (VkSemaphore s : rendered_) vkDestroySemaphore(gpu_.device, s, nullptr);
  rendered_.clear();
  if (is_window())
    for (VkImageView v : views_) vkDestroyImageView(gpu_.device, v, nullptr);
  views_.clear();
}

Target::~Target() {
  vkDeviceWaitIdle(gpu_.device);
  destroy_views();
  if (swapchain_) vkDestroySwapchainKHR(gpu_.device, swapchain_, nullptr);
  for (Image& image : offscreen_) gpu_.destroy(image);
}

bool Target::make_framebuffers(const Renderer& renderer, std::string* error) {
  for (VkImageView view : views_) {
    framebuffers_.push_back(renderer.make_framebuffer(view, extent_, error));
    if (!framebuffers_.back()) return false;
    VkSemaphoreCreateInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    rendered_.push_back(VK_NULL_HANDLE);
    vkCreateSemaphore(gpu_.device, &info, nullptr, &rendered_.back());
  }
  return true;
}

bool Target::acquire(uint32_t slot, VkSemaphore acquired, uint32_t* index, bool* stale, std::string* error) {
  *stale = false;
  if (!is_window()) {
    *index = slot;
    return true;
  }
  const VkResult r = vkAcquireNextImageKHR(gpu_.device, swapchain_, UINT64_MAX, acquired, VK_NULL_HANDLE, index);
  if (r == VK_ERROR_OUT_OF_DATE_KHR) {
    *stale = true;
    return true;
  }
  if (r != VK_SUCCESS && r != VK_SUBOPTIMAL_KHR) {
    *error = vk_error("vkAcquireNextImageKHR", r);
    return false;
  }
  return true;
}

bool Target::present(uint32_t index, bool* stale, std::string* error) {
  *stale = false;
  if (!is_window()) return true;
  VkPresentInfoKHR info{VK_STRUCTURE_TYPE_PRESENT_INFO_KHR};
  info.waitSemaphoreCount = 1;
  info.pWaitSemaphores = &rendered_[index];
  info.swapchainCount = 1;
  info.pSwapchains = &swapchain_;
  info.pImageIndices = &index;
  const VkResult r = vkQueuePresentKHR(gpu_.queue, &info);
  if (r == VK_ERROR_OUT_OF_DATE_KHR || r == VK_SUBOPTIMAL_KHR) {
    *stale = true;
    return true;
  }
  if (r != VK_SUCCESS) {
    *error = vk_error("vkQueuePresentKHR", r);
    return false;
  }
  return true;
}

bool Target::recreate(const Renderer& renderer, std::string* error) {
  int width = 0, height = 0;
  glfwGetFramebufferSize(window_, &width, &height);
  while ((width == 0 || height == 0) && !glfwWindowShouldClose(window_)) {  // minimized: nothing to draw into
    glfwWaitEvents();
    glfwGetFramebufferSize(window_, &width, &height);
  }
  vkDeviceWaitIdle(gpu_.device);
  destroy_views();
  return make_swapchain(error) && make_framebuffers(renderer, error);
}

bool Target::read_back(uint32_t index, std::vector<uint8_t>* rgba, std::string* error) {
  if (is_window() && !readable_) {
    *error = "this window system's swapchain images cannot be copied from; --offscreen takes screenshots";
    return false;
  }
  const VkDeviceSize bytes = VkDeviceSize{extent_.width} * extent_.height * 4;
  Buffer staging = gpu_.make_buffer(bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, true, error);
  if (!staging.buffer) return false;
  const VkImage image = images_[index];
  const VkImageLayout layout = final_layout();
  const bool ok = gpu_.run_once(
      [&](VkCommandBuffer cb) {
        image_barrier(cb, image, layout, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                      VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT);
        VkBufferImageCopy region{};
        region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        region.imageExtent = {extent_.width, extent_.height, 1};
        vkCmdCopyImageToBuffer(cb, image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, staging.buffer, 1, &region);
        image_barrier(cb, image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, layout, VK_PIPELINE_STAGE_TRANSFER_BIT,
                      VK_ACCESS_TRANSFER_READ_BIT, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, 0);
        VkBufferMemoryBarrier host{VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
        host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
        host.srcQueueFamilyIndex = host.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        host.buffer = staging.buffer;
        host.size = VK_WHOLE_SIZE;
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 0, nullptr, 1, &host, 0, nullptr);
      },
      error);
  if (ok) {
    rgba->resize(bytes);
    std::memcpy(rgba->data(), staging.mapped, bytes);
    if (format_ == VK_FORMAT_B8G8R8A8_UNORM || format_ == VK_FORMAT_B8G8R8A8_SRGB)
      for (std::size_t i = 0; i < rgba->size(); i += 4) std::swap((*rgba)[i], (*rgba)[i + 2]);
  }
  gpu_.destroy(staging);
  return ok;
}

}  // namespace viewer
