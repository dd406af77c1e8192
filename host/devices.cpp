// list_devices and Context::device: the public summary of a device's caps.
#include "backend/device.h"
#include "backend/device_caps.h"
#include "backend/instance.h"
#include "host/context_impl.h"

namespace vkfuse {

namespace {
DeviceSummary summary_of(const DeviceCaps& caps) {
  std::string driver = caps.driver_name;
  if (!caps.driver_info.empty()) driver += (driver.empty() ? "" : " ") + caps.driver_info;
  DeviceSummary s{caps.name, device_type_name(caps.type), driver, version_to_string(caps.api_version)};
  s.index = caps.index;
  s.device_local_bytes = caps.device_local_bytes;
  s.max_allocation_bytes = caps.max_memory_allocation_size;
  return s;
}
}  // namespace

Result<std::vector<DeviceSummary>> list_devices() {
  VKFUSE_ASSIGN_OR_RETURN(Instance instance, Instance::create({}));
  VKFUSE_ASSIGN_OR_RETURN(std::vector<DeviceCaps> devices, enumerate_devices(instance));
  auto chosen = select_device(instance, "");
  std::vector<DeviceSummary> out;
  for (const DeviceCaps& caps : devices) {
    out.push_back(summary_of(caps));
    out.back().default_choice = chosen.ok() && chosen->index == caps.index;
  }
  return out;
}

DeviceSummary Context::device() const {
  return impl_ ? summary_of(impl_->ctx().caps) : DeviceSummary{};
}

}  // namespace vkfuse
