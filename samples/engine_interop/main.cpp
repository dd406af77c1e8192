// engine_interop: vkfuse inside an application's own Vulkan, the way a game or a video viewer uses it.
// The application creates the instance, device and queue, owns the input and output buffers, and
// records one command buffer per frame: its own pass writes the frame's input, vkfuse's dispatches run
// in the middle, its own pass reads the output. Three frames are in flight, each with its own
// vkfuse::Execution and one copy of the weights. Every frame is checked against the host path.
#include <vulkan/vulkan.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

#include <vkfuse/interop.hpp>
#include <vkfuse/vkfuse.hpp>

namespace {

int fail(const char* what, const vkfuse::Status& status) {
  std::fprintf(stderr, "%s: %s\n", what, status.to_string().c_str());
  return 1;
}
#define CHECK_VK(call)                                                           \
  do {                                                                           \
    if ((call) != VK_SUCCESS) return std::fprintf(stderr, "%s failed\n", #call), 1; \
  } while (0)

unsigned g_messages = 0;  // validation messages (warnings and errors)
VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity, VkDebugUtilsMessageTypeFlagsEXT,
                                          const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) {
    ++g_messages;
    std::fprintf(stderr, "validation: %s\n", data->pMessage);
  }
  return VK_FALSE;
}

// A small image model built in C++: 3x3 Conv + bias, Relu, 1x1 Conv, Sigmoid (two fused dispatches).
vkfuse::Result<vkfuse::Graph> build_model() {
  vkfuse::GraphBuilder b;
  const vkfuse::Tensor x = b.input("frame", {1, 3, 64, 64});
  std::vector<float> w1(8 * 3 * 3 * 3), b1(8), w2(4 * 8);
  for (std::size_t i = 0; i < w1.size(); ++i) w1[i] = std::sin(0.7f * static_cast<float>(i)) * 0.3f;
  for (std::size_t i = 0; i < b1.size(); ++i) b1[i] = 0.05f * static_cast<float>(i);
  for (std::size_t i = 0; i < w2.size(); ++i) w2[i] = std::cos(0.3f * static_cast<float>(i)) * 0.5f;
  const vkfuse::Tensor c1 = b.op("Conv", {x, b.constant(vkfuse::HostTensor::from_floats({8, 3, 3, 3}, w1)),
                                          b.constant(vkfuse::HostTensor::from_floats({8}, b1))},
                                 {{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}});
  const vkfuse::Tensor c2 = b.op("Conv", {b.op("Relu", {c1}), b.constant(vkfuse::HostTensor::from_floats({4, 8, 1, 1}, w2))});
  b.output(b.op("Sigmoid", {c2}), "mask");
  return b.build();
}

struct AppBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
};

// The application's own allocation (an engine would use its allocator).
bool make_buffer(VkPhysicalDevice physical, VkDevice device, VkDeviceSize size, VkBufferUsageFlags usage, bool host,
                 AppBuffer& out) {
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = size;
  info.usage = usage;
  if (vkCreateBuffer(device, &info, nullptr, &out.buffer) != VK_SUCCESS) return false;
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(device, out.buffer, &req);
  VkPhysicalDeviceMemoryProperties mem{};
  vkGetPhysicalDeviceMemoryProperties(physical, &mem);
  const VkMemoryPropertyFlags want =
      host ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  for (alloc.memoryTypeIndex = 0; alloc.memoryTypeIndex < mem.memoryTypeCount; ++alloc.memoryTypeIndex)
    if ((req.memoryTypeBits >> alloc.memoryTypeIndex & 1u) &&
        (mem.memoryTypes[alloc.memoryTypeIndex].propertyFlags & want) == want)
      break;
  if (alloc.memoryTypeIndex == mem.memoryTypeCount) return false;
  if (vkAllocateMemory(device, &alloc, nullptr, &out.memory) != VK_SUCCESS) return false;
  if (vkBindBufferMemory(device, out.buffer, out.memory, 0) != VK_SUCCESS) return false;
  return !host || vkMapMemory(device, out.memory, 0, VK_WHOLE_SIZE, 0, &out.mapped) == VK_SUCCESS;
}

// The frame's pixels (the application's decoder or renderer would produce them).
std::vector<float> frame_pixels(int frame) {
  std::vector<float> pixels(3 * 64 * 64);
  for (std::size_t i = 0; i < pixels.size(); ++i)
    pixels[i] = std::sin(0.01f * static_cast<float>(i) + 0.5f * static_cast<float>(frame));
  return pixels;
}

}  // namespace

