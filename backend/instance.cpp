#include "backend/instance.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "backend/log.h"

namespace vkfuse {

struct Instance::MessageCounter {
  std::atomic<uint32_t> errors{0};
  std::atomic<uint32_t> warnings{0};
  mutable std::mutex mutex;  // guards last_error: the layer may report from several threads at once
  std::string last_error;
};

namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

// VKFUSE_VALIDATION: "" or "0" asks for nothing, "sync" for validation with synchronization validation,
// "gpu" for validation with GPU-assisted validation, anything else for validation.
enum class ValidationRequest { kNone, kOn, kSync, kGpu };
ValidationRequest validation_requested_by_environment() {
  const char* env = std::getenv("VKFUSE_VALIDATION");
  if (env == nullptr || env[0] == '\0' || std::strcmp(env, "0") == 0) return ValidationRequest::kNone;
  if (std::strcmp(env, "sync") == 0) return ValidationRequest::kSync;
  return std::strcmp(env, "gpu") == 0 ? ValidationRequest::kGpu : ValidationRequest::kOn;
}

VKAPI_ATTR VkBool32 VKAPI_CALL on_debug_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                VkDebugUtilsMessageTypeFlagsEXT /*types*/,
                                                const VkDebugUtilsMessengerCallbackDataEXT* data, void* user_data) {
  auto* counter = static_cast<Instance::MessageCounter*>(user_data);
  const char* text = (data != nullptr && data->pMessage != nullptr) ? data->pMessage : "(no message)";
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
    counter->errors.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(counter->mutex);
      counter->last_error = text;
    }
    log_message(LogLevel::kWarn, std::string("validation error: ") + text);
  } else if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    counter->warnings.fetch_add(1, std::memory_order_relaxed);
    // Warnings from the core checks are defects too (we fix them all), so they are shown like errors.
    log_message(LogLevel::kWarn, std::string("validation warning: ") + text);
  }
  // VK_FALSE: the call that triggered the message goes on; aborting it would change behaviour under validation.
  return VK_FALSE;
}

VkDebugUtilsMessengerCreateInfoEXT messenger_info(Instance::MessageCounter* counter) {
  VkDebugUtilsMessengerCreateInfoEXT info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  info.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  info.pfnUserCallback = on_debug_message;
  info.pUserData = counter;
  return info;
}

bool has_layer(const std::vector<VkLayerProperties>& layers, const char* name) {
  return std::any_of(layers.begin(), layers.end(),
                     [&](const VkLayerProperties& layer) { return std::strcmp(layer.layerName, name) == 0; });
}

bool has_extension(const std::vector<VkExtensionProperties>& extensions, const char* name) {
  return std::any_of(extensions.begin(), extensions.end(), [&](const VkExtensionProperties& extension) {
    return std::strcmp(extension.extensionName, name) == 0;
  });
}

Result<std::vector<VkExtensionProperties>> instance_extensions(const char* layer) {
  uint32_t count = 0;
  VKFUSE_CHECK_VK(vkEnumerateInstanceExtensionProperties(layer, &count, nullptr));
  std::vector<VkExtensionProperties> extensions(count);
  VKFUSE_CHECK_VK(vkEnumerateInstanceExtensionProperties(layer, &count, extensions.data()));
  extensions.resize(count);
  return extensions;
}

Result<std::vector<VkLayerProperties>> instance_layers() {
  uint32_t count = 0;
  VKFUSE_CHECK_VK(vkEnumerateInstanceLayerProperties(&count, nullptr));
  std::vector<VkLayerProperties> layers(count);
  VKFUSE_CHECK_VK(vkEnumerateInstanceLayerProperties(&count, layers.data()));
  layers.resize(count);
  return layers;
}

// The loader's instance version. vkEnumerateInstanceVersion is looked up rather than called because a 1.0
// loader does not have it.
uint32_t loader_version() {
  auto enumerate_version = reinterpret_cast<PFN_vkEnumerateInstanceVersion>(
      vkGetInstanceProcAddr(VK_NULL_HANDLE, "vkEnumerateInstanceVersion"));
  uint32_t version = VK_API_VERSION_1_0;
  if (enumerate_version != nullptr && enumerate_version(&version) != VK_SUCCESS) version = VK_API_VERSION_1_0;
  return version;
}

}  // namespace

std::string_view no_vulkan_device_hint() {
  return "no Vulkan device was found. On a machine without a GPU, `apt-get install mesa-vulkan-drivers` "
         "provides lavapipe, a CPU implementation of Vulkan";
}

