#include "interop/app_vulkan.h"

#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace vkfuse::testing {

struct AppVulkan::Counter {
  std::atomic<uint32_t> count{0};
  std::mutex mutex;
  std::string first;
};

namespace {

VKAPI_ATTR VkBool32 VKAPI_CALL count_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                             VkDebugUtilsMessageTypeFlagsEXT, const VkDebugUtilsMessengerCallbackDataEXT* data,
                                             void* user) {
  if (severity < VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) return VK_FALSE;
  auto* counter = static_cast<AppVulkan::Counter*>(user);
  std::lock_guard<std::mutex> lock(counter->mutex);
  if (counter->count++ == 0) counter->first = data->pMessage ? data->pMessage : "";
  MESSAGE("validation: " << std::string(data->pMessage ? data->pMessage : ""));
  return VK_FALSE;
}

#define APP_VK(call) REQUIRE_MESSAGE((call) == VK_SUCCESS, #call)

}  // namespace

AppVulkan::AppVulkan(Options options) : counter_(new Counter) {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "vkfuse interop test";
  app.apiVersion = VK_API_VERSION_1_2;
  const char* layers[] = {"VK_LAYER_KHRONOS_validation"};
  const char* extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  // Synchronization validation on top of the core checks: a missing or wrong barrier is a message.
  VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = enables;
  VkDebugUtilsMessengerCreateInfoEXT messenger{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
  messenger.pfnUserCallback = count_message;
  messenger.pUserData = counter_;
  features.pNext = &messenger;
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.pNext = &features;
  info.pApplicationInfo = &app;
  info.enabledLayerCount = 1;
  info.ppEnabledLayerNames = layers;
  info.enabledExtensionCount = 1;
  info.ppEnabledExtensionNames = extensions;
  APP_VK(vkCreateInstance(&info, nullptr, &instance));
  auto create_messenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
      vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
  REQUIRE(static_cast<bool>(create_messenger));
  APP_VK(create_messenger(instance, &messenger, nullptr, &messenger_));

  uint32_t count = 0;
  APP_VK(vkEnumeratePhysicalDevices(instance, &count, nullptr));
  REQUIRE(count > 0);
  std::vector<VkPhysicalDevice> physicals(count);
  APP_VK(vkEnumeratePhysicalDevices(instance, &count, physicals.data()));
  physical = physicals[0];
  uint32_t families = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, nullptr);
  std::vector<VkQueueFamilyProperties> props(families);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, props.data());
  for (family = 0; family < families; ++family)
    if (props[family].queueFlags & VK_QUEUE_COMPUTE_BIT) break;
  REQUIRE(family < families);

  VkPhysicalDeviceVulkan11Features s11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features s12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  s11.pNext = &s12;
  VkPhysicalDeviceFeatures2 supported{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  supported.pNext = &s11;
  vkGetPhysicalDeviceFeatures2(physical, &supported);
  has_storage16 = options.storage16 && s11.storageBuffer16BitAccess;
  has_storage8 = options.storage8 && s12.storageBuffer8BitAccess;
  has_timeline = options.timeline && s12.timelineSemaphore;

  f11_ = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  f12_ = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  features_ = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  f11_.storageBuffer16BitAccess = has_storage16;
  f12_.storageBuffer8BitAccess = has_storage8;
  f12_.timelineSemaphore = has_timeline;
  features_.pNext = &f11_;
  f11_.pNext = &f12_;
  queue_info_ = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info_.queueFamilyIndex = family;
  queue_info_.queueCount = 1;
  queue_info_.pQueuePriorities = &priority_;
  create_info = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  create_info.pNext = &features_;
  create_info.queueCreateInfoCount = 1;
  create_info.pQueueCreateInfos = &queue_info_;
  APP_VK(vkCreateDevice(physical, &create_info, nullptr, &device));
  vkGetDeviceQueue(device, family, 0, &queue);

  VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool.queueFamilyIndex = family;
  APP_VK(vkCreateCommandPool(device, &pool, nullptr, &pool_));
}

