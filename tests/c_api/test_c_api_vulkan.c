/* The C API inside the application's Vulkan, compiled as C11: the test's own instance, device and
   queue wrapped by vkf_context_wrap; tests/data/models/tiny_cnn reading and writing the test's own
   host-visible storage buffers, recorded into the test's own command buffer and submitted by it; the
   same execution's host path (upload, submit, wait, download); and the errors of misuse. Both runs are
   checked against the model's reference output. With VKFUSE_VALIDATION=1 the instance has the Khronos
   validation layer and any message fails the test. Exits non-zero on the first failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vkfuse/vkfuse_vulkan.h>

#include "c_test_support.h"

static unsigned messages = 0;
static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT type,
                                                 const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  (void)type;
  (void)user;
  if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    ++messages;
    fprintf(stderr, "validation: %s\n", data->pMessage);
  }
  return VK_FALSE;
}

typedef struct {
  VkBuffer buffer;
  VkDeviceMemory memory;
  void* mapped;
} HostBuffer;

static int make_host_buffer(VkPhysicalDevice physical, VkDevice device, VkDeviceSize size, HostBuffer* out) {
  VkBufferCreateInfo info = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = size;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  if (vkCreateBuffer(device, &info, NULL, &out->buffer) != VK_SUCCESS) return 0;
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device, out->buffer, &req);
  VkPhysicalDeviceMemoryProperties mem;
  vkGetPhysicalDeviceMemoryProperties(physical, &mem);
  const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  VkMemoryAllocateInfo alloc = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  for (alloc.memoryTypeIndex = 0; alloc.memoryTypeIndex < mem.memoryTypeCount; ++alloc.memoryTypeIndex)
    if ((req.memoryTypeBits >> alloc.memoryTypeIndex & 1u) && (mem.memoryTypes[alloc.memoryTypeIndex].propertyFlags & want) == want)
      break;
  return alloc.memoryTypeIndex < mem.memoryTypeCount && vkAllocateMemory(device, &alloc, NULL, &out->memory) == VK_SUCCESS &&
         vkBindBufferMemory(device, out->buffer, out->memory, 0) == VK_SUCCESS &&
         vkMapMemory(device, out->memory, 0, VK_WHOLE_SIZE, 0, &out->mapped) == VK_SUCCESS;
}

/* A primary command buffer of `pool`, begun. */
static VkCommandBuffer begin_commands(VkDevice device, VkCommandPool pool) {
  VkCommandBufferAllocateInfo alloc = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  vkAllocateCommandBuffers(device, &alloc, &cb);
  VkCommandBufferBeginInfo begin = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  vkBeginCommandBuffer(cb, &begin);
  return cb;
}

static double worst_relative(const float* got, const float* want, size_t n) {
  double worst = 0.0, largest = 0.0;
  for (size_t i = 0; i < n; ++i) {
    worst = fmax(worst, fabs((double)got[i] - want[i]));
    largest = fmax(largest, fabs((double)want[i]));
  }
  return largest > 0.0 ? worst / largest : worst;
}

