// Context::Impl: the device, its plan and the kernel cache, shared by every Session made from it.
#pragma once

#include <memory>
#include <string>

#include <vkfuse/vkfuse.hpp>

#include "backend/device.h"
#include "backend/device_plan.h"
#include "codegen/kernel_cache.h"

namespace vkfuse {

struct Context::Impl {
  // An owned device today; a borrowed one (a game's VkDevice) will sit beside it behind the same
  // DeviceContext view, which is all the rest of the code uses.
  OwnedDevice device;
  DevicePlan plan;
  std::unique_ptr<KernelCache> cache;
  std::string device_identity;  // device + driver UUIDs and driver version: part of every kernel key

  const DeviceContext& ctx() const { return device.context(); }
};

}  // namespace vkfuse