AppVulkan::~AppVulkan() {
  if (device) {
    vkDeviceWaitIdle(device);
    for (VkSemaphore s : semaphores_) vkDestroySemaphore(device, s, nullptr);
    for (VkFence f : fences_) vkDestroyFence(device, f, nullptr);
    vkDestroyCommandPool(device, pool_, nullptr);
    vkDestroyDevice(device, nullptr);
  }
  if (messenger_) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
    destroy(instance, messenger_, nullptr);
  }
  if (instance) vkDestroyInstance(instance, nullptr);
  delete counter_;
}

AppBuffer AppVulkan::make_buffer(VkDeviceSize size, VkBufferUsageFlags usage, bool host_visible) {
  AppBuffer b;
  b.size = size;
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = size;
  info.usage = usage;
  APP_VK(vkCreateBuffer(device, &info, nullptr, &b.buffer));
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(device, b.buffer, &req);
  VkPhysicalDeviceMemoryProperties mem{};
  vkGetPhysicalDeviceMemoryProperties(physical, &mem);
  const VkMemoryPropertyFlags want = host_visible
                                         ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                                         : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  uint32_t type = 0;
  for (; type < mem.memoryTypeCount; ++type)
    if ((req.memoryTypeBits & (1u << type)) && (mem.memoryTypes[type].propertyFlags & want) == want) break;
  REQUIRE(type < mem.memoryTypeCount);
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = type;
  APP_VK(vkAllocateMemory(device, &alloc, nullptr, &b.memory));
  APP_VK(vkBindBufferMemory(device, b.buffer, b.memory, 0));
  if (host_visible) APP_VK(vkMapMemory(device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped));
  return b;
}

void AppVulkan::destroy(AppBuffer& b) {
  vkDestroyBuffer(device, b.buffer, nullptr);
  vkFreeMemory(device, b.memory, nullptr);
  b = {};
}

VkCommandBuffer AppVulkan::begin_commands() {
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = pool_;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  APP_VK(vkAllocateCommandBuffers(device, &alloc, &cb));
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  APP_VK(vkBeginCommandBuffer(cb, &begin));
  return cb;
}

VkSemaphore AppVulkan::make_semaphore(bool timeline) {
  VkSemaphoreTypeCreateInfo type{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  VkSemaphoreCreateInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
  if (timeline) info.pNext = &type;
  VkSemaphore s = VK_NULL_HANDLE;
  APP_VK(vkCreateSemaphore(device, &info, nullptr, &s));
  semaphores_.push_back(s);
  return s;
}

void AppVulkan::submit(VkCommandBuffer cb, const std::vector<VkSemaphore>& waits, const std::vector<uint64_t>& wait_values,
                       const std::vector<VkSemaphore>& signals, const std::vector<uint64_t>& signal_values, bool wait) {
  if (cb) APP_VK(vkEndCommandBuffer(cb));
  std::vector<VkPipelineStageFlags> stages(waits.size(), VK_PIPELINE_STAGE_ALL_COMMANDS_BIT);
  VkTimelineSemaphoreSubmitInfo values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  values.waitSemaphoreValueCount = static_cast<uint32_t>(wait_values.size());
  values.pWaitSemaphoreValues = wait_values.data();
  values.signalSemaphoreValueCount = static_cast<uint32_t>(signal_values.size());
  values.pSignalSemaphoreValues = signal_values.data();
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  if (has_timeline) submit.pNext = &values;
  submit.waitSemaphoreCount = static_cast<uint32_t>(waits.size());
  submit.pWaitSemaphores = waits.data();
  submit.pWaitDstStageMask = stages.data();
  submit.commandBufferCount = cb ? 1 : 0;
  submit.pCommandBuffers = &cb;
  submit.signalSemaphoreCount = static_cast<uint32_t>(signals.size());
  submit.pSignalSemaphores = signals.data();
  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  APP_VK(vkCreateFence(device, &fence_info, nullptr, &fence));
  fences_.push_back(fence);
  APP_VK(vkQueueSubmit(queue, 1, &submit, fence));
  if (wait) APP_VK(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX));
}

void AppVulkan::wait_idle() { APP_VK(vkDeviceWaitIdle(device)); }

uint32_t AppVulkan::messages() const { return counter_->count.load(); }
std::string AppVulkan::first_message() const {
  std::lock_guard<std::mutex> lock(counter_->mutex);
  return counter_->first;
}

}  // namespace vkfuse::testing