int main() {
  // 1. The application's Vulkan: instance (validation on when VKFUSE_VALIDATION=1), device, queue.
  const char* env = std::getenv("VKFUSE_VALIDATION");
  const bool validation = env && std::strcmp(env, "0") != 0 && *env;
  VkApplicationInfo app_info{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app_info.apiVersion = VK_API_VERSION_1_2;
  const char* layer = "VK_LAYER_KHRONOS_validation";
  const char* debug_ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
  VkValidationFeatureEnableEXT sync_validation = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = &sync_validation;
  VkDebugUtilsMessengerCreateInfoEXT messenger_info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  messenger_info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT;
  messenger_info.pfnUserCallback = on_message;
  features.pNext = &messenger_info;
  VkInstanceCreateInfo instance_info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  instance_info.pNext = validation ? &features : nullptr;
  instance_info.pApplicationInfo = &app_info;
  instance_info.enabledLayerCount = validation ? 1 : 0;
  instance_info.ppEnabledLayerNames = &layer;
  instance_info.enabledExtensionCount = validation ? 1 : 0;
  instance_info.ppEnabledExtensionNames = &debug_ext;
  VkInstance instance = VK_NULL_HANDLE;
  CHECK_VK(vkCreateInstance(&instance_info, nullptr, &instance));
  uint32_t count = 1;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  const VkResult listed = vkEnumeratePhysicalDevices(instance, &count, &physical);
  if ((listed != VK_SUCCESS && listed != VK_INCOMPLETE) || count == 0)
    return std::fprintf(stderr, "no Vulkan device (install mesa-vulkan-drivers for lavapipe)\n"), 1;
  uint32_t families = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, nullptr);
  std::vector<VkQueueFamilyProperties> props(families);
  vkGetPhysicalDeviceQueueFamilyProperties(physical, &families, props.data());
  uint32_t family = 0;
  while (family < families && !(props[family].queueFlags & VK_QUEUE_COMPUTE_BIT)) ++family;
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  queue_info.queueFamilyIndex = family;
  queue_info.queueCount = 1;
  queue_info.pQueuePriorities = &priority;
  VkDeviceCreateInfo device_info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};  // vkfuse reads what it enables
  device_info.queueCreateInfoCount = 1;
  device_info.pQueueCreateInfos = &queue_info;
  VkDevice device = VK_NULL_HANDLE;
  CHECK_VK(vkCreateDevice(physical, &device_info, nullptr, &device));
  VkQueue queue = VK_NULL_HANDLE;
  vkGetDeviceQueue(device, family, 0, &queue);
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  auto create_messenger = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
      vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT"));
  if (validation && create_messenger) CHECK_VK(create_messenger(instance, &messenger_info, nullptr, &messenger));

  int status = 0;
  {
    // 2. vkfuse on that device: one compiled model, one execution per frame in flight.
    vkfuse::ExternalDevice app{instance, physical, device, family, queue};
    app.instance_api_version = VK_API_VERSION_1_2;
    app.device_create_info = &device_info;
    auto context = vkfuse::Context::wrap(app);
    if (!context.ok()) return fail("Context::wrap", context.status());
    auto graph = build_model();
    if (!graph.ok()) return fail("GraphBuilder", graph.status());
    auto session = vkfuse::Session::create(*context, *graph, {});
    if (!session.ok()) return fail("Session::create", session.status());

    constexpr int kInFlight = 3, kFrames = 9;
    const VkDeviceSize in_bytes = 3 * 64 * 64 * sizeof(float), out_bytes = 4 * 64 * 64 * sizeof(float);
    const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
    struct Frame {
      std::optional<vkfuse::Execution> execution;
      AppBuffer input, output, readback;
      VkCommandPool pool = VK_NULL_HANDLE;
      VkCommandBuffer commands = VK_NULL_HANDLE;
      VkFence fence = VK_NULL_HANDLE;
      int number = -1;  // the frame it holds, -1: none yet
    };
    std::vector<Frame> frames;
    for (int i = 0; i < kInFlight; ++i) {
      auto execution = session->create_execution();
      if (!execution.ok()) return fail("create_execution", execution.status());
      Frame f{std::move(execution).value()};
      if (!make_buffer(physical, device, in_bytes, usage, false, f.input) ||
          !make_buffer(physical, device, out_bytes, usage, false, f.output) ||
          !make_buffer(physical, device, out_bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, true, f.readback))
        return std::fprintf(stderr, "buffer allocation failed\n"), 1;
      if (vkfuse::Status s = f.execution->bind("frame", {f.input.buffer, 0, in_bytes, usage}); !s.ok()) return fail("bind", s);
      if (vkfuse::Status s = f.execution->bind("mask", {f.output.buffer, 0, out_bytes, usage}); !s.ok()) return fail("bind", s);
      VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
      pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
      pool_info.queueFamilyIndex = family;
      CHECK_VK(vkCreateCommandPool(device, &pool_info, nullptr, &f.pool));
      VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
      alloc.commandPool = f.pool;
      alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
      alloc.commandBufferCount = 1;
      CHECK_VK(vkAllocateCommandBuffers(device, &alloc, &f.commands));
      VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
      fence_info.flags = VK_FENCE_CREATE_SIGNALED_BIT;
      CHECK_VK(vkCreateFence(device, &fence_info, nullptr, &f.fence));
      frames.push_back(std::move(f));
    }
    std::printf("model: %zu ops in %zu dispatches; weights %llu bytes on the device, once; %d executions of %llu bytes each\n",
                graph->node_count(), session->dispatch_count(), static_cast<unsigned long long>(session->weight_bytes()),
                kInFlight, static_cast<unsigned long long>(frames[0].execution->memory().total()));

    // 3. The frame loop: wait for the slot's previous frame, check it, record and submit the next.
    double worst = 0.0;
    int checked = 0;
    std::uint64_t staging = 0;
    auto check = [&](Frame& f) -> bool {
      if (f.number < 0) return true;
      auto want = session->run({{"frame", vkfuse::HostTensor::from_floats({1, 3, 64, 64}, frame_pixels(f.number))}});
      if (!want.ok()) return fail("host path", want.status()), false;
      const std::vector<float> expected = want->at("mask").to_floats();
      const float* got = static_cast<const float*>(f.readback.mapped);
      for (std::size_t i = 0; i < expected.size(); ++i) worst = std::fmax(worst, std::fabs(got[i] - expected[i]));
      staging += f.execution->last_staging_bytes();
      ++checked;
      return true;
    };
    for (int n = 0; n < kFrames + kInFlight && status == 0; ++n) {
      Frame& f = frames[n % kInFlight];
      CHECK_VK(vkWaitForFences(device, 1, &f.fence, VK_TRUE, UINT64_MAX));
      if (!check(f)) status = 1;
      if (n >= kFrames) continue;
      CHECK_VK(vkResetFences(device, 1, &f.fence));
      CHECK_VK(vkResetCommandBuffer(f.commands, 0));
      VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
      CHECK_VK(vkBeginCommandBuffer(f.commands, &begin));
      const std::vector<float> pixels = frame_pixels(n);
      vkCmdUpdateBuffer(f.commands, f.input.buffer, 0, in_bytes, pixels.data());  // the app's pass writes the input
      vkfuse::RecordSync sync;
      sync.before = {VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT};
      sync.after = {VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
      if (vkfuse::Status s = f.execution->record(f.commands, sync); !s.ok()) return fail("record", s);
      const VkBufferCopy region{0, 0, out_bytes};
      vkCmdCopyBuffer(f.commands, f.output.buffer, f.readback.buffer, 1, &region);  // the app's pass reads the output
      VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
      to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
      to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
      vkCmdPipelineBarrier(f.commands, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0,
                           nullptr, 0, nullptr);
      CHECK_VK(vkEndCommandBuffer(f.commands));
      VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
      submit.commandBufferCount = 1;
      submit.pCommandBuffers = &f.commands;
      CHECK_VK(vkQueueSubmit(queue, 1, &submit, f.fence));
      f.number = n;
    }
    std::printf("%d frames, %d in flight: worst difference from the host path %.3g; staging bytes per frame: %llu\n",
                checked, kInFlight, worst, static_cast<unsigned long long>(checked ? staging / checked : 0));
    if (worst > 1e-5 || checked != kFrames || staging != 0) status = 1;
    vkDeviceWaitIdle(device);
    for (Frame& f : frames) {
      vkDestroyFence(device, f.fence, nullptr);
      vkDestroyCommandPool(device, f.pool, nullptr);
      f.execution.reset();  // vkfuse's objects go before the buffers they bind
      for (AppBuffer* b : {&f.input, &f.output, &f.readback}) {
        vkDestroyBuffer(device, b->buffer, nullptr);
        vkFreeMemory(device, b->memory, nullptr);
      }
    }
  }
  // 4. The application destroys its device after every vkfuse object made on it.
  vkDestroyDevice(device, nullptr);
  if (messenger) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT"));
    destroy(instance, messenger, nullptr);
  }
  vkDestroyInstance(instance, nullptr);
  if (validation) std::printf("validation messages: %u\n", g_messages);
  return status != 0 || g_messages != 0;
}
