// Debug-utils object names: what validation messages, RenderDoc and driver tools show for our objects.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <string_view>
#include <type_traits>

namespace vkfuse {

struct DeviceContext;

// Names `handle` (of type `type`) on ctx.device. A no-op unless ctx.debug_utils; best effort (a failure is
// ignored: names are a debugging aid, never a reason to fail). Thread-safe.
void set_debug_name(const DeviceContext& ctx, VkObjectType type, uint64_t handle, std::string_view name);

// The uint64_t form of any Vulkan handle that VkDebugUtilsObjectNameInfoEXT::objectHandle wants. Non-dispatchable
// handles are pointers on 64-bit platforms and uint64_t on 32-bit ones.
template <class Handle>
uint64_t debug_handle(Handle handle) {
  if constexpr (std::is_pointer_v<Handle>) {
    return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(handle));
  } else {
    return static_cast<uint64_t>(handle);
  }
}

}  // namespace vkfuse
