/* vkfuse's C API inside the application's Vulkan (C11; also valid C++): a context over the
   application's device and queue, and executions that read and write the application's buffers and
   record into its command buffers. The C view of <vkfuse/interop.hpp>; include it where the
   application owns the GPU (it includes <vulkan/vulkan.h>).

     vkf_external_device app = {instance, physical, device, family, queue, VK_API_VERSION_1_2, &device_info};
     vkf_context_wrap(&app, NULL, &ctx);           // fails listing every missing feature
     vkf_session_create(ctx, model, NULL, &session);
     vkf_execution_create(session, &frame);        // one per frame in flight
     vkf_execution_bind(frame, "input", in_buffer, 0, in_bytes);
     vkf_execution_bind(frame, "output", out_buffer, 0, out_bytes);
     vkf_execution_record(frame, cmd, NULL);       // into the application's command buffer

   Ownership, errors and threads as in <vkfuse/vkfuse.h>. vkfuse never destroys a borrowed Vulkan
   object; the application keeps its instance, device, queue and bound buffers alive for as long as a
   context, session or execution uses them, and destroys an execution only once no command buffer that
   holds its recording is pending. An execution keeps its session alive. */
#ifndef VKFUSE_VKFUSE_VULKAN_H
#define VKFUSE_VKFUSE_VULKAN_H

#include <vulkan/vulkan.h>

#include <vkfuse/vkfuse.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The application's Vulkan objects (vkfuse::ExternalDevice). */
typedef struct vkf_external_device {
  VkInstance instance;
  VkPhysicalDevice physical_device;
  VkDevice device;
  uint32_t queue_family_index; /* must support compute */
  VkQueue queue;
  uint32_t instance_api_version;                /* VkApplicationInfo::apiVersion; 0 = 1.1 */
  const VkDeviceCreateInfo* device_create_info; /* what the device enabled (read during wrap); NULL = 1.1 core only */
  /* Taken around each of vkfuse's vkQueueSubmit calls when other threads submit to the queue too
     (both NULL: the application promises they do not while a vkfuse call that submits runs). */
  void* queue_lock_user;
  void (*queue_lock)(void* user);
  void (*queue_unlock)(void* user);
  int require_fp16;     /* 1: wrap fails unless f16 tensors can run (storageBuffer16BitAccess) */
  int require_bool;     /* 1: ... bool tensors (storageBuffer8BitAccess) */
  int require_timeline; /* 1: ... timeline semaphores */
} vkf_external_device;

/* options may be NULL; its device field is ignored (the device is the application's). */
VKFUSE_API vkf_status vkf_context_wrap(const vkf_external_device* device, const vkf_context_options* options,
                                       vkf_context** context);

/* ---- Execution: one run of a session's model, per frame in flight ---- */
typedef struct vkf_execution vkf_execution;

VKFUSE_API vkf_status vkf_execution_create(vkf_session* session, vkf_execution** execution);
VKFUSE_API void vkf_execution_destroy(vkf_execution* execution); /* waits for its own submit, if any */

/* The input or output `name` reads or writes the application's buffer (STORAGE_BUFFER usage, offset a
   multiple of minStorageBufferOffsetAlignment and of 16, at least the tensor's bytes). */
VKFUSE_API vkf_status vkf_execution_bind(vkf_execution* execution, const char* name, VkBuffer buffer, VkDeviceSize offset,
                                         VkDeviceSize size);
/* `name` lives in vkfuse's own device buffer, which the application may read or write itself. */
VKFUSE_API vkf_status vkf_execution_device_tensor(vkf_execution* execution, const char* name, VkBuffer* buffer,
                                                  VkDeviceSize* offset, VkDeviceSize* size);

/* record's dependencies on the application's work: what last wrote the inputs (before) and what reads
   the outputs next (after). */
typedef struct vkf_record_sync {
  VkPipelineStageFlags before_stage;
  VkAccessFlags before_access;
  VkPipelineStageFlags after_stage;
  VkAccessFlags after_access;
} vkf_record_sync;

/* Records the model into `command_buffer` (begun, outside a render pass, of the context's queue
   family); every input and output must be bound or device-resident. sync NULL: compute and transfer
   writes before, compute and transfer reads after. The application submits it. */
VKFUSE_API vkf_status vkf_execution_record(vkf_execution* execution, VkCommandBuffer command_buffer,
                                           const vkf_record_sync* sync);

/* Host tensors through vkfuse's own submission: stage an input, submit without waiting, wait, read an
   output (its data belongs to the execution until the next download of that name or destroy). */
VKFUSE_API vkf_status vkf_execution_upload(vkf_execution* execution, const vkf_tensor* tensor);
VKFUSE_API vkf_status vkf_execution_submit(vkf_execution* execution);
VKFUSE_API vkf_status vkf_execution_wait(vkf_execution* execution, uint64_t timeout_ns); /* VKF_NOT_READY on timeout */
VKFUSE_API vkf_status vkf_execution_download(vkf_execution* execution, const char* name, vkf_tensor* output);

/* GPU milliseconds of the last submit, or of the last record once the application waited for it. */
VKFUSE_API vkf_status vkf_execution_gpu_ms(vkf_execution* execution, double* ms);
VKFUSE_API size_t vkf_execution_dispatch_count(const vkf_execution* execution);

#ifdef __cplusplus
}
#endif

#endif
