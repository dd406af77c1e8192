// What the interop tests share: the application's device as an ExternalDevice, the model
// (tests/data/models/tiny_cnn) and its host-path outputs, a readback pass.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include <vkfuse/interop.hpp>
#include <vkfuse/vkfuse.hpp>

#include "interop/app_vulkan.h"

namespace vkfuse::testing {

extern const std::string kModelDir;

ExternalDevice external(const AppVulkan& app);
Context wrap(const ExternalDevice& d);                 // REQUIREs success; memory-only kernel cache
Context wrap(const AppVulkan& app);
Graph model();                                         // tiny_cnn
HostTensor model_input(float shift = 0.0f);            // its input.npy, every value + shift
Session session(const Context& context, const Graph& graph);
// The host path's output for `input`: what every device path must reproduce byte for byte.
HostTensor host_output(Session& s, const HostTensor& input);
// The application's readback pass: `bytes` of `src` at `offset` into host-visible `dst`, then visible
// to the host.
void read_back(VkCommandBuffer cb, VkBuffer src, VkDeviceSize offset, const AppBuffer& dst, VkDeviceSize bytes);
void check_equal(const void* got, const HostTensor& want);

// The application's 2D image (optimal tiling, one level, one layer) with a view of it.
struct AppImage {
  VkImage image = VK_NULL_HANDLE;
  VkImageView view = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
};
AppImage make_image(AppVulkan& app, std::uint32_t width, std::uint32_t height, VkFormat format, VkImageUsageFlags usage);
void destroy_image(AppVulkan& app, AppImage& img);

}  // namespace vkfuse::testing

#define OK(expr)                                                         \
  do {                                                                   \
    const ::vkfuse::Status status_ = (expr);                             \
    REQUIRE_MESSAGE(status_.ok(), #expr << ": " << status_.to_string()); \
  } while (0)
