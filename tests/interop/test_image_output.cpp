// Image outputs (SessionOptions::image_outputs, Execution::bind_image on an output): the model's last
// tensor written as texels into the application's storage image, recorded between the application's
// own upload pass and its own readback of the image; checked against the host path's tensor mapped
// on the CPU, fused and unfused, under validation and synchronization validation.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include <vkfuse/interop.hpp>
#include <vkfuse/vkfuse.hpp>

#include "interop/interop_support.h"

namespace vkfuse::testing {
namespace {

constexpr std::int64_t kHeight = 19, kWidth = 23;  // odd sizes: partial workgroups, x != y
using Ints = std::vector<std::int64_t>;

std::vector<float> wave(std::size_t n, double f, double phase = 0.0) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(std::sin(f * static_cast<double>(i) + phase));
  return v;
}

// Image-to-image: a 3x3 Conv, a bias and a Sigmoid (the chain fuses into the Conv's stores, so the
// image store is a dispatch of its own).
Graph conv_model() {
  GraphBuilder b;
  const Tensor x = b.input("x", {1, 3, kHeight, kWidth});
  const Tensor w = b.constant(HostTensor::from_floats({3, 3, 3, 3}, wave(81, 0.37)), "w");
  const Tensor bias = b.constant(HostTensor::from_floats({3}, {0.1f, -0.2f, 0.3f}), "bias");
  b.output(b.op("Sigmoid", {b.op("Conv", {x, w, bias}, {{"pads", Ints{1, 1, 1, 1}}})}), "out");
  auto g = b.build();
  REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  return *g;
}

// Image-to-image that ends in an elementwise chain of its own: tanh(x * 0.7) * 0.5 + 0.5, computed in
// the image store's loads (no dispatch added).
Graph elementwise_model() {
  GraphBuilder b;
  const Tensor x = b.input("x", {1, 3, kHeight, kWidth});
  const Tensor t = b.op("Tanh", {b.op("Mul", {x, b.scalar(0.7f)})});
  b.output(b.op("Add", {b.op("Mul", {t, b.scalar(0.5f)}), b.scalar(0.5f)}), "out");
  auto g = b.build();
  REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  return *g;
}

// Segmentation: a 1x1 Conv to 5 class scores.
Graph segmentation_model() {
  GraphBuilder b;
  const Tensor x = b.input("x", {1, 3, kHeight, kWidth});
  const Tensor w = b.constant(HostTensor::from_floats({5, 3, 1, 1}, wave(15, 1.3, 0.4)), "w");
  b.output(b.op("Conv", {x, w}), "out");
  auto g = b.build();
  REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  return *g;
}

// Segmentation as the torchvision heads end: class scores at a lower resolution, upsampled bilinearly
// (half_pixel) to the frame's size. The store computes the Resize's elements in its loads.
Graph upsampled_segmentation_model() {
  GraphBuilder b;
  const Tensor x = b.input("x", {1, 3, 8, 11});
  const Tensor w = b.constant(HostTensor::from_floats({6, 3, 1, 1}, wave(18, 0.9, 0.2)), "w");
  const Tensor scores = b.op("Conv", {x, w});
  b.output(b.op("Resize", {scores}, {{"sizes", Ints{1, 6, kHeight, kWidth}}, {"mode", 1.0f}}), "out");
  auto g = b.build();
  REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  return *g;
}

// The texels the image should hold, from the host path's tensor [1, C, H, W].
std::vector<float> texels_on_cpu(const HostTensor& out, const ImageOutput& io) {
  const std::vector<float> v = out.to_floats();
  const std::int64_t channels = out.shape[1], pixels = kHeight * kWidth;
  std::vector<float> t(static_cast<std::size_t>(pixels * 4));
  for (std::int64_t p = 0; p < pixels; ++p) {
    if (io.mode == ImageOutput::Mode::kPalette) {
      std::int64_t best = 0;
      for (std::int64_t c = 1; c < channels; ++c)
        if (v[static_cast<std::size_t>(c * pixels + p)] > v[static_cast<std::size_t>(best * pixels + p)]) best = c;
      for (std::size_t i = 0; i < 4; ++i)
        t[static_cast<std::size_t>(p * 4) + i] = io.palette[static_cast<std::size_t>(best) % io.palette.size()][i];
      continue;
    }
    for (std::size_t i = 0; i < 4; ++i) {
      const int src = io.channels[i];
      const float x = src < 0 ? 0.0f : v[static_cast<std::size_t>(src * pixels + p)];
      float y = x * io.scale[i] + io.bias[i];
      if (io.format == ImageOutput::Format::kRGBA8) y = std::clamp(y, 0.0f, 1.0f);
      t[static_cast<std::size_t>(p * 4) + i] = y;
    }
  }
  return t;
}

// Pixels whose two best class scores lie within `margin`: where rounding may pick either class.
std::vector<bool> near_ties(const HostTensor& out, float margin) {
  const std::vector<float> v = out.to_floats();
  const std::int64_t channels = out.shape[1], pixels = kHeight * kWidth;
  std::vector<bool> tie(static_cast<std::size_t>(pixels), false);
  for (std::int64_t p = 0; p < pixels; ++p) {
    std::vector<float> s;
    for (std::int64_t c = 0; c < channels; ++c) s.push_back(v[static_cast<std::size_t>(c * pixels + p)]);
    std::sort(s.rbegin(), s.rend());
    tie[static_cast<std::size_t>(p)] = s.size() > 1 && s[0] - s[1] < margin;
  }
  return tie;
}

// The application's pass after vkfuse's: the image (in TRANSFER_SRC_OPTIMAL, or GENERAL) copied into a
// host-visible buffer. vkfuse's record() made its texels visible to transfer reads; after a submit()
// the application's own barrier orders the copy after the compute writes.
void copy_image_out(VkCommandBuffer cb, const AppImage& img, VkImageLayout layout, const AppBuffer& dst, bool after_submit) {
  if (after_submit) {
    VkMemoryBarrier written{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    written.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    written.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &written, 0,
                         nullptr, 0, nullptr);
  }
  VkBufferImageCopy region{};
  region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
  region.imageExtent = {static_cast<std::uint32_t>(kWidth), static_cast<std::uint32_t>(kHeight), 1};
  vkCmdCopyImageToBuffer(cb, img.image, layout, dst.buffer, 1, &region);
  VkMemoryBarrier to_host{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, nullptr, 0, nullptr);
}

float read_texel(const AppBuffer& buffer, ImageOutput::Format format, std::size_t i) {
  if (format == ImageOutput::Format::kRGBA8) return static_cast<const std::uint8_t*>(buffer.mapped)[i] / 255.0f;
  return static_cast<const float*>(buffer.mapped)[i];
}

struct Case {
  const char* name;
  std::function<Graph()> graph;
  ImageOutput output;
  bool fusion = true;
  std::size_t added = 1;  // dispatches the store adds (fused)
  bool submit = false;    // the submit() path: a host input, the image in GENERAL throughout
  Shape input{1, 3, kHeight, kWidth};
};

std::vector<Case> cases() {
  std::vector<Case> all;
  Case color{"Conv -> Sigmoid into RGBA8, channels reversed, alpha 1", conv_model};
  color.output.channels = {2, 1, 0, -1};
  all.push_back(color);
  Case unfused = color;
  unfused.name = "the same, unfused";
  unfused.fusion = false;
  all.push_back(unfused);
  Case chain{"an elementwise tail computed in the store's loads, RGBA32F, scaled", elementwise_model};
  chain.output.format = ImageOutput::Format::kRGBA32F;
  chain.output.scale = {2.0f, -1.0f, 1.0f, 0.0f};
  chain.output.bias = {-0.5f, 1.0f, 0.0f, 0.25f};
  chain.added = 0;
  all.push_back(chain);
  Case submitted = chain;
  submitted.name = "the same through submit() from a host input";
  submitted.submit = true;
  all.push_back(submitted);
  Case palette{"segmentation: argmax over 5 classes through a 4-entry palette", segmentation_model};
  palette.output.mode = ImageOutput::Mode::kPalette;
  palette.output.palette = {{1, 0, 0, 1}, {0, 1, 0, 1}, {0, 0, 1, 1}, {1, 1, 1, 0.4f}};
  all.push_back(palette);
  Case upsampled{"segmentation upsampled by a bilinear Resize, computed in the store's loads", upsampled_segmentation_model};
  upsampled.output = palette.output;
  upsampled.input = {1, 3, 8, 11};
  upsampled.added = 0;
  all.push_back(upsampled);
  Case palette_unfused = palette;
  palette_unfused.name = "the same, unfused";
  palette_unfused.fusion = false;
  all.push_back(palette_unfused);
  return all;
}

}  // namespace

