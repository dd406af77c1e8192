#include "interop/interop_support.h"

#include <cstring>

#include <vkfuse/onnx.hpp>
#include <vkfuse/tensor_io.hpp>

namespace vkfuse::testing {

const std::string kModelDir = std::string(VKFUSE_TEST_DATA_DIR) + "/models/tiny_cnn";

ExternalDevice external(const AppVulkan& app) {
  ExternalDevice d;
  d.instance = app.instance;
  d.physical_device = app.physical;
  d.device = app.device;
  d.queue_family_index = app.family;
  d.queue = app.queue;
  d.instance_api_version = VK_API_VERSION_1_2;
  d.device_create_info = &app.create_info;
  d.debug_utils = true;
  return d;
}

Context wrap(const ExternalDevice& d) {
  ContextOptions options;
  options.cache_dir = "";
  auto context = Context::wrap(d, options);
  REQUIRE_MESSAGE(context.ok(), context.status().to_string());
  return std::move(context).value();
}
Context wrap(const AppVulkan& app) { return wrap(external(app)); }

Graph model() {
  auto graph = load_onnx(kModelDir + "/model.onnx");
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  return std::move(graph).value();
}

HostTensor model_input(float shift) {
  auto input = read_tensor_file(kModelDir + "/input.npy");
  REQUIRE(input.ok());
  if (shift == 0.0f) return *input;
  std::vector<float> values = input->to_floats();
  for (float& v : values) v += shift;
  return HostTensor::from_floats(input->shape, values, input->dtype);
}

Session session(const Context& context, const Graph& graph) {
  auto s = Session::create(context, graph, {});
  REQUIRE_MESSAGE(s.ok(), s.status().to_string());
  return std::move(s).value();
}

// The host path's output for `input`: what every device path must reproduce byte for byte.
HostTensor host_output(Session& s, const HostTensor& input) {
  auto out = s.run({{"input", input}});
  REQUIRE_MESSAGE(out.ok(), out.status().to_string());
  REQUIRE(out->size() == 1);
  return out->begin()->second;
}

// The application's readback pass: `bytes` of `src` at `offset` into host-visible `dst`, then visible
// to the host.
void read_back(VkCommandBuffer cb, VkBuffer src, VkDeviceSize offset, const AppBuffer& dst, VkDeviceSize bytes) {
  const VkBufferCopy down{offset, 0, bytes};
  vkCmdCopyBuffer(cb, src, dst.buffer, 1, &down);
  VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, nullptr, 0, nullptr);
}

AppImage make_image(AppVulkan& app, std::uint32_t width, std::uint32_t height, VkFormat format, VkImageUsageFlags usage) {
  AppImage img;
  VkImageCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  info.imageType = VK_IMAGE_TYPE_2D;
  info.format = format;
  info.extent = {width, height, 1};
  info.mipLevels = info.arrayLayers = 1;
  info.samples = VK_SAMPLE_COUNT_1_BIT;
  info.tiling = VK_IMAGE_TILING_OPTIMAL;
  info.usage = usage;
  REQUIRE(vkCreateImage(app.device, &info, nullptr, &img.image) == VK_SUCCESS);
  VkMemoryRequirements req{};
  vkGetImageMemoryRequirements(app.device, img.image, &req);
  VkPhysicalDeviceMemoryProperties mem{};
  vkGetPhysicalDeviceMemoryProperties(app.physical, &mem);
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = req.size;
  while (!((req.memoryTypeBits >> alloc.memoryTypeIndex) & 1u)) ++alloc.memoryTypeIndex;
  REQUIRE(vkAllocateMemory(app.device, &alloc, nullptr, &img.memory) == VK_SUCCESS);
  REQUIRE(vkBindImageMemory(app.device, img.image, img.memory, 0) == VK_SUCCESS);
  VkImageViewCreateInfo view{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
  view.image = img.image;
  view.viewType = VK_IMAGE_VIEW_TYPE_2D;
  view.format = format;
  view.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  REQUIRE(vkCreateImageView(app.device, &view, nullptr, &img.view) == VK_SUCCESS);
  return img;
}

void destroy_image(AppVulkan& app, AppImage& img) {
  vkDestroyImageView(app.device, img.view, nullptr);
  vkDestroyImage(app.device, img.image, nullptr);
  vkFreeMemory(app.device, img.memory, nullptr);
}

void check_equal(const void* got, const HostTensor& want) {
  CHECK(std::memcmp(got, want.bytes.data(), want.bytes.size()) == 0);
}

}  // namespace vkfuse::testing