int main(void) {
  const char* env = getenv("VKFUSE_VALIDATION");
  const int validation = env && *env && strcmp(env, "0") != 0;
  char model_path[1024], input_path[1024], output_path[1024];
  snprintf(model_path, sizeof model_path, "%s/models/tiny_cnn/model.onnx", VKFUSE_TEST_DATA_DIR);
  snprintf(input_path, sizeof input_path, "%s/models/tiny_cnn/input.npy", VKFUSE_TEST_DATA_DIR);
  snprintf(output_path, sizeof output_path, "%s/models/tiny_cnn/output.npy", VKFUSE_TEST_DATA_DIR);
  size_t n_in = 0, n_ref = 0;
  float* input = read_npy_f32(input_path, &n_in);
  float* reference = read_npy_f32(output_path, &n_ref);
  if (!input || !reference || n_in != 3 * 32 * 32 || n_ref != 10) {
    fprintf(stderr, "cannot read %s or %s\n", input_path, output_path);
    return 1;
  }

  /* The application's Vulkan. */
  VkApplicationInfo app_info = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app_info.apiVersion = VK_API_VERSION_1_2;
  const char* layer = "VK_LAYER_KHRONOS_validation";
  const char* debug_ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  VkDebugUtilsMessengerCreateInfoEXT messenger_info = {VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger_info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
  messenger_info.pfnUserCallback = on_message;
  VkInstanceCreateInfo instance_info = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  instance_info.pNext = validation ? &messenger_info : NULL;
  instance_info.pApplicationInfo = &app_info;
  instance_info.enabledLayerCount = validation ? 1 : 0;
  instance_info.ppEnabledLayerNames = &layer;
  instance_info.enabledExtensionCount = validation ? 1 : 0;
  instance_info.ppEnabledExtensionNames = &debug_ext;
  VkInstance instance = VK_NULL_HANDLE;
  if (vkCreateInstance(&instance_info, NULL, &instance) != VK_SUCCESS) return fprintf(stderr, "vkCreateInstance failed\n"), 1;
  uint32_t count = 1;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  const VkResult listed = vkEnumeratePhysicalDevices(instance, &count, &physical);
  if ((listed != VK_SUCCESS && listed != VK_INCOMPLETE) || count == 0) return fprintf(stderr, "no Vulkan device\n"), 1;
  uint32_t families = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, NULL);
  VkQueueFamilyProperties props[16];
  if (families > 16) families = 16;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, props);
  uint32_t family = 0;
  while (family < families && !(props[family].queueFlags & VK_QUEUE_COMPUTE_BIT)) ++family;
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = family;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  VkDeviceCreateInfo device_info = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  device_info.queueCreateInfoCount = 1;
  device_info.pQueueCreateInfos = &queue_info;
  VkDevice device = VK_NULL_HANDLE;
  if (vkCreateDevice(physical, &device_info, NULL, &device) != VK_SUCCESS) return fprintf(stderr, "vkCreateDevice failed\n"), 1;
  VkQueue queue = VK_NULL_HANDLE;
  vkGetDeviceQueue(device, family, 0, &queue);
  VkCommandPoolCreateInfo pool_info = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.queueFamilyIndex = family;
  VkCommandPool pool = VK_NULL_HANDLE;
  vkCreateCommandPool(device, &pool_info, NULL, &pool);

  /* vkfuse on it. */
  vkf_external_device app = {instance, physical, device, family, queue, VK_API_VERSION_1_2, &device_info};
  vkf_context_options context_options = {NULL, 0, ""};
  vkf_context* ctx = NULL;
  vkf_model* model = NULL;
  vkf_session* session = NULL;
  vkf_execution* frame = NULL;
  vkf_execution* host_run = NULL;
  CHECK_OK(vkf_context_wrap(&app, &context_options, &ctx));
  CHECK_OK(vkf_model_load_onnx(model_path, NULL, &model));
  if (ctx && model) CHECK_OK(vkf_session_create(ctx, model, NULL, &session));
  if (session) CHECK_OK(vkf_execution_create(session, &frame));
  if (session) CHECK_OK(vkf_execution_create(session, &host_run));
  vkf_model_destroy(model);

  HostBuffer in = {0}, out = {0};
  CHECK(make_host_buffer(physical, device, n_in * sizeof(float), &in) && make_host_buffer(physical, device, 10 * sizeof(float), &out),
        "%s", "the test's buffers");
  if (frame && in.mapped && out.mapped) {
    /* Recorded into the application's command buffer, reading and writing its buffers. */
    memcpy(in.mapped, input, n_in * sizeof(float));
    memset(out.mapped, 0, 10 * sizeof(float));
    CHECK_OK(vkf_execution_bind(frame, "input", in.buffer, 0, n_in * sizeof(float)));
    CHECK_OK(vkf_execution_bind(frame, "output", out.buffer, 0, 10 * sizeof(float)));
    VkCommandBuffer cb = begin_commands(device, pool);
    /* The host wrote the input; the host reads the output after the fence. */
    const vkf_record_sync sync = {VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                                  VK_ACCESS_HOST_READ_BIT};
    CHECK_OK(vkf_execution_record(frame, cb, &sync));
    vkEndCommandBuffer(cb);
    VkFenceCreateInfo fence_info = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence = VK_NULL_HANDLE;
    vkCreateFence(device, &fence_info, NULL, &fence);
    VkSubmitInfo submit = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &cb;
    CHECK(vkQueueSubmit(queue, 1, &submit, fence) == VK_SUCCESS, "%s", "vkQueueSubmit");
    vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX);
    const double error = worst_relative((const float*)out.mapped, reference, 10);
    CHECK(error <= 1e-4, "recorded: worst difference %g of the reference's largest", error);
    double ms = -1.0;
    CHECK_OK(vkf_execution_gpu_ms(frame, &ms));
    CHECK(ms > 0.0, "recorded GPU time %g", ms);
    CHECK(vkf_execution_dispatch_count(frame) > 0, "%s", "dispatches");
    printf("recorded into the application's command buffer: %zu dispatches, %.3f ms, worst difference %.2g\n",
           vkf_execution_dispatch_count(frame), ms, error);
    vkDestroyFence(device, fence, NULL);
  }
  if (host_run) {
    /* Host tensors through vkfuse's own submission; recording them is refused. */
    const int64_t dims[4] = {1, 3, 32, 32};
    const vkf_tensor feed = {"input", VKF_F32, 4, dims, input, n_in * sizeof(float)};
    VkCommandBuffer cb = begin_commands(device, pool);
    CHECK(vkf_execution_record(host_run, cb, NULL) == VKF_INVALID_ARGUMENT, "record with host tensors: %s", vkf_last_error());
    vkEndCommandBuffer(cb);
    vkf_tensor got;
    CHECK(vkf_execution_download(host_run, "output", &got) != VKF_OK, "%s", "download before any submit");
    CHECK_OK(vkf_execution_upload(host_run, &feed));
    CHECK_OK(vkf_execution_submit(host_run));
    CHECK_OK(vkf_execution_wait(host_run, UINT64_MAX));
    if (vkf_execution_download(host_run, "output", &got) == VKF_OK) {
      CHECK(got.dtype == VKF_F32 && got.size == 10 * sizeof(float), "output %zu bytes", got.size);
      const double error = worst_relative((const float*)got.data, reference, 10);
      CHECK(error <= 1e-4, "host path: worst difference %g", error);
      printf("host path through the same session: worst difference %.2g\n", error);
    } else {
      CHECK(0, "download: %s", vkf_last_error());
    }
    CHECK(vkf_execution_bind(host_run, "nope", in.buffer, 0, 16) == VKF_INVALID_ARGUMENT && strstr(vkf_last_error(), "nope"),
          "binding an unknown name: %s", vkf_last_error());
    CHECK(vkf_execution_bind(host_run, "input", in.buffer, 0, 16) == VKF_INVALID_ARGUMENT, "a buffer too small: %s",
          vkf_last_error());
  }
  CHECK(vkf_context_wrap(NULL, NULL, &ctx) == VKF_INVALID_ARGUMENT, "%s", "wrap(NULL)");

  vkf_execution_destroy(frame);
  vkf_execution_destroy(host_run);
  vkf_session_destroy(session);
  vkf_context_destroy(ctx);
  if (in.buffer) vkDestroyBuffer(device, in.buffer, NULL);
  if (in.memory) vkFreeMemory(device, in.memory, NULL);
  if (out.buffer) vkDestroyBuffer(device, out.buffer, NULL);
  if (out.memory) vkFreeMemory(device, out.memory, NULL);
  vkDestroyCommandPool(device, pool, NULL);
  vkDestroyDevice(device, NULL);
  vkDestroyInstance(instance, NULL);
  free(input);
  free(reference);
  CHECK(messages == 0, "%u validation messages", messages);
  if (failures) return fprintf(stderr, "%d failures\n", failures), 1;
  printf("C API inside the application's Vulkan: all checks pass\n");
  return 0;
}