Result<Instance> Instance::create(const InstanceOptions& options) {
  Instance instance;
  const ValidationRequest requested = validation_requested_by_environment();
  const bool sync_validation = options.sync_validation || requested == ValidationRequest::kSync;
  instance.gpu_assisted_ = requested == ValidationRequest::kGpu;
  instance.validation_ = options.validation || sync_validation || requested != ValidationRequest::kNone;

  const uint32_t loader = loader_version();
  if (VK_API_VERSION_MAJOR(loader) == 1 && VK_API_VERSION_MINOR(loader) < 1) {
    return make_error(ErrorCode::kUnsupported,
                      "the Vulkan loader only supports Vulkan 1.0; vkfuse needs 1.1. Update libvulkan1");
  }
  instance.api_version_ = loader >= VK_API_VERSION_1_2 ? VK_API_VERSION_1_2 : VK_API_VERSION_1_1;

  VKFUSE_ASSIGN_OR_RETURN(std::vector<VkExtensionProperties> available, instance_extensions(nullptr));
  std::vector<const char*> layers;
  if (instance.validation_) {
    VKFUSE_ASSIGN_OR_RETURN(std::vector<VkLayerProperties> available_layers, instance_layers());
    if (!has_layer(available_layers, kValidationLayer)) {
      return make_error(ErrorCode::kNotFound,
                        "validation was requested (InstanceOptions::validation or VKFUSE_VALIDATION) but the layer "
                        "VK_LAYER_KHRONOS_validation is not installed. On Debian/Ubuntu: "
                        "apt-get install vulkan-validationlayers");
    }
    layers.push_back(kValidationLayer);
    // The layer brings its own VK_EXT_debug_utils; count its extensions as available.
    VKFUSE_ASSIGN_OR_RETURN(std::vector<VkExtensionProperties> layer_extensions, instance_extensions(kValidationLayer));
    available.insert(available.end(), layer_extensions.begin(), layer_extensions.end());
  }

  std::vector<const char*> extensions;
  VkInstanceCreateFlags flags = 0;
  if (has_extension(available, VK_EXT_DEBUG_UTILS_EXTENSION_NAME)) {
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    instance.debug_utils_ = true;
  } else if (instance.validation_) {
    return make_error(ErrorCode::kUnsupported,
                      "validation needs VK_EXT_debug_utils to count the layer's messages, and neither the loader "
                      "nor VK_LAYER_KHRONOS_validation offers it");
  }
  if (sync_validation || instance.gpu_assisted_) {
    if (!has_extension(available, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME))
      return make_error(ErrorCode::kUnsupported, std::string(sync_validation ? "synchronization" : "GPU-assisted") +
                                                     " validation (VKFUSE_VALIDATION) needs VK_EXT_validation_features, "
                                                     "which the validation layer does not offer");
    extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
  }
  // Without it the loader hides portability drivers (MoltenVK) from vkEnumeratePhysicalDevices.
  if (has_extension(available, VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
    extensions.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
    flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
  }

  if (instance.validation_) instance.counter_ = std::make_unique<MessageCounter>();

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "vkfuse";
  app.pEngineName = "vkfuse";
  app.apiVersion = instance.api_version_;

  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.flags = flags;
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  // Chained so that messages from inside vkCreateInstance / vkDestroyInstance are counted too.
  VkDebugUtilsMessengerCreateInfoEXT create_messenger{};
  if (instance.validation_) {
    create_messenger = messenger_info(instance.counter_.get());
    info.pNext = &create_messenger;
  }
  std::vector<VkValidationFeatureEnableEXT> enables;
  if (sync_validation) enables.push_back(VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT);
  if (instance.gpu_assisted_) {
    enables.push_back(VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_EXT);
    enables.push_back(VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_RESERVE_BINDING_SLOT_EXT);  // vkfuse binds set 0 only
  }
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  if (!enables.empty()) {
    features.enabledValidationFeatureCount = static_cast<uint32_t>(enables.size());
    features.pEnabledValidationFeatures = enables.data();
    create_messenger.pNext = &features;
  }

  VkInstance handle = VK_NULL_HANDLE;
  const VkResult created = vkCreateInstance(&info, nullptr, &handle);
  if (created == VK_ERROR_INCOMPATIBLE_DRIVER) {
    // What the loader returns when it finds no driver (ICD) at all.
    return make_error(ErrorCode::kNotFound, std::string(no_vulkan_device_hint()) +
                                                " (vkCreateInstance returned VK_ERROR_INCOMPATIBLE_DRIVER)");
  }
  VKFUSE_CHECK_VK(created);
  instance.instance_ = UniqueHandle<VkInstance>(handle, [](VkInstance i) { vkDestroyInstance(i, nullptr); });

  if (instance.validation_) {
    auto create_fn = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(handle, "vkCreateDebugUtilsMessengerEXT"));
    auto destroy_fn = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(handle, "vkDestroyDebugUtilsMessengerEXT"));
    if (create_fn == nullptr || destroy_fn == nullptr) {
      return make_error(ErrorCode::kInternal, "VK_EXT_debug_utils is enabled but its functions could not be loaded");
    }
    const VkDebugUtilsMessengerCreateInfoEXT messenger_create = messenger_info(instance.counter_.get());
    VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
    VKFUSE_CHECK_VK(create_fn(handle, &messenger_create, nullptr, &messenger));
    instance.messenger_ = UniqueHandle<VkDebugUtilsMessengerEXT>(
        messenger, [handle, destroy_fn](VkDebugUtilsMessengerEXT m) { destroy_fn(handle, m, nullptr); });
  }
  return instance;
}

Instance::Instance(Instance&&) noexcept = default;
Instance::~Instance() = default;

Instance& Instance::operator=(Instance&& other) noexcept {
  if (this != &other) {
    // A member-wise assignment would free the counter and the instance before the messenger.
    std::destroy_at(this);
    std::construct_at(this, std::move(other));
  }
  return *this;
}

uint32_t Instance::validation_errors() const {
  return counter_ ? counter_->errors.load(std::memory_order_relaxed) : 0;
}

uint32_t Instance::validation_warnings() const {
  return counter_ ? counter_->warnings.load(std::memory_order_relaxed) : 0;
}

std::string Instance::last_validation_error() const {
  if (!counter_) return {};
  std::lock_guard<std::mutex> lock(counter_->mutex);
  return counter_->last_error;
}

}  // namespace vkfuse
