/* vkfuse's C API (C11; also valid C++): load an ONNX model, compile it for a Vulkan device, run it.

     vkf_context* ctx = NULL;
     vkf_model* model = NULL;
     vkf_session* session = NULL;
     if (vkf_context_create(NULL, &ctx) != VKF_OK ||
         vkf_model_load_onnx("model.onnx", NULL, &model) != VKF_OK ||
         vkf_session_create(ctx, model, NULL, &session) != VKF_OK)
       fprintf(stderr, "%s\n", vkf_last_error());
     vkf_tensor in = {"input", VKF_F32, 4, dims, data, bytes};
     vkf_session_run(session, &in, 1);
     vkf_tensor out;
     vkf_session_output(session, "output", &out);   // out.data: valid until the next run
     ...
     vkf_session_destroy(session); vkf_model_destroy(model); vkf_context_destroy(ctx);

   Errors: every fallible call returns a vkf_status; on failure vkf_last_error() gives the message (which
   names the file, node, op, input or limit), kept per thread until that thread's next failing call.
   Output pointers are written only on success. No C++ exception crosses this API.

   Ownership: each *_create / *_load returns a handle the caller destroys with the matching *_destroy
   (NULL is accepted and ignored). A session keeps what it needs of its context and model: either may
   be destroyed before it. Strings and arrays returned by the API belong to the handle they came from.

   Threads: a context may be shared by sessions on any threads; calls on one session or execution
   from several threads at once take turns (vkf_session_output's tensors are the last run's, whichever
   thread ran it). A model is one thread's at a time. */
#ifndef VKFUSE_VKFUSE_H
#define VKFUSE_VKFUSE_H

#include <stddef.h>
#include <stdint.h>

#include <vkfuse/export.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The same codes as vkfuse::ErrorCode. */
typedef enum vkf_status {
  VKF_OK = 0,
  VKF_INVALID_ARGUMENT = 1, /* bad model, shape, dtype, option, name or handle */
  VKF_UNSUPPORTED = 2,      /* valid, but the device or the library cannot do it */
  VKF_NOT_FOUND = 3,        /* no device, no such file, no such input or output */
  VKF_OUT_OF_MEMORY = 4,
  VKF_DEVICE_LOST = 5,
  VKF_VULKAN = 6,
  VKF_COMPILE = 7,
  VKF_IO = 8,
  VKF_INTERNAL = 9,
  VKF_NOT_READY = 10
} vkf_status;

typedef enum vkf_dtype { VKF_F32 = 0, VKF_F16 = 1, VKF_I32 = 2, VKF_BOOL = 3, VKF_U8 = 4 } vkf_dtype;

typedef struct vkf_context vkf_context;
typedef struct vkf_model vkf_model;
typedef struct vkf_session vkf_session;

/* "0.1.0" */
VKFUSE_API const char* vkf_version(void);
/* The message of this thread's last failing call ("" if none). */
VKFUSE_API const char* vkf_last_error(void);
/* "InvalidArgument", ... */
VKFUSE_API const char* vkf_status_name(vkf_status status);
/* "f32", "f16", "i32", "bool", "u8"; bytes per element. */
VKFUSE_API const char* vkf_dtype_name(vkf_dtype dtype);
VKFUSE_API size_t vkf_dtype_size(vkf_dtype dtype);

/* ---- Devices ---- */
typedef struct vkf_device_info {
  uint32_t index;             /* pass as vkf_context_options.device ("0", "1", ...) */
  const char* name;
  const char* type;           /* "discrete", "integrated", "virtual", "cpu", "other" */
  const char* driver;
  const char* api_version;
  uint64_t device_local_bytes;
  int default_choice;         /* 1 for the device a context picks when none is named */
} vkf_device_info;

/* Every Vulkan device: *count of them; the strings stay valid until the next call on this thread. */
VKFUSE_API vkf_status vkf_devices(const vkf_device_info** devices, size_t* count);

/* ---- Context: a device, its queue and the kernel cache ---- */
typedef struct vkf_context_options {
  const char* device;    /* index or name substring; NULL or "" = VKFUSE_DEVICE, else the best */
  int validation;        /* 1: the Khronos validation layer (VKFUSE_VALIDATION=1 also) */
  const char* cache_dir; /* NULL = VKFUSE_CACHE_DIR or the user cache folder; "" = memory only */
} vkf_context_options;

