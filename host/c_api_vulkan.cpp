// The C API inside the application's Vulkan (vkfuse/vkfuse_vulkan.h) over <vkfuse/interop.hpp>.
#include <vkfuse/vkfuse_vulkan.h>

#include <map>
#include <new>
#include <optional>
#include <string>

#include <vkfuse/interop.hpp>

#include "host/c_api_internal.h"

using vkfuse::c_api::fail;
using vkfuse::c_api::invalid;

struct vkf_execution {
  vkfuse::Execution execution;
  std::map<std::string, vkfuse::HostTensor> downloads;  // what vkf_execution_download handed out
};

namespace {

// A C++ call that may throw (allocation) turned into a status; no exception crosses the C API.
template <typename F>
vkf_status guarded(const char* function, F&& call) {
  try {
    return call();
  } catch (const std::bad_alloc&) {
    return fail(VKF_OUT_OF_MEMORY, std::string(function) + ": out of host memory");
  } catch (const std::exception& e) {
    return fail(VKF_INTERNAL, std::string(function) + ": " + e.what());
  }
}

}  // namespace

extern "C" {

vkf_status vkf_context_wrap(const vkf_external_device* device, const vkf_context_options* options, vkf_context** context) {
  if (device == nullptr || context == nullptr) return invalid("vkf_context_wrap", "device or context is NULL");
  return guarded("vkf_context_wrap", [&]() -> vkf_status {
    vkfuse::ExternalDevice app{device->instance, device->physical_device, device->device, device->queue_family_index,
                               device->queue};
    app.instance_api_version = device->instance_api_version != 0 ? device->instance_api_version : VK_API_VERSION_1_1;
    app.device_create_info = device->device_create_info;
    app.queue_lock = {device->queue_lock_user, device->queue_lock, device->queue_unlock};
    app.require_fp16 = device->require_fp16 != 0;
    app.require_bool = device->require_bool != 0;
    app.require_timeline = device->require_timeline != 0;
    vkfuse::ContextOptions o;
    if (options != nullptr) {
      o.validation = options->validation != 0;
      if (options->cache_dir != nullptr) o.cache_dir = options->cache_dir;
    }
    auto wrapped = vkfuse::Context::wrap(app, o);
    if (!wrapped.ok()) return fail(wrapped.status());
    const vkfuse::DeviceSummary summary = wrapped->device();
    *context = new vkf_context{std::move(*wrapped), summary};
    return VKF_OK;
  });
}

vkf_status vkf_execution_create(vkf_session* session, vkf_execution** execution) {
  if (session == nullptr || execution == nullptr) return invalid("vkf_execution_create", "session or execution is NULL");
  return guarded("vkf_execution_create", [&]() -> vkf_status {
    auto created = session->session.create_execution();
    if (!created.ok()) return fail(created.status());
    *execution = new vkf_execution{std::move(*created), {}};
    return VKF_OK;
  });
}

void vkf_execution_destroy(vkf_execution* execution) { delete execution; }

vkf_status vkf_execution_bind(vkf_execution* execution, const char* name, VkBuffer buffer, VkDeviceSize offset,
                              VkDeviceSize size) {
  if (execution == nullptr || name == nullptr) return invalid("vkf_execution_bind", "execution or name is NULL");
  return guarded("vkf_execution_bind", [&]() -> vkf_status {
    return vkfuse::c_api::code_of(execution->execution.bind(name, {buffer, offset, size}));
  });
}

vkf_status vkf_execution_device_tensor(vkf_execution* execution, const char* name, VkBuffer* buffer, VkDeviceSize* offset,
                                       VkDeviceSize* size) {
  if (execution == nullptr || name == nullptr || buffer == nullptr || offset == nullptr || size == nullptr)
    return invalid("vkf_execution_device_tensor", "execution, name, buffer, offset or size is NULL");
  return guarded("vkf_execution_device_tensor", [&]() -> vkf_status {
    auto tensor = execution->execution.device_tensor(name);
    if (!tensor.ok()) return fail(tensor.status());
    *buffer = tensor->buffer;
    *offset = tensor->offset;
    *size = tensor->size;
    return VKF_OK;
  });
}

vkf_status vkf_execution_record(vkf_execution* execution, VkCommandBuffer command_buffer, const vkf_record_sync* sync) {
  if (execution == nullptr || command_buffer == VK_NULL_HANDLE)
    return invalid("vkf_execution_record", "execution or command_buffer is NULL");
  return guarded("vkf_execution_record", [&]() -> vkf_status {
    vkfuse::RecordSync record;
    if (sync != nullptr) {
      record.before = {sync->before_stage, sync->before_access};
      record.after = {sync->after_stage, sync->after_access};
    }
    return vkfuse::c_api::code_of(execution->execution.record(command_buffer, record));
  });
}

vkf_status vkf_execution_upload(vkf_execution* execution, const vkf_tensor* tensor) {
  if (execution == nullptr || tensor == nullptr) return invalid("vkf_execution_upload", "execution or tensor is NULL");
  return guarded("vkf_execution_upload", [&]() -> vkf_status {
    vkfuse::HostTensor host;
    if (vkf_status bad = vkfuse::c_api::host_tensor(*tensor, "vkf_execution_upload", &host); bad != VKF_OK) return bad;
    return vkfuse::c_api::code_of(execution->execution.upload(tensor->name, host));
  });
}

vkf_status vkf_execution_submit(vkf_execution* execution) {
  if (execution == nullptr) return invalid("vkf_execution_submit", "execution is NULL");
  return guarded("vkf_execution_submit", [&]() -> vkf_status {
    return vkfuse::c_api::code_of(execution->execution.submit().status());
  });
}

vkf_status vkf_execution_wait(vkf_execution* execution, uint64_t timeout_ns) {
  if (execution == nullptr) return invalid("vkf_execution_wait", "execution is NULL");
  return guarded("vkf_execution_wait", [&]() -> vkf_status {
    return vkfuse::c_api::code_of(execution->execution.wait(timeout_ns));
  });
}

vkf_status vkf_execution_download(vkf_execution* execution, const char* name, vkf_tensor* output) {
  if (execution == nullptr || name == nullptr || output == nullptr)
    return invalid("vkf_execution_download", "execution, name or output is NULL");
  return guarded("vkf_execution_download", [&]() -> vkf_status {
    auto tensor = execution->execution.download(name);
    if (!tensor.ok()) return fail(tensor.status());
    const auto it = execution->downloads.insert_or_assign(name, std::move(*tensor)).first;
    const vkfuse::HostTensor& kept = it->second;
    *output = {it->first.c_str(), static_cast<vkf_dtype>(kept.dtype), kept.shape.size(), kept.shape.data(), kept.bytes.data(),
               kept.bytes.size()};
    return VKF_OK;
  });
}

vkf_status vkf_execution_gpu_ms(vkf_execution* execution, double* ms) {
  if (execution == nullptr || ms == nullptr) return invalid("vkf_execution_gpu_ms", "execution or ms is NULL");
  return guarded("vkf_execution_gpu_ms", [&]() -> vkf_status {
    auto measured = execution->execution.last_gpu_ms();
    if (!measured.ok()) return fail(measured.status());
    *ms = *measured;
    return VKF_OK;
  });
}

size_t vkf_execution_dispatch_count(const vkf_execution* execution) {
  return execution ? execution->execution.dispatch_count() : 0;
}

}  // extern "C"
