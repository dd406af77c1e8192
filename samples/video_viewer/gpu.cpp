#include "gpu.h"

#include <cstdio>
#include <cstring>

namespace viewer {
namespace {

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
                                          const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    ++*static_cast<uint32_t*>(user);
    std::fprintf(stderr, "validation: %s\n", data->pMessage);
  }
  return VK_FALSE;
}

const char* result_name(VkResult r) {
  switch (r) {
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT (install vulkan-validationlayers)";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_SURFACE_LOST_KHR: return "VK_ERROR_SURFACE_LOST_KHR";
    case VK_ERROR_OUT_OF_DATE_KHR: return "VK_ERROR_OUT_OF_DATE_KHR";
    default: return "a Vulkan error";
  }
}

bool has_extension(VkPhysicalDevice physical, const char* name) {
  uint32_t count = 0;
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> list(count);
  vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, list.data());
  for (const VkExtensionProperties& e : list)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

}  // namespace

std::string vk_error(const char* call, VkResult result) {
  return std::string(call) + " failed: " + result_name(result) + " (" + std::to_string(static_cast<int>(result)) + ")";
}

std::unique_ptr<Gpu> Gpu::create(const GpuOptions& options, std::string* error) {
  std::unique_ptr<Gpu> gpu(new Gpu());
  gpu->options_ = options;
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "vkfuse video_viewer";
  app.apiVersion = VK_API_VERSION_1_2;
  std::vector<const char*> extensions;
  for (const std::string& e : options.instance_extensions) extensions.push_back(e.c_str());
  const char* layer = "VK_LAYER_KHRONOS_validation";
  VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = &sync;
  VkDebugUtilsMessengerCreateInfoEXT messenger{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
  messenger.pfnUserCallback = on_message;
  messenger.pUserData = gpu->messages_.get();
  features.pNext = &messenger;
  if (options.validation) extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pNext = options.validation ? &features : nullptr;
  info.pApplicationInfo = &app;
  info.enabledLayerCount = options.validation ? 1 : 0;
  info.ppEnabledLayerNames = &layer;
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  if (VkResult r = vkCreateInstance(&info, nullptr, &gpu->instance); r != VK_SUCCESS) {
    *error = vk_error("vkCreateInstance", r);
    return nullptr;
  }
  if (options.validation) {
    auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(gpu->instance, "vkCreateDebugUtilsMessengerEXT"));
    if (create) create(gpu->instance, &messenger, nullptr, &gpu->messenger_);
  }
  return gpu;
}

