#include "backend/debug.h"

#include <mutex>
#include <string>

#include "backend/device.h"

namespace vkfuse {
namespace {

// vkSetDebugUtilsObjectNameEXT is not exported by the loader; it is looked up once per instance. Processes use
// one instance almost always, so one cached entry is enough; another instance just replaces it.
PFN_vkSetDebugUtilsObjectNameEXT lookup_set_name(VkInstance instance) {
  static std::mutex mutex;
  static VkInstance cached_instance = VK_NULL_HANDLE;
  static PFN_vkSetDebugUtilsObjectNameEXT cached_fn = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (cached_instance != instance || cached_fn == nullptr) {
    cached_fn = reinterpret_cast<PFN_vkSetDebugUtilsObjectNameEXT>(
        vkGetInstanceProcAddr(instance, "vkSetDebugUtilsObjectNameEXT"));
    cached_instance = instance;
  }
  return cached_fn;
}

}  // namespace

void set_debug_name(const DeviceContext& ctx, VkObjectType type, uint64_t handle, std::string_view name) {
  if (!ctx.debug_utils || handle == 0 || name.empty()) return;
  PFN_vkSetDebugUtilsObjectNameEXT set_name = lookup_set_name(ctx.instance);
  if (set_name == nullptr) return;
  const std::string terminated(name);  // the API wants a NUL-terminated string
  VkDebugUtilsObjectNameInfoEXT info{VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT};
  info.objectType = type;
  info.objectHandle = handle;
  info.pObjectName = terminated.c_str();
  // The result is ignored on purpose: naming is a debugging aid and must never make a call fail.
  (void)set_name(ctx.device, &info);
}

}  // namespace vkfuse
