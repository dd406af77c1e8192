#include "host/context_impl.h"

#include <vkfuse/interop.hpp>

#include "backend/device_caps.h"
#include "backend/log.h"

namespace vkfuse {

Context::Context(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Context::~Context() = default;
Context::Context(Context&&) noexcept = default;
Context& Context::operator=(Context&&) noexcept = default;

namespace {

// The caches and the plan over a device already held by `impl`.
Status finish_context(Context::Impl& impl, const ContextOptions& options) {
  const std::string cache_dir = options.cache_dir == "default" ? KernelCache::default_directory() : options.cache_dir;
  VKFUSE_ASSIGN_OR_RETURN(impl.cache, KernelCache::create(cache_dir));
  const DeviceCaps& caps = impl.ctx().caps;
  impl.device_identity = uuid_to_hex(caps.device_uuid) + "/" + uuid_to_hex(caps.driver_uuid) + "/" +
                         std::to_string(caps.driver_version);
  impl.plan = make_device_plan(caps);
  // The driver's pipeline cache lives beside the SPIR-V (memory only when the kernel cache is).
  VKFUSE_ASSIGN_OR_RETURN(impl.pipeline_cache, PipelineCache::create(impl.ctx(), impl.cache->directory()));
  return {};
}

}  // namespace

Result<Context> Context::create(const ContextOptions& options) {
  InstanceOptions instance_options;
  instance_options.validation = options.validation;
  VKFUSE_ASSIGN_OR_RETURN(OwnedDevice device, OwnedDevice::create(instance_options, options.device));
  auto impl = std::make_shared<Impl>();
  impl->owned.emplace(std::move(device));
  VKFUSE_TRY(finish_context(*impl, options));
  return Context(std::move(impl));
}

Result<Context> Context::wrap(const ExternalDevice& device, const ContextOptions& options) {
  VKFUSE_ASSIGN_OR_RETURN(BorrowedDevice borrowed, BorrowedDevice::wrap(device));
  auto impl = std::make_shared<Impl>();
  impl->borrowed.emplace(std::move(borrowed));
  VKFUSE_TRY(finish_context(*impl, options));
  return Context(std::move(impl));
}

void Context::Impl::save_pipeline_cache() const {
  if (!pipeline_cache) return;
  if (Status saved = pipeline_cache->save(); !saved.ok()) log_message(LogLevel::kWarn, saved.message());
}

CacheStats Context::cache_stats() const {
  if (!impl_) return {};
  const KernelCacheStats s = impl_->cache->stats();
  return {s.compiles, s.memory_hits, s.disk_hits, s.disk_rejected, impl_->pipeline_cache->loaded_bytes(),
          impl_->pipeline_cache->rejected(), impl_->pipeline_cache->create_ms()};
}

std::uint32_t Context::validation_errors() const {
  return impl_ && impl_->owned ? impl_->owned->instance().validation_errors() : 0;
}
VulkanHandles vulkan_handles(const Context& context) {
  if (!context.impl()) return {};
  const DeviceContext& ctx = context.impl()->ctx();
  return {ctx.instance, ctx.physical, ctx.device, ctx.queue_family, ctx.queue, ctx.queue_lock};
}

bool Context::borrowed() const { return impl_ && impl_->borrowed.has_value(); }
std::uint64_t Context::device_memory_bytes() const { return impl_ ? impl_->ctx().memory->bytes.load() : 0; }

}  // namespace vkfuse