TEST_CASE("interop: image outputs, colour and palette, written by the last kernel into the application's image") {
  AppVulkan app;
  {
    Context context = wrap(app);
    for (const Case& c : cases()) {
      INFO(c.name);
      const HostTensor x = HostTensor::from_floats(c.input, wave(static_cast<std::size_t>(shape_numel(c.input)), 0.11, 0.3));
      const Graph graph = c.graph();
      SessionOptions plain_options;
      plain_options.fusion = c.fusion;
      auto plain = Session::create(context, graph, plain_options);
      REQUIRE_MESSAGE(plain.ok(), plain.status().to_string());
      auto host = plain->run({{"x", x}});
      REQUIRE_MESSAGE(host.ok(), host.status().to_string());
      const HostTensor& want_tensor = host->at("out");
      const std::vector<float> want = texels_on_cpu(want_tensor, c.output);

      SessionOptions options = plain_options;
      options.image_outputs["out"] = c.output;
      auto s = Session::create(context, graph, options);
      REQUIRE_MESSAGE(s.ok(), s.status().to_string());
      CHECK(s->dispatch_count() == plain->dispatch_count() + (c.fusion ? c.added : 1));
      const std::string last = s->groups().back().label;
      CHECK(last.find(c.output.mode == ImageOutput::Mode::kPalette ? "ImagePalette" : "ImageColor") != std::string::npos);
      CHECK(s->run({{"x", x}}).status().message().find("run it through an Execution") != std::string::npos);

      auto frame = s->create_execution();
      REQUIRE(frame.ok());
      CHECK(frame->output_names() == std::vector<std::string>{"out"});
      const bool rgba8 = c.output.format == ImageOutput::Format::kRGBA8;
      const VkFormat format = rgba8 ? VK_FORMAT_R8G8B8A8_UNORM : VK_FORMAT_R32G32B32A32_SFLOAT;
      AppImage img = make_image(app, kWidth, kHeight, format, VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT);
      const VkDeviceSize texel_bytes = rgba8 ? 4 : 16;
      AppBuffer readback = app.make_buffer(kHeight * kWidth * texel_bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, true);
      const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
      AppBuffer in = app.make_buffer(x.bytes.size(), usage, false);
      AppBuffer staging = app.make_buffer(x.bytes.size(), VK_BUFFER_USAGE_TRANSFER_SRC_BIT, true);
      std::memcpy(staging.mapped, x.bytes.data(), x.bytes.size());

      // Bad use first: each is refused and changes nothing.
      ImageBinding binding{img.image, img.view};
      binding.extent = {static_cast<std::uint32_t>(kWidth), static_cast<std::uint32_t>(kHeight)};
      binding.format = format;
      CHECK(frame->bind("out", {in.buffer, 0, in.size, usage}).message().find("is an image output") != std::string::npos);
      CHECK(frame->device_tensor("out").status().message().find("is an image") != std::string::npos);
      ImageBinding bad = binding;
      bad.extent = {static_cast<std::uint32_t>(kWidth), static_cast<std::uint32_t>(kHeight + 1)};
      CHECK(frame->bind_image("out", bad).message().find("compiled for 23x19") != std::string::npos);
      bad = binding;
      bad.format = rgba8 ? VK_FORMAT_R32G32B32A32_SFLOAT : VK_FORMAT_R8G8B8A8_UNORM;
      CHECK(frame->bind_image("out", bad).message().find("ImageOutput::format") != std::string::npos);
      bad = binding;
      bad.final_layout = VK_IMAGE_LAYOUT_UNDEFINED;
      CHECK(frame->bind_image("out", bad).message().find("not be left") != std::string::npos);
      CHECK(frame->bind_image("x", binding).message().find("is not an image input") != std::string::npos);

      VkCommandBuffer cb = app.begin_commands();
      VkImageLayout read_layout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
      if (c.submit) {
        // The image in GENERAL for good (the application's transition), the input from the host.
        VkImageMemoryBarrier general{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
        general.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
        general.newLayout = read_layout = VK_IMAGE_LAYOUT_GENERAL;
        general.srcQueueFamilyIndex = general.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
        general.image = img.image;
        general.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
        vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 0, nullptr, 0,
                             nullptr, 1, &general);
        app.submit(cb, {}, {}, {}, {});
        binding.layout = binding.final_layout = VK_IMAGE_LAYOUT_GENERAL;
        OK(frame->bind_image("out", binding));
        OK(frame->upload("x", x));
        auto ticket = frame->submit();
        REQUIRE_MESSAGE(ticket.ok(), ticket.status().to_string());
        OK(frame->wait());
        CHECK(frame->last_staging_bytes() == x.bytes.size());  // the input alone: nothing comes back
        cb = app.begin_commands();
        copy_image_out(cb, img, read_layout, readback, true);
        app.submit(cb, {}, {}, {}, {});
      } else {
        // Recorded between the application's upload of the input and its copy of the image.
        binding.layout = VK_IMAGE_LAYOUT_UNDEFINED;  // its old texels are dropped
        binding.final_layout = read_layout;
        OK(frame->bind_image("out", binding));
        OK(frame->bind("x", {in.buffer, 0, in.size, usage}));
        CHECK(frame->submit().status().message().find("must be in GENERAL") != std::string::npos);
        const VkBufferCopy up{0, 0, x.bytes.size()};
        vkCmdCopyBuffer(cb, staging.buffer, in.buffer, 1, &up);
        RecordSync sync;
        sync.before = {VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT};
        sync.after = {VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT};
        OK(frame->record(cb, sync));
        copy_image_out(cb, img, read_layout, readback, false);
        app.submit(cb, {}, {}, {}, {});
        CHECK(frame->last_staging_bytes() == 0);
      }

      // RGBA8 rounds to 1/255 (one step either way from the CPU's float); float formats to float32.
      const float tolerance = rgba8 ? 1.0f / 255.0f + 1e-6f : 1e-5f;
      const std::vector<bool> ties = c.output.mode == ImageOutput::Mode::kPalette ? near_ties(want_tensor, 1e-4f)
                                                                                  : std::vector<bool>(want.size() / 4, false);
      float worst = 0.0f;
      std::size_t compared = 0;
      for (std::size_t i = 0; i < want.size(); ++i) {
        if (ties[i / 4]) continue;
        ++compared;
        worst = std::max(worst, std::fabs(read_texel(readback, c.output.format, i) - want[i]));
      }
      INFO("worst texel difference " << worst << " over " << compared << " components");
      CHECK(compared > want.size() * 9 / 10);
      CHECK(worst <= tolerance);
      frame = Result<Execution>(make_error(ErrorCode::kInternal, "released"));
      destroy_image(app, img);
      app.destroy(readback);
      app.destroy(in);
      app.destroy(staging);
    }
  }
  CHECK_MESSAGE(app.messages() == 0, app.first_message());
}

}  // namespace vkfuse::testing