/* options may be NULL (all defaults). */
VKFUSE_API vkf_status vkf_context_create(const vkf_context_options* options, vkf_context** context);
VKFUSE_API void vkf_context_destroy(vkf_context* context);
/* The context's device; the strings belong to the context. */
VKFUSE_API vkf_status vkf_context_device(const vkf_context* context, vkf_device_info* info);

/* ---- Model: an ONNX file loaded into a graph ---- */
typedef enum vkf_precision { VKF_PRECISION_FP32 = 0, VKF_PRECISION_FP16 = 1 } vkf_precision;

typedef struct vkf_input_shape {
  const char* name;
  size_t rank;
  const int64_t* dims;
} vkf_input_shape;

typedef struct vkf_load_options {
  vkf_precision precision;             /* FP16: weights and intermediates stored as f16 */
  int64_t batch;                       /* > 0: dimension 0 of every input; 0: as the model says */
  const vkf_input_shape* input_shapes; /* fixes symbolic (or overrides) input shapes */
  size_t input_shape_count;
} vkf_load_options;

/* options may be NULL (fp32, the model's shapes). */
VKFUSE_API vkf_status vkf_model_load_onnx(const char* path, const vkf_load_options* options, vkf_model** model);
VKFUSE_API void vkf_model_destroy(vkf_model* model);

/* A graph input or output: name, dtype and shape (symbolic dims are -1 with dim_names[d] naming them,
   which only vkf_onnx_inspect reports; dim_names[d] is "" for a fixed dim). The pointers belong to the
   handle. */
typedef struct vkf_tensor_info {
  const char* name;
  vkf_dtype dtype;
  size_t rank;
  const int64_t* shape;
  const char* const* dim_names;
} vkf_tensor_info;

VKFUSE_API size_t vkf_model_input_count(const vkf_model* model);
VKFUSE_API size_t vkf_model_output_count(const vkf_model* model);
VKFUSE_API vkf_status vkf_model_input(const vkf_model* model, size_t index, vkf_tensor_info* info);
VKFUSE_API vkf_status vkf_model_output(const vkf_model* model, size_t index, vkf_tensor_info* info);

/* What an .onnx file declares, without building it (to learn which dims to fix): a model handle whose
   inputs and outputs may hold symbolic dims; it cannot make a session. */
VKFUSE_API vkf_status vkf_onnx_inspect(const char* path, vkf_model** model);

/* ---- Session: a model compiled for a context's device ---- */
typedef struct vkf_session_options {
  int disable_fusion; /* 1: one dispatch per op (VKFUSE_DISABLE_FUSION=1 also) */
  int disable_profiling; /* 1: no timestamps (vkf_session_gpu_ms then gives 0) */
} vkf_session_options;

/* options may be NULL (fused, profiled). */
VKFUSE_API vkf_status vkf_session_create(vkf_context* context, const vkf_model* model,
                                         const vkf_session_options* options, vkf_session** session);
VKFUSE_API void vkf_session_destroy(vkf_session* session);

/* A tensor in host memory, row-major; size is data's length in bytes. */
typedef struct vkf_tensor {
  const char* name;
  vkf_dtype dtype;
  size_t rank;
  const int64_t* shape;
  const void* data;
  size_t size;
} vkf_tensor;

/* Uploads every input (each graph input exactly once, with its exact dtype and shape), runs, waits and
   downloads every output. */
VKFUSE_API vkf_status vkf_session_run(vkf_session* session, const vkf_tensor* inputs, size_t input_count);
/* An output of the last run; its data belongs to the session until the next run or destroy. */
VKFUSE_API vkf_status vkf_session_output(const vkf_session* session, const char* name, vkf_tensor* output);

/* ---- The plan and timings of the last run ---- */
typedef struct vkf_group_info {
  const char* label; /* "Conv -> Relu" */
  size_t op_count;
  double gpu_ms;     /* last run; 0 without timestamps */
} vkf_group_info;

VKFUSE_API size_t vkf_session_group_count(const vkf_session* session);
VKFUSE_API vkf_status vkf_session_group(const vkf_session* session, size_t index, vkf_group_info* info);
VKFUSE_API size_t vkf_session_dispatch_count(const vkf_session* session);
/* Sum over the groups of the last run's GPU time. */
VKFUSE_API double vkf_session_gpu_ms(const vkf_session* session);
/* Session creation's wall time (plan, compile, pipelines, memory, recording). */
VKFUSE_API double vkf_session_create_ms(const vkf_session* session);

#ifdef __cplusplus
}
#endif

#endif
