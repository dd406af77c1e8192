#include "backend/device.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "backend/debug.h"
#include "backend/enabled_features.h"
#include "backend/log.h"

namespace vkfuse {
namespace {

// Spelled out: the header puts its name macro behind VK_ENABLE_BETA_EXTENSIONS.
constexpr const char* kPortabilitySubset = "VK_KHR_portability_subset";

Result<std::vector<VkPhysicalDevice>> physical_devices(VkInstance instance) {
  uint32_t count = 0;
  if (const VkResult counted = vkEnumeratePhysicalDevices(instance, &count, nullptr); counted != VK_SUCCESS)
    return enumeration_failure(counted);
  std::vector<VkPhysicalDevice> devices(count);
  // VK_INCOMPLETE cannot happen here: nothing is added between the two calls of one instance.
  if (const VkResult listed = vkEnumeratePhysicalDevices(instance, &count, devices.data()); listed != VK_SUCCESS)
    return enumeration_failure(listed);
  devices.resize(count);
  return devices;
}

Result<std::vector<DeviceCaps>> enumerate_caps(VkInstance instance, uint32_t instance_api_version) {
  VKFUSE_ASSIGN_OR_RETURN(std::vector<VkPhysicalDevice> devices, physical_devices(instance));
  std::vector<DeviceCaps> all;
  for (uint32_t i = 0; i < devices.size(); ++i) {
    Result<DeviceCaps> caps = query_device_caps(devices[i], i, instance_api_version, instance);
    if (caps.ok()) {
      all.push_back(std::move(caps).value());
    } else if (caps.status().code() == ErrorCode::kUnsupported) {
      log_message(LogLevel::kWarn, "skipping Vulkan " + caps.status().message());
    } else {
      return caps.status();
    }
  }
  return all;
}

int type_rank(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 4;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 3;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 1;
    default: return 0;
  }
}

std::string to_lower(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::string describe(const std::vector<DeviceCaps>& devices) {
  std::string list;
  for (const DeviceCaps& caps : devices) {
    list += "\n  " + std::to_string(caps.index) + ": " + caps.name + " (" + device_type_name(caps.type) + ", Vulkan " +
            version_to_string(caps.api_version) + ")";
  }
  return list;
}

// Narrows caps to what is supported AND enabled, and to the queue family actually used.
Status apply_queue_family(VkPhysicalDevice physical, uint32_t family, DeviceCaps& caps) {
  uint32_t count = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &count, families.data());
  if (family >= count || !(families[family].queueFlags & VK_QUEUE_COMPUTE_BIT)) {
    return make_error(ErrorCode::kInvalidArgument, "queue family " + std::to_string(family) + " of " + caps.name +
                                                       " does not exist or has no compute support");
  }
  caps.compute_queue_family = family;
  caps.timestamp_valid_bits = families[family].timestampValidBits;
  caps.timestamps = caps.timestamp_valid_bits > 0 && caps.timestamp_period_ns > 0.0f;
  return {};
}

bool has_device_extension(VkPhysicalDevice physical, const char* name) {
  uint32_t count = 0;
  if (vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> extensions(count);
  if (vkEnumerateDeviceExtensionProperties(physical, nullptr, &count, extensions.data()) != VK_SUCCESS) return false;
  return std::any_of(extensions.begin(), extensions.begin() + count,
                     [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

VkBool32 supports_descriptor_indexing(VkPhysicalDevice physical) {
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &f12;
  vkGetPhysicalDeviceFeatures2(physical, &features);
  if (!f12.descriptorIndexing)
    log_message(LogLevel::kWarn, "GPU-assisted validation: this device has no descriptorIndexing, so the layer "
                                 "cannot check buffer ranges");
  return f12.descriptorIndexing;
}

}  // namespace

Status enumeration_failure(VkResult result) {
  std::string message = "listing the Vulkan devices failed: vkEnumeratePhysicalDevices returned " + vk_result_text(result);
  // Often a driver that finds none of its hardware (Mesa's Intel and AMD drivers on a machine without them).
  if (result == VK_ERROR_INITIALIZATION_FAILED)
    message += " (a Vulkan driver is installed but failed to start or found none of its hardware; "
               "VK_LOADER_DEBUG=error,warn names it)";
  ErrorCode code = vk_result_code(result);
  return make_error(code == ErrorCode::kOk ? ErrorCode::kVulkan : code, message);
}

Result<std::vector<DeviceCaps>> enumerate_devices(const Instance& instance) {
  return enumerate_caps(instance.handle(), instance.api_version());
}

Result<DeviceCaps> select_device(const Instance& instance, std::string_view selector) {
  std::string_view source = "device selector ";
  if (selector.empty()) {
    const char* env = std::getenv("VKFUSE_DEVICE");
    if (env != nullptr && env[0] != '\0') {
      selector = env;
      source = "VKFUSE_DEVICE=";
    }
  }
  VKFUSE_ASSIGN_OR_RETURN(std::vector<DeviceCaps> devices, enumerate_devices(instance));
  if (devices.empty()) return make_error(ErrorCode::kNotFound, std::string(no_vulkan_device_hint()));

  if (selector.empty()) {
    // Strictly greater: of equally ranked devices the first one wins.
    auto best = devices.begin();
    for (auto d = devices.begin(); d != devices.end(); ++d) {
      if (type_rank(d->type) > type_rank(best->type)) best = d;
    }
    return *best;
  }
  if (all_digits(selector)) {
    for (const DeviceCaps& caps : devices) {
      if (std::to_string(caps.index) == std::string(selector)) return caps;
    }
  } else {
    const std::string wanted = to_lower(selector);
    for (const DeviceCaps& caps : devices) {
      if (to_lower(caps.name).find(wanted) != std::string::npos) return caps;
    }
  }
  return make_error(ErrorCode::kNotFound, std::string(source) + "\"" + std::string(selector) +
                                              "\" matches no Vulkan device (an index or part of a name). Devices:" +
                                              describe(devices));
}

Result<OwnedDevice> OwnedDevice::create(const InstanceOptions& options, std::string_view selector) {
  VKFUSE_ASSIGN_OR_RETURN(Instance instance, Instance::create(options));
  VKFUSE_ASSIGN_OR_RETURN(DeviceCaps caps, select_device(instance, selector));
  VKFUSE_ASSIGN_OR_RETURN(std::vector<VkPhysicalDevice> physicals, physical_devices(instance.handle()));
  if (caps.index >= physicals.size()) return make_error(ErrorCode::kInternal, "device list changed during selection");
  VkPhysicalDevice physical = physicals[caps.index];

  OwnedDevice owned(std::move(instance));
  const bool at_1_2 = usable_at_vulkan_1_2(owned.instance_.api_version(), caps.api_version);

  // Features: everything vkfuse can use that the device has. The query already decided what is supported.
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.features.shaderInt64 = caps.shader_int64;
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDevice16BitStorageFeatures storage16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  VkPhysicalDevice8BitStorageFeaturesKHR storage8{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES_KHR};
  VkPhysicalDeviceShaderFloat16Int8FeaturesKHR float16_int8{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coopmat{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executable{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  std::vector<const char*> extensions;
  // Pipeline statistics are a debugging aid: capturing them may bypass a driver's caches.
  caps.pipeline_statistics = caps.pipeline_statistics && at_1_2 && log_enabled(LogLevel::kDebug);
  if (at_1_2) {
    // The aggregate structs; the per-feature structs must not be chained next to them.
    f11.storageBuffer16BitAccess = caps.storage_buffer_16bit;
    f12.storageBuffer8BitAccess = caps.storage_buffer_8bit;
    f12.shaderFloat16 = caps.shader_float16;
    f12.shaderInt8 = caps.shader_int8;
    f12.timelineSemaphore = caps.timeline_semaphore;
    // GPU-assisted validation checks buffer ranges only on a device with descriptor indexing enabled.
    if (owned.instance_.gpu_assisted_enabled()) f12.descriptorIndexing = supports_descriptor_indexing(physical);
    features.pNext = &f11;
    f11.pNext = &f12;
    if (caps.coopmat_nv_f16) {  // roots/gemm_coopmat.glsl: the extension, its feature, the Vulkan memory model
      coopmat.cooperativeMatrix = VK_TRUE;
      f12.vulkanMemoryModel = VK_TRUE;
      f12.vulkanMemoryModelDeviceScope = VK_TRUE;  // split K's Device-scope barriers, under the memory model
      coopmat.pNext = f12.pNext;
      f12.pNext = &coopmat;
      extensions.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    }
    if (caps.pipeline_statistics) {
      executable.pipelineExecutableInfo = VK_TRUE;
      executable.pNext = f12.pNext;
      f12.pNext = &executable;
      extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    }
  } else {
    caps.timeline_semaphore = false;  // used only as the Vulkan 1.2 core feature
    // Vulkan 1.1: 16-bit storage is core; 8-bit storage and float16/int8 are extensions to enable.
    storage16.storageBuffer16BitAccess = caps.storage_buffer_16bit;
    features.pNext = &storage16;
    void** tail = &storage16.pNext;
    if (caps.storage_buffer_8bit) {
      storage8.storageBuffer8BitAccess = VK_TRUE;
      extensions.push_back(VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
      *tail = &storage8;
      tail = &storage8.pNext;
    }
    if (caps.shader_float16 || caps.shader_int8) {
      float16_int8.shaderFloat16 = caps.shader_float16;
      float16_int8.shaderInt8 = caps.shader_int8;
      extensions.push_back(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
      *tail = &float16_int8;
    }
    // Float controls (an extension with properties only) are core at 1.2.
    if (caps.preserve_inf_nan_f32 || caps.preserve_inf_nan_f16)
      extensions.push_back(VK_KHR_SHADER_FLOAT_CONTROLS_EXTENSION_NAME);
  }
  // A portability driver (MoltenVK) requires the application to acknowledge the subset.
  if (has_device_extension(physical, kPortabilitySubset)) extensions.push_back(kPortabilitySubset);

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = caps.compute_queue_family;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;

  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  info.pNext = &features;
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &queue_info;
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();

  VkDevice device = VK_NULL_HANDLE;
  Status created = [&]() -> Status {
    VKFUSE_CHECK_VK(vkCreateDevice(physical, &info, nullptr, &device));
    return {};
  }();
  if (!created.ok()) return created.with_context("creating a device on " + caps.name);
  // Waiting first makes destruction safe even if a submit timed out and is still running.
  owned.device_ = UniqueHandle<VkDevice>(device, [](VkDevice d) {
    vkDeviceWaitIdle(d);  // result ignored: a lost device is destroyed all the same
    vkDestroyDevice(d, nullptr);
  });

  DeviceContext& ctx = owned.context_;
  ctx.instance = owned.instance_.handle();
  ctx.physical = physical;
  ctx.device = device;
  ctx.queue_family = caps.compute_queue_family;
  vkGetDeviceQueue(device, ctx.queue_family, 0, &ctx.queue);
  caps.cooperative_matrix = caps.coopmat_nv_f16;  // enabled only where roots/gemm_coopmat.glsl can use it
  ctx.caps = std::move(caps);
  ctx.debug_utils = owned.instance_.debug_utils_enabled();
  ctx.queue_lock.user = owned.queue_mutex_.get();
  ctx.queue_lock.lock = [](void* m) { static_cast<std::mutex*>(m)->lock(); };
  ctx.queue_lock.unlock = [](void* m) { static_cast<std::mutex*>(m)->unlock(); };
  set_debug_name(ctx, VK_OBJECT_TYPE_DEVICE, debug_handle(device), "vkfuse device");
  set_debug_name(ctx, VK_OBJECT_TYPE_QUEUE, debug_handle(ctx.queue), "vkfuse compute queue");
  log_message(LogLevel::kInfo, "using Vulkan device " + std::to_string(ctx.caps.index) + ": " + ctx.caps.name);
  return owned;
}

OwnedDevice& OwnedDevice::operator=(OwnedDevice&& other) noexcept {
  if (this != &other) {
    // A member-wise assignment would destroy the instance before the device.
    std::destroy_at(this);
    std::construct_at(this, std::move(other));
  }
  return *this;
}

VkResult submit_to_queue(const DeviceContext& ctx, const VkSubmitInfo& submit, VkFence fence) {
  const QueueLock& lock = ctx.queue_lock;
  if (lock.lock) lock.lock(lock.user);
  const VkResult result = vkQueueSubmit(ctx.queue, 1, &submit, fence);
  if (lock.unlock) lock.unlock(lock.user);
  return result;
}

Result<BorrowedDevice> BorrowedDevice::wrap(const ExternalDevice& external) {
  if (external.instance == VK_NULL_HANDLE || external.physical_device == VK_NULL_HANDLE ||
      external.device == VK_NULL_HANDLE || external.queue == VK_NULL_HANDLE) {
    return make_error(ErrorCode::kInvalidArgument, "Context::wrap: instance, physical device, device and queue must all "
                                                   "be valid handles");
  }
  if ((external.queue_lock.lock == nullptr) != (external.queue_lock.unlock == nullptr))
    return make_error(ErrorCode::kInvalidArgument, "Context::wrap: QueueLock needs both lock and unlock (or neither)");
  if (external.get_instance_proc_addr != nullptr) {
    // vkfuse calls Vulkan through the loader it links; the application's handles work there only when
    // its entry point leads to that same loader (volk and other loaders over libvulkan do).
    const PFN_vkVoidFunction theirs = external.get_instance_proc_addr(external.instance, "vkGetDeviceProcAddr");
    const PFN_vkVoidFunction ours = vkGetInstanceProcAddr(external.instance, "vkGetDeviceProcAddr");
    if (theirs != ours)
      return make_error(ErrorCode::kUnsupported,
                        "Context::wrap: the application's vkGetInstanceProcAddr resolves a different vkGetDeviceProcAddr "
                        "than the Vulkan loader vkfuse is linked to (libvulkan); load Vulkan through that loader (volk "
                        "does by default) so that both use the same dispatch");
  }
  // The index only labels the device; find it so that logs and caches agree with OwnedDevice.
  VKFUSE_ASSIGN_OR_RETURN(std::vector<VkPhysicalDevice> physicals, physical_devices(external.instance));
  uint32_t index = 0;
  auto found = std::find(physicals.begin(), physicals.end(), external.physical_device);
  if (found != physicals.end()) index = static_cast<uint32_t>(found - physicals.begin());

  VkPhysicalDeviceProperties base{};
  vkGetPhysicalDeviceProperties(external.physical_device, &base);
  const uint32_t instance_version = std::max<uint32_t>(external.instance_api_version, VK_API_VERSION_1_1);
  const bool at_1_2 = usable_at_vulkan_1_2(instance_version, base.apiVersion);
  const EnabledFeatures enabled = read_enabled_features(external.device_create_info);
  std::vector<std::string> missing;
  Result<DeviceCaps> queried = query_device_caps(external.physical_device, index, instance_version, external.instance);
  DeviceCaps supported;
  if (queried.ok()) {
    supported = std::move(queried).value();
  } else {
    supported.name = base.deviceName;
    supported.api_version = base.apiVersion;
  }
  for (std::string& line : missing_requirements(supported, enabled, external, at_1_2)) missing.push_back(std::move(line));
  if (queried.ok()) {
    if (Status family = apply_queue_family(external.physical_device, external.queue_family_index, supported); !family.ok())
      missing.push_back(family.message());
  } else if (missing.empty()) {
    missing.push_back(queried.status().message());
  }
  if (!missing.empty()) {
    std::string text = "Context::wrap: vkfuse cannot use the application's device " + supported.name + ":";
    for (const std::string& line : missing) text += "\n  - " + line;
    return make_error(ErrorCode::kUnsupported, text);
  }

  BorrowedDevice borrowed;
  DeviceContext& ctx = borrowed.context_;
  ctx.instance = external.instance;
  ctx.physical = external.physical_device;
  ctx.device = external.device;
  ctx.queue = external.queue;
  ctx.queue_family = external.queue_family_index;
  ctx.caps = enabled_caps(std::move(supported), enabled, at_1_2);
  ctx.debug_utils = external.debug_utils;
  ctx.queue_lock = external.queue_lock;
  log_message(LogLevel::kInfo, "using the application's Vulkan device " + ctx.caps.name);
  return borrowed;
}

}  // namespace vkfuse
