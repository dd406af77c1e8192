// engine_interop: vkfuse inside an application's own Vulkan, the way a game or a video viewer uses it.
// The application creates the instance, device and queue, owns the frame's RGBA8 image and the image
// the model's output is drawn from, and records one command buffer per frame: its own pass uploads the
// frame, vkfuse's dispatches sample it and write the output image, its own pass reads that image back.
// Three frames are in flight, each with its own vkfuse::Execution and one copy of the weights. Every
// frame is checked against the host path.
#include <vulkan/vulkan.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
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

constexpr std::uint32_t kSize = 64;  // the frame and the model's input and output are 64 x 64

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
  const vkfuse::Tensor x = b.input("frame", {1, 3, kSize, kSize});
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
struct AppImage {
  VkImage image = VK_NULL_HANDLE;
  VkImageView view = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
};

// The application's own allocations (an engine would use its allocator).
bool allocate(VkPhysicalDevice physical, VkDevice device, const VkMemoryRequirements& req, bool host, VkDeviceMemory& out) {
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
  return alloc.memoryTypeIndex < mem.memoryTypeCount && vkAllocateMemory(device, &alloc, nullptr, &out) == VK_SUCCESS;
}

// A host-visible buffer: the frame's pixels on their way up, the output's texels on their way back.
bool make_buffer(VkPhysicalDevice physical, VkDevice device, VkDeviceSize size, VkBufferUsageFlags usage, AppBuffer& out) {
  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = size;
  info.usage = usage;
  if (vkCreateBuffer(device, &info, nullptr, &out.buffer) != VK_SUCCESS) return false;
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(device, out.buffer, &req);
  return allocate(physical, device, req, true, out.memory) &&
         vkBindBufferMemory(device, out.buffer, out.memory, 0) == VK_SUCCESS &&
         vkMapMemory(device, out.memory, 0, VK_WHOLE_SIZE, 0, &out.mapped) == VK_SUCCESS;
}

