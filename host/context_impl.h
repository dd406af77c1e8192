// Context::Impl: the device, its plan, the kernel cache and the pipeline cache, shared by every Session
// made from it.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <vkfuse/vkfuse.hpp>

#include "backend/device.h"
#include "backend/device_plan.h"
#include "backend/pipeline_cache.h"
#include "codegen/kernel_cache.h"

namespace vkfuse {

struct Context::Impl {
  // One of the two: vkfuse's own device, or the application's (Context::wrap). The rest of the code
  // sees only the DeviceContext view.
  std::optional<OwnedDevice> owned;
  std::optional<BorrowedDevice> borrowed;
  std::unique_ptr<PipelineCache> pipeline_cache;  // declared after the device: destroyed before it
  DevicePlan plan;
  std::unique_ptr<KernelCache> cache;
  std::string device_identity;  // device + driver UUIDs and driver version: part of every kernel key

  // The last sessions' pipelines reach the file even when no Session::create saved them.
  ~Impl() { save_pipeline_cache(); }

  const DeviceContext& ctx() const { return owned ? owned->context() : borrowed->context(); }
  // Best effort: a cache that cannot be written costs the next process time, not correctness.
  void save_pipeline_cache() const;
};

}  // namespace vkfuse