bool Gpu::create_device(VkSurfaceKHR surface, std::string* error) {
  uint32_t count = 0;
  VkResult r = vkEnumeratePhysicalDevices(instance, &count, nullptr);
  if (r != VK_SUCCESS || count == 0) {
    *error = "no Vulkan device (on a machine without a GPU, install mesa-vulkan-drivers for lavapipe)";
    return false;
  }
  std::vector<VkPhysicalDevice> physicals(count);
  vkEnumeratePhysicalDevices(instance, &count, physicals.data());
  if (options_.device_index >= static_cast<int>(count)) {
    *error = "--device " + std::to_string(options_.device_index) + ": there are " + std::to_string(count) + " devices";
    return false;
  }
  // A queue family that does graphics and compute (vkfuse's dispatches and the draw share one queue,
  // so a frame is one submit) and, with a window, presents to its surface.
  for (uint32_t d = 0; d < count && physical == VK_NULL_HANDLE; ++d) {
    if (options_.device_index >= 0 && d != static_cast<uint32_t>(options_.device_index)) continue;
    if (options_.presentation && !has_extension(physicals[d], VK_KHR_SWAPCHAIN_EXTENSION_NAME)) continue;
    uint32_t families = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physicals[d], &families, nullptr);
    std::vector<VkQueueFamilyProperties> props(families);
    vkGetPhysicalDeviceQueueFamilyProperties(physicals[d], &families, props.data());
    for (uint32_t f = 0; f < families; ++f) {
      const VkQueueFlags need = VK_QUEUE_GRAPHICS_BIT | VK_QUEUE_COMPUTE_BIT;
      if ((props[f].queueFlags & need) != need) continue;
      VkBool32 present = VK_TRUE;
      if (surface != VK_NULL_HANDLE) vkGetPhysicalDeviceSurfaceSupportKHR(physicals[d], f, surface, &present);
      if (!present) continue;
      physical = physicals[d];
      family = f;
      break;
    }
  }
  if (physical == VK_NULL_HANDLE) {
    *error = surface != VK_NULL_HANDLE ? "no Vulkan device can draw and present to this window"
                                       : "no Vulkan device has a queue that does graphics and compute";
    return false;
  }
  vkGetPhysicalDeviceProperties(physical, &properties);

  // What vkfuse can use, where the device has it: 16/8-bit storage and arithmetic (fp16 models, bool
  // masks), timeline semaphores, and NVIDIA's cooperative matrices with the memory model they need.
  VkPhysicalDeviceVulkan11Features s11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features s12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 supported{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  supported.pNext = &s11;
  s11.pNext = &s12;
  vkGetPhysicalDeviceFeatures2(physical, &supported);
  f11_.storageBuffer16BitAccess = s11.storageBuffer16BitAccess;
  f12_.storageBuffer8BitAccess = s12.storageBuffer8BitAccess;
  f12_.shaderFloat16 = s12.shaderFloat16;
  f12_.shaderInt8 = s12.shaderInt8;
  f12_.timelineSemaphore = s12.timelineSemaphore;
  features_.features.shaderInt64 = supported.features.shaderInt64;
  fp16 = s11.storageBuffer16BitAccess == VK_TRUE;
  features_.pNext = &f11_;
  f11_.pNext = &f12_;
  if (options_.presentation) extensions_.push_back(VK_KHR_SWAPCHAIN_EXTENSION_NAME);
  if (has_extension(physical, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME) && s12.vulkanMemoryModel &&
      s12.vulkanMemoryModelDeviceScope) {
    coopmat_.cooperativeMatrix = VK_TRUE;
    f12_.vulkanMemoryModel = f12_.vulkanMemoryModelDeviceScope = VK_TRUE;
    f12_.pNext = &coopmat_;
    extensions_.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  }
  queue_info_.queueFamilyIndex = family;
  queue_info_.queueCount = 1;
  queue_info_.pQueuePriorities = &priority_;
  device_info = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  device_info.pNext = &features_;
  device_info.queueCreateInfoCount = 1;
  device_info.pQueueCreateInfos = &queue_info_;
  device_info.enabledExtensionCount = static_cast<uint32_t>(extensions_.size());
  device_info.ppEnabledExtensionNames = extensions_.data();
  if (r = vkCreateDevice(physical, &device_info, nullptr, &device); r != VK_SUCCESS) {
    *error = vk_error("vkCreateDevice", r);
    return false;
  }
  vkGetDeviceQueue(device, family, 0, &queue);
  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool_info.queueFamilyIndex = family;
  if (r = vkCreateCommandPool(device, &pool_info, nullptr, &pool); r != VK_SUCCESS) {
    *error = vk_error("vkCreateCommandPool", r);
    return false;
  }
  return true;
}

void image_barrier(VkCommandBuffer cb, VkImage image, VkImageLayout from, VkImageLayout to, VkPipelineStageFlags src_stage,
                   VkAccessFlags src, VkPipelineStageFlags dst_stage, VkAccessFlags dst) {
  VkImageMemoryBarrier b{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
  b.srcAccessMask = src;
  b.dstAccessMask = dst;
  b.oldLayout = from;
  b.newLayout = to;
  b.srcQueueFamilyIndex = b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.image = image;
  b.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 0, nullptr, 0, nullptr, 1, &b);
}

Gpu::~Gpu() {
  if (device) {
    vkDeviceWaitIdle(device);
    if (pool) vkDestroyCommandPool(device, pool, nullptr);
    vkDestroyDevice(device, nullptr);
  }
  if (messenger_) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance, messenger_, nullptr);
  }
  if (instance) vkDestroyInstance(instance, nullptr);
}

bool Gpu::find_memory(uint32_t bits, VkMemoryPropertyFlags want, uint32_t* type) const {
  VkPhysicalDeviceMemoryProperties mem{};
  vkGetPhysicalDeviceMemoryProperties(physical, &mem);
  for (uint32_t t = 0; t < mem.memoryTypeCount; ++t)
    if ((bits >> t & 1u) && (mem.memoryTypes[t].propertyFlags & want) == want) {
      *type = t;
      return true;
    }
  return false;
}

