#include "host/context_impl.h"

#include "backend/device_caps.h"
#include "backend/log.h"

namespace vkfuse {

Context::Context(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
Context::~Context() = default;
Context::Context(Context&&) noexcept = default;
Context& Context::operator=(Context&&) noexcept = default;

Result<Context> Context::create(const ContextOptions& options) {
  InstanceOptions instance_options;
  instance_options.validation = options.validation;
  VKFUSE_ASSIGN_OR_RETURN(OwnedDevice device, OwnedDevice::create(instance_options, options.device));
  const std::string cache_dir = options.cache_dir == "default" ? KernelCache::default_directory() : options.cache_dir;
  VKFUSE_ASSIGN_OR_RETURN(std::unique_ptr<KernelCache> cache, KernelCache::create(cache_dir));
  const DeviceCaps& caps = device.context().caps;
  std::string identity = uuid_to_hex(caps.device_uuid) + "/" + uuid_to_hex(caps.driver_uuid) + "/" +
                         std::to_string(caps.driver_version);
  DevicePlan plan = make_device_plan(caps);
  // The driver's pipeline cache lives beside the SPIR-V (memory only when the kernel cache is).
  VKFUSE_ASSIGN_OR_RETURN(std::unique_ptr<PipelineCache> pipeline_cache,
                          PipelineCache::create(device.context(), cache->directory()));
  // new, not make_shared: Impl has a destructor, so no move constructor, and is built in place.
  std::shared_ptr<Impl> impl(
      new Impl{std::move(device), std::move(pipeline_cache), plan, std::move(cache), std::move(identity)});
  return Context(std::move(impl));
}

void Context::Impl::save_pipeline_cache() const {
  if (!pipeline_cache) return;
  if (Status saved = pipeline_cache->save(); !saved.ok()) log_message(LogLevel::kWarn, saved.message());
}

DeviceSummary Context::device() const {
  const DeviceCaps& caps = impl_->ctx().caps;
  std::string driver = caps.driver_name;
  if (!caps.driver_info.empty()) driver += (driver.empty() ? "" : " ") + caps.driver_info;
  return {caps.name, device_type_name(caps.type), driver, version_to_string(caps.api_version)};
}

CacheStats Context::cache_stats() const {
  const KernelCacheStats s = impl_->cache->stats();
  return {s.compiles, s.memory_hits, s.disk_hits, s.disk_rejected, impl_->pipeline_cache->loaded_bytes(),
          impl_->pipeline_cache->rejected(), impl_->pipeline_cache->create_ms()};
}

std::uint32_t Context::validation_errors() const { return impl_->device.instance().validation_errors(); }

}  // namespace vkfuse