// A 64 x 64 RGBA8 image: the decoded frame (sampled) or the model's output (a storage image).
bool make_image(VkPhysicalDevice physical, VkDevice device, VkImageUsageFlags usage, AppImage& out) {
  VkImageCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  info.imageType = VK_IMAGE_TYPE_2D;
  info.format = VK_FORMAT_R8G8B8A8_UNORM;
  info.extent = {kSize, kSize, 1};
  info.mipLevels = info.arrayLayers = 1;
  info.samples = VK_SAMPLE_COUNT_1_BIT;
  info.tiling = VK_IMAGE_TILING_OPTIMAL;
  info.usage = usage;
  if (vkCreateImage(device, &info, nullptr, &out.image) != VK_SUCCESS) return false;
  VkMemoryRequirements req{};
  vkGetImageMemoryRequirements(device, out.image, &req);
  if (!allocate(physical, device, req, false, out.memory) || vkBindImageMemory(device, out.image, out.memory, 0) != VK_SUCCESS)
    return false;
  VkImageViewCreateInfo view{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
  view.image = out.image;
  view.viewType = VK_IMAGE_VIEW_TYPE_2D;
  view.format = info.format;
  view.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  return vkCreateImageView(device, &view, nullptr, &out.view) == VK_SUCCESS;
}

// The frame's pixels, RGBA8 (the application's decoder or renderer would produce them).
std::vector<std::uint8_t> frame_pixels(int frame) {
  std::vector<std::uint8_t> rgba(kSize * kSize * 4);
  for (std::size_t i = 0; i < rgba.size(); ++i)
    rgba[i] = static_cast<std::uint8_t>(128 + 120 * std::sin(0.01f * static_cast<float>(i) + 0.5f * static_cast<float>(frame)));
  return rgba;
}

// The same frame as the model's input tensor [1, 3, 64, 64]: what the host path is given.
std::vector<float> frame_tensor(const std::vector<std::uint8_t>& rgba) {
  std::vector<float> x(3 * kSize * kSize);
  for (std::uint32_t c = 0; c < 3; ++c)
    for (std::uint32_t p = 0; p < kSize * kSize; ++p) x[c * kSize * kSize + p] = rgba[p * 4 + c] / 255.0f;
  return x;
}

void image_barrier(VkCommandBuffer cb, VkImage image, VkImageLayout from, VkImageLayout to, VkPipelineStageFlags src_stage,
                   VkAccessFlags src, VkPipelineStageFlags dst_stage, VkAccessFlags dst) {
  VkImageMemoryBarrier b{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
  b.srcAccessMask = src;
  b.dstAccessMask = dst;
  b.oldLayout = from;
  b.newLayout = to;
  b.srcQueueFamilyIndex = b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.image = image;
  b.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 0, nullptr, 0, nullptr, 1, &b);
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
    auto plain = vkfuse::Session::create(*context, *graph, {});  // the host path, to check against
    if (!plain.ok()) return fail("Session::create", plain.status());
    // The frame comes in as an image, resized and normalized in the first kernel's loads (here the
    // same size, read as 0..1); the mask goes out as an image, its four channels as RGBA.
    vkfuse::SessionOptions options;
    vkfuse::ImageInput frame_in;
    frame_in.width = frame_in.height = kSize;
    options.image_inputs["frame"] = frame_in;
    vkfuse::ImageOutput mask_out;
    mask_out.channels = {0, 1, 2, 3};
    mask_out.scale = {1.0f, 1.0f, 1.0f, 1.0f};
    mask_out.bias = {0.0f, 0.0f, 0.0f, 0.0f};
    options.image_outputs["mask"] = mask_out;
    auto session = vkfuse::Session::create(*context, *graph, options);
    if (!session.ok()) return fail("Session::create", session.status());

    constexpr int kInFlight = 3, kFrames = 9;
    const VkDeviceSize bytes = kSize * kSize * 4;
    struct Frame {
      std::optional<vkfuse::Execution> execution;
      AppImage input, output;
      AppBuffer upload, readback;
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
      if (!make_image(physical, device, VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT, f.input) ||
          !make_image(physical, device, VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT, f.output) ||
          !make_buffer(physical, device, bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, f.upload) ||
          !make_buffer(physical, device, bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, f.readback))
        return std::fprintf(stderr, "image or buffer allocation failed\n"), 1;
      // The frame arrives in TRANSFER_DST (the upload's layout) and goes back to it for the next
      // upload; the output starts UNDEFINED (written whole) and is left for the copy that reads it.
      vkfuse::ImageBinding in{f.input.image, f.input.view, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL};
      vkfuse::ImageBinding out{f.output.image, f.output.view, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL};
      in.format = out.format = VK_FORMAT_R8G8B8A8_UNORM;
      in.extent = out.extent = {kSize, kSize};
      if (vkfuse::Status s = f.execution->bind_image("frame", in); !s.ok()) return fail("bind_image", s);
      if (vkfuse::Status s = f.execution->bind_image("mask", out); !s.ok()) return fail("bind_image", s);
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
                graph->node_count(), plain->dispatch_count(), static_cast<unsigned long long>(session->weight_bytes()),
                kInFlight, static_cast<unsigned long long>(frames[0].execution->memory().total()));
    std::printf("image in and out: %zu dispatches, %zu more than with tensors (the mask's store after the last Conv)\n",
                session->dispatch_count(), session->dispatch_count() - plain->dispatch_count());

    // 3. The frame loop: wait for the slot's previous frame, check it, record and submit the next.
    int worst = 0;  // in steps of 1/255
    int checked = 0;
    std::uint64_t staging = 0;
    auto check = [&](Frame& f) -> bool {
      if (f.number < 0) return true;
      const std::vector<std::uint8_t> rgba = frame_pixels(f.number);
      auto want = plain->run({{"frame", vkfuse::HostTensor::from_floats({1, 3, kSize, kSize}, frame_tensor(rgba))}});
      if (!want.ok()) return fail("host path", want.status()), false;
      const std::vector<float> mask = want->at("mask").to_floats();  // [1, 4, 64, 64]
      const auto* got = static_cast<const std::uint8_t*>(f.readback.mapped);
      for (std::uint32_t p = 0; p < kSize * kSize; ++p)
        for (std::uint32_t c = 0; c < 4; ++c) {
          const int expected = static_cast<int>(std::lround(mask[c * kSize * kSize + p] * 255.0f));
          worst = std::max(worst, std::abs(got[p * 4 + c] - expected));
        }
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
      // The application's pass uploads the frame (its previous contents dropped).
      const std::vector<std::uint8_t> rgba = frame_pixels(n);
      std::memcpy(f.upload.mapped, rgba.data(), rgba.size());
      image_barrier(f.commands, f.input.image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
      VkBufferImageCopy region{};
      region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
      region.imageExtent = {kSize, kSize, 1};
      vkCmdCopyBufferToImage(f.commands, f.upload.buffer, f.input.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
      // vkfuse: the frame sampled in the first kernel's loads, the mask's texels stored by the last.
      vkfuse::RecordSync sync;
      sync.before = {VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT};
      sync.after = {VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
      if (vkfuse::Status s = f.execution->record(f.commands, sync); !s.ok()) return fail("record", s);
      // The application's pass reads the mask (a renderer would sample it in a draw instead).
      vkCmdCopyImageToBuffer(f.commands, f.output.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, f.readback.buffer, 1, &region);
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
    std::printf("%d frames, %d in flight: worst difference from the host path %d/255; staging bytes per frame: %llu\n",
                checked, kInFlight, worst, static_cast<unsigned long long>(checked ? staging / checked : 0));
    if (worst > 1 || checked != kFrames || staging != 0) status = 1;
    vkDeviceWaitIdle(device);
    for (Frame& f : frames) {
      vkDestroyFence(device, f.fence, nullptr);
      vkDestroyCommandPool(device, f.pool, nullptr);
      f.execution.reset();  // vkfuse's objects go before the images they bind
      for (AppImage* img : {&f.input, &f.output}) {
        vkDestroyImageView(device, img->view, nullptr);
        vkDestroyImage(device, img->image, nullptr);
        vkFreeMemory(device, img->memory, nullptr);
      }
      for (AppBuffer* b : {&f.upload, &f.readback}) {
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