Buffer Gpu::make_buffer(VkDeviceSize size, VkBufferUsageFlags usage, bool host_visible, std::string* error) {
  Buffer b;
  b.size = size;
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = size;
  info.usage = usage;
  if (VkResult r = vkCreateBuffer(device, &info, nullptr, &b.buffer); r != VK_SUCCESS) {
    *error = vk_error("vkCreateBuffer", r);
    return {};
  }
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(device, b.buffer, &req);
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  const VkMemoryPropertyFlags want = host_visible ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                                                  : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  VkResult r = VK_ERROR_OUT_OF_DEVICE_MEMORY;
  if (find_memory(req.memoryTypeBits, want, &alloc.memoryTypeIndex)) r = vkAllocateMemory(device, &alloc, nullptr, &b.memory);
  if (r == VK_SUCCESS) r = vkBindBufferMemory(device, b.buffer, b.memory, 0);
  if (r == VK_SUCCESS && host_visible) r = vkMapMemory(device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped);
  if (r != VK_SUCCESS) {
    *error = vk_error("allocating a buffer", r) + " (" + std::to_string(size) + " bytes)";
    destroy(b);
    return {};
  }
  return b;
}

Image Gpu::make_image(VkExtent2D extent, VkFormat format, VkImageUsageFlags usage, std::string* error) {
  Image out;
  out.format = format;
  out.extent = extent;
  VkImageCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  info.imageType = VK_IMAGE_TYPE_2D;
  info.format = format;
  info.extent = {extent.width, extent.height, 1};
  info.mipLevels = info.arrayLayers = 1;
  info.samples = VK_SAMPLE_COUNT_1_BIT;
  info.tiling = VK_IMAGE_TILING_OPTIMAL;
  info.usage = usage;
  VkResult r = vkCreateImage(device, &info, nullptr, &out.image);
  if (r == VK_SUCCESS) {
    VkMemoryRequirements req{};
    vkGetImageMemoryRequirements(device, out.image, &req);
    VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    alloc.allocationSize = req.size;
    r = find_memory(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, &alloc.memoryTypeIndex)
            ? vkAllocateMemory(device, &alloc, nullptr, &out.memory)
            : VK_ERROR_OUT_OF_DEVICE_MEMORY;
  }
  if (r == VK_SUCCESS) r = vkBindImageMemory(device, out.image, out.memory, 0);
  if (r == VK_SUCCESS) {
    VkImageViewCreateInfo view{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    view.image = out.image;
    view.viewType = VK_IMAGE_VIEW_TYPE_2D;
    view.format = format;
    view.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    r = vkCreateImageView(device, &view, nullptr, &out.view);
  }
  if (r != VK_SUCCESS) {
    *error = vk_error("creating an image", r) + " (" + std::to_string(extent.width) + "x" + std::to_string(extent.height) + ")";
    destroy(out);
    return {};
  }
  return out;
}

void Gpu::destroy(Buffer& b) {
  if (b.buffer) vkDestroyBuffer(device, b.buffer, nullptr);
  if (b.memory) vkFreeMemory(device, b.memory, nullptr);
  b = {};
}

void Gpu::destroy(Image& image) {
  if (image.view) vkDestroyImageView(device, image.view, nullptr);
  if (image.image) vkDestroyImage(device, image.image, nullptr);
  if (image.memory) vkFreeMemory(device, image.memory, nullptr);
  image = {};
}

bool Gpu::run_once(const std::function<void(VkCommandBuffer)>& record, std::string* error) {
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VkResult r = vkAllocateCommandBuffers(device, &alloc, &cb);
  if (r != VK_SUCCESS) {
    *error = vk_error("vkAllocateCommandBuffers", r);
    return false;
  }
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vkBeginCommandBuffer(cb, &begin);
  record(cb);
  vkEndCommandBuffer(cb);
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cb;
  r = vkQueueSubmit(queue, 1, &submit, VK_NULL_HANDLE);
  if (r == VK_SUCCESS) r = vkQueueWaitIdle(queue);
  vkFreeCommandBuffers(device, pool, 1, &cb);
  if (r != VK_SUCCESS) *error = vk_error("vkQueueSubmit", r);
  return r == VK_SUCCESS;
}

}  // namespace viewer
