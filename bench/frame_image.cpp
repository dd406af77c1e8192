#include "bench/frame_image.h"

#include <vulkan/vulkan.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include <vkfuse/interop.hpp>

#include "bench/bench_timing.h"

namespace vkfuse::bench {
namespace {

using Clock = std::chrono::steady_clock;

int fail(const char* what, const Status& status) {
  std::fprintf(stderr, "vkfuse_bench_frame: %s: %s\n", what, status.to_string().c_str());
  return 1;
}
#define BENCH_VK(call)                                                                   \
  do {                                                                                   \
    if ((call) != VK_SUCCESS) return std::fprintf(stderr, "%s failed\n", #call), 1;     \
  } while (0)

constexpr std::array<float, 4> kMean{0.485f, 0.456f, 0.406f, 0.0f}, kStd{0.229f, 0.224f, 0.225f, 1.0f};

// The frame as the CPU holds it after decoding: RGBA8 rows.
std::vector<std::uint8_t> make_frame(std::uint32_t w, std::uint32_t h) {
  std::vector<std::uint8_t> rgba(static_cast<std::size_t>(w) * h * 4);
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x)
      for (std::uint32_t c = 0; c < 4; ++c)
        rgba[(static_cast<std::size_t>(y) * w + x) * 4 + c] = static_cast<std::uint8_t>((x * 3 + y * 5 + c * 70) & 255);
  return rgba;
}

// The host path's pre-processing: bilinear resize at pixel centres and ImageNet normalization, NCHW.
void preprocess(const std::vector<std::uint8_t>& rgba, std::uint32_t iw, std::uint32_t ih, const Shape& shape,
                std::vector<float>& out) {
  const std::int64_t C = shape[1], H = shape[2], W = shape[3];
  out.resize(static_cast<std::size_t>(C * H * W));
  for (std::int64_t y = 0; y < H; ++y) {
    const float py = std::clamp((y + 0.5f) * ih / H - 0.5f, 0.0f, ih - 1.0f);
    const auto y0 = static_cast<std::uint32_t>(py);
    const std::uint32_t y1 = std::min(y0 + 1, ih - 1);
    const float fy = py - y0;
    for (std::int64_t x = 0; x < W; ++x) {
      const float px = std::clamp((x + 0.5f) * iw / W - 0.5f, 0.0f, iw - 1.0f);
      const auto x0 = static_cast<std::uint32_t>(px);
      const std::uint32_t x1 = std::min(x0 + 1, iw - 1);
      const float fx = px - x0;
      for (std::int64_t c = 0; c < C; ++c) {
        auto at = [&](std::uint32_t xx, std::uint32_t yy) { return rgba[(static_cast<std::size_t>(yy) * iw + xx) * 4 + c] / 255.0f; };
        const float v = (1 - fy) * ((1 - fx) * at(x0, y0) + fx * at(x1, y0)) + fy * ((1 - fx) * at(x0, y1) + fx * at(x1, y1));
        out[static_cast<std::size_t>((c * H + y) * W + x)] = (v - kMean[c]) / kStd[c];
      }
    }
  }
}

// A device-local RGBA8 2D image and its view, the bench's own.
struct BenchImage {
  VkImage image = VK_NULL_HANDLE;
  VkImageView view = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
};

std::uint32_t memory_type(const VulkanHandles& vk, std::uint32_t bits, VkMemoryPropertyFlags want) {
  VkPhysicalDeviceMemoryProperties mem{};
  vkGetPhysicalDeviceMemoryProperties(vk.physical_device, &mem);
  for (std::uint32_t t = 0; t < mem.memoryTypeCount; ++t)
    if ((bits >> t & 1u) && (mem.memoryTypes[t].propertyFlags & want) == want) return t;
  return 0u;
}

bool make_image(const VulkanHandles& vk, std::uint32_t width, std::uint32_t height, VkImageUsageFlags usage, BenchImage& img) {
  VkImageCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  info.imageType = VK_IMAGE_TYPE_2D;
  info.format = VK_FORMAT_R8G8B8A8_UNORM;
  info.extent = {width, height, 1};
  info.mipLevels = info.arrayLayers = 1;
  info.samples = VK_SAMPLE_COUNT_1_BIT;
  info.tiling = VK_IMAGE_TILING_OPTIMAL;
  info.usage = usage;
  if (vkCreateImage(vk.device, &info, nullptr, &img.image) != VK_SUCCESS) return false;
  VkMemoryRequirements req{};
  vkGetImageMemoryRequirements(vk.device, img.image, &req);
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex = memory_type(vk, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  if (vkAllocateMemory(vk.device, &alloc, nullptr, &img.memory) != VK_SUCCESS) return false;
  if (vkBindImageMemory(vk.device, img.image, img.memory, 0) != VK_SUCCESS) return false;
  VkImageViewCreateInfo view_info{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
  view_info.image = img.image;
  view_info.viewType = VK_IMAGE_VIEW_TYPE_2D;
  view_info.format = info.format;
  view_info.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  return vkCreateImageView(vk.device, &view_info, nullptr, &img.view) == VK_SUCCESS;
}

void destroy_image(const VulkanHandles& vk, BenchImage& img) {
  vkDestroyImageView(vk.device, img.view, nullptr);
  vkDestroyImage(vk.device, img.image, nullptr);
  vkFreeMemory(vk.device, img.memory, nullptr);
}

// The segmentation display an application draws: each pixel's best class through a palette, RGBA8.
std::vector<std::array<float, 4>> class_palette(std::int64_t classes) {
  std::vector<std::array<float, 4>> palette;
  for (std::int64_t c = 0; c < classes; ++c)
    palette.push_back({static_cast<float>((c * 67) % 256) / 255.0f, static_cast<float>((c * 131) % 256) / 255.0f,
                       static_cast<float>((c * 199) % 256) / 255.0f, 1.0f});
  return palette;
}

// The host path's post-processing of scores [1, C, H, W]: argmax per pixel, palette, RGBA8 rows.
void palette_on_cpu(const std::vector<float>& scores, const Shape& shape, const std::vector<std::array<float, 4>>& palette,
                    std::vector<std::uint8_t>& rgba) {
  const std::int64_t C = shape[1], pixels = shape[2] * shape[3];
  rgba.resize(static_cast<std::size_t>(pixels * 4));
  for (std::int64_t p = 0; p < pixels; ++p) {
    std::int64_t best = 0;
    for (std::int64_t c = 1; c < C; ++c)
      if (scores[static_cast<std::size_t>(c * pixels + p)] > scores[static_cast<std::size_t>(best * pixels + p)]) best = c;
    for (std::size_t i = 0; i < 4; ++i)
      rgba[static_cast<std::size_t>(p * 4) + i] =
          static_cast<std::uint8_t>(palette[static_cast<std::size_t>(best)][i] * 255.0f + 0.5f);
  }
}

template <typename Frame>
Result<double> per_frame_ms(int frames, Frame frame) {
  std::vector<double> ms;
  for (int i = 0; i < frames + frames / 5; ++i) {
    const auto start = Clock::now();
    if (Status s = frame(); !s.ok()) return s;
    if (i >= frames / 5) ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int run_image_frames(const Context& context, const Graph& graph, const std::string& model, const std::string& precision,
                     std::uint32_t width, std::uint32_t height, int frames, bool palette_output) {
  const TensorDesc input = graph.inputs().at(0);
  const TensorDesc output = graph.outputs().at(0);
  const std::vector<std::uint8_t> rgba = make_frame(width, height);
  SessionOptions plain_options;
  plain_options.profile = false;
  auto plain = Session::create(context, graph, plain_options);
  if (!plain.ok()) return fail("Session::create", plain.status());

  if (palette_output && output.shape.size() != 4)
    return fail("--output-image", make_error(ErrorCode::kInvalidArgument, "the output is not [1, C, H, W]"));
  const std::vector<std::array<float, 4>> palette = class_palette(palette_output ? output.shape[1] : 0);

  // 1. Host path: CPU resize + normalize, then upload, run, download (and, for an image output, the
  // CPU's argmax and palette).
  std::vector<float> tensor;
  std::vector<std::uint8_t> shown;
  auto host_ms = per_frame_ms(frames, [&]() -> Status {
    preprocess(rgba, width, height, input.shape, tensor);
    VKFUSE_ASSIGN_OR_RETURN(auto out, plain->run({{input.name, HostTensor::from_floats(input.shape, tensor, input.dtype)}}));
    if (palette_output) palette_on_cpu(out.at(output.name).to_floats(), output.shape, palette, shown);
    return {};
  });
  if (!host_ms.ok()) return fail("host path", host_ms.status());

  // 2. Device path: the frame is a VkImage on the device (a decoder's output); the first kernels sample it.
  SessionOptions options = plain_options;
  ImageInput image_input;
  image_input.width = width;
  image_input.height = height;
  image_input.mean = kMean;
  image_input.std = kStd;
  options.image_inputs[input.name] = image_input;
  if (palette_output) {
    ImageOutput image_output;
    image_output.mode = ImageOutput::Mode::kPalette;
    image_output.palette = palette;
    options.image_outputs[output.name] = image_output;
  }
  auto session = Session::create(context, graph, options);
  if (!session.ok()) return fail("Session::create (image input)", session.status());
  const VulkanHandles vk = vulkan_handles(context);
  BenchImage frame_image;
  if (!make_image(vk, width, height, VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT, frame_image))
    return std::fprintf(stderr, "vkfuse_bench_frame: the frame's image could not be made\n"), 1;
  const VkImage image = frame_image.image;
  const VkImageView view = frame_image.view;
  // Image output: one RGBA8 image per frame in flight, which the application would draw.
  BenchImage shown_images[2];
  if (palette_output)
    for (BenchImage& shown_image : shown_images)
      if (!make_image(vk, static_cast<std::uint32_t>(output.shape[3]), static_cast<std::uint32_t>(output.shape[2]),
                      VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_SAMPLED_BIT, shown_image))
        return std::fprintf(stderr, "vkfuse_bench_frame: the output image could not be made\n"), 1;
  // The frame's pixels, once, through a staging buffer of the bench's own.
  VkBufferCreateInfo staging_info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  staging_info.size = rgba.size();
  staging_info.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
  VkBuffer staging = VK_NULL_HANDLE;
  BENCH_VK(vkCreateBuffer(vk.device, &staging_info, nullptr, &staging));
  VkMemoryRequirements req{};
  vkGetBufferMemoryRequirements(vk.device, staging, &req);
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  alloc.memoryTypeIndex =
      memory_type(vk, req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  VkDeviceMemory staging_memory = VK_NULL_HANDLE;
  BENCH_VK(vkAllocateMemory(vk.device, &alloc, nullptr, &staging_memory));
  BENCH_VK(vkBindBufferMemory(vk.device, staging, staging_memory, 0));
  void* mapped = nullptr;
  BENCH_VK(vkMapMemory(vk.device, staging_memory, 0, VK_WHOLE_SIZE, 0, &mapped));
  std::memcpy(mapped, rgba.data(), rgba.size());

  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool_info.queueFamilyIndex = vk.queue_family_index;
  VkCommandPool pool = VK_NULL_HANDLE;
  BENCH_VK(vkCreateCommandPool(vk.device, &pool_info, nullptr, &pool));
  VkCommandBuffer commands[2]{};
  VkCommandBufferAllocateInfo cb_info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cb_info.commandPool = pool;
  cb_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cb_info.commandBufferCount = 2;
  BENCH_VK(vkAllocateCommandBuffers(vk.device, &cb_info, commands));
  VkFence fences[2]{};
  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  fence_info.flags = VK_FENCE_CREATE_SIGNALED_BIT;
  for (VkFence& f : fences) BENCH_VK(vkCreateFence(vk.device, &fence_info, nullptr, &f));
  auto submit = [&](int slot) -> Status {
    VkSubmitInfo s{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    s.commandBufferCount = 1;
    s.pCommandBuffers = &commands[slot];
    if (vk.queue_lock.lock) vk.queue_lock.lock(vk.queue_lock.user);
    const VkResult r = vkQueueSubmit(vk.queue, 1, &s, fences[slot]);
    if (vk.queue_lock.unlock) vk.queue_lock.unlock(vk.queue_lock.user);
    return r == VK_SUCCESS ? Status() : make_error(ErrorCode::kVulkan, "vkQueueSubmit failed");
  };
  {  // upload: UNDEFINED -> TRANSFER_DST -> copy; vkfuse's first record() moves it on to SHADER_READ_ONLY
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    BENCH_VK(vkBeginCommandBuffer(commands[0], &begin));
    VkImageMemoryBarrier to_dst{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
    to_dst.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    to_dst.newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
    to_dst.srcQueueFamilyIndex = to_dst.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    to_dst.image = image;
    to_dst.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    vkCmdPipelineBarrier(commands[0], VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr, 0,
                         nullptr, 1, &to_dst);
    VkBufferImageCopy region{};
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {width, height, 1};
    vkCmdCopyBufferToImage(commands[0], staging, image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
    VkImageMemoryBarrier to_read = to_dst;
    to_read.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    to_read.dstAccessMask = VK_ACCESS_SHADER_READ_BIT;
    to_read.oldLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
    to_read.newLayout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    vkCmdPipelineBarrier(commands[0], VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 0, nullptr,
                         0, nullptr, 1, &to_read);
    BENCH_VK(vkEndCommandBuffer(commands[0]));
    BENCH_VK(vkResetFences(vk.device, 1, &fences[0]));
    if (Status s = submit(0); !s.ok()) return fail("upload", s);
    BENCH_VK(vkWaitForFences(vk.device, 1, &fences[0], VK_TRUE, UINT64_MAX));
  }
  std::vector<Execution> executions;
  for (int i = 0; i < 2; ++i) {
    auto e = session->create_execution();
    if (!e.ok()) return fail("create_execution", e.status());
    if (Status s = e->bind_image(input.name, {image, view}); !s.ok()) return fail("bind_image", s);
    if (palette_output) {
      ImageBinding shown_binding{shown_images[i].image, shown_images[i].view};
      shown_binding.layout = VK_IMAGE_LAYOUT_UNDEFINED;  // overwritten whole each frame
      shown_binding.final_layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
      if (Status s = e->bind_image(output.name, shown_binding); !s.ok()) return fail("bind_image (output)", s);
    } else if (auto out = e->device_tensor(output.name); !out.ok()) {
      return fail("device_tensor", out.status());
    }
    executions.push_back(std::move(e).value());
  }
  // One frame: the application's command buffer with vkfuse recorded into it, submitted, waited for
  // (`wait_first`) before it is recorded again.
  auto frame = [&](int slot, bool wait_after) -> Status {
    if (vkWaitForFences(vk.device, 1, &fences[slot], VK_TRUE, UINT64_MAX) != VK_SUCCESS)
      return make_error(ErrorCode::kVulkan, "vkWaitForFences failed");
    vkResetFences(vk.device, 1, &fences[slot]);
    vkResetCommandBuffer(commands[slot], 0);
    VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vkBeginCommandBuffer(commands[slot], &begin);
    RecordSync sync;
    sync.before = {VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT};
    sync.after = {VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT};
    VKFUSE_TRY(executions[static_cast<std::size_t>(slot)].record(commands[slot], sync));
    vkEndCommandBuffer(commands[slot]);
    VKFUSE_TRY(submit(slot));
    if (wait_after && vkWaitForFences(vk.device, 1, &fences[slot], VK_TRUE, UINT64_MAX) != VK_SUCCESS)
      return make_error(ErrorCode::kVulkan, "vkWaitForFences failed");
    return {};
  };
  auto device_ms = per_frame_ms(frames, [&] { return frame(0, true); });
  if (!device_ms.ok()) return fail("device path", device_ms.status());
  int n = 0;
  auto pipelined_ms = per_frame_ms(frames, [&] { return frame(n++ % 2, false); });
  if (!pipelined_ms.ok()) return fail("device path, 2 in flight", pipelined_ms.status());
  vkWaitForFences(vk.device, 2, fences, VK_TRUE, UINT64_MAX);
  auto gpu_ms = median_gpu_ms(*plain, 20.0, 5, 5);
  std::printf("{\"model\": \"%s\", \"precision\": \"%s\", \"frame\": \"%ux%u rgba8\", \"output\": \"%s\", \"dispatches_plain\": %zu, "
              "\"dispatches_image\": %zu, \"frames\": %d, \"host_ms\": %.4f, \"device_ms\": %.4f, "
              "\"device_2_in_flight_ms\": %.4f, \"gpu_ms_plain\": %.4f, \"device_staging_bytes\": %llu, "
              "\"host_over_device\": %.3f}\n",
              model.c_str(), precision.c_str(), width, height, palette_output ? "palette image" : "tensor",
              plain->dispatch_count(), session->dispatch_count(), frames,
              *host_ms, *device_ms, *pipelined_ms, gpu_ms.ok() ? *gpu_ms : 0.0,
              static_cast<unsigned long long>(executions[0].last_staging_bytes()), *host_ms / *device_ms);
  executions.clear();
  for (VkFence f : fences) vkDestroyFence(vk.device, f, nullptr);
  vkDestroyCommandPool(vk.device, pool, nullptr);
  vkDestroyBuffer(vk.device, staging, nullptr);
  vkFreeMemory(vk.device, staging_memory, nullptr);
  destroy_image(vk, frame_image);
  if (palette_output)
    for (BenchImage& shown_image : shown_images) destroy_image(vk, shown_image);
  return 0;
}

}  // namespace vkfuse::bench
