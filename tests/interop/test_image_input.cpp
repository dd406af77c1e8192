// Image inputs (SessionOptions::image_inputs, Execution::bind_image): the application's RGBA8 image,
// uploaded by its own pass, sampled by the model's first kernels with the resize and normalization in
// their loads; checked against the host path on the same pixels resized on the CPU, under validation
// and synchronization validation.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <vkfuse/interop.hpp>
#include <vkfuse/onnx.hpp>
#include <vkfuse/vkfuse.hpp>

#include "interop/interop_support.h"

namespace vkfuse::testing {
namespace {

// The application's pass that uploads the pixels: UNDEFINED -> TRANSFER_DST, then the copy.
void upload_pixels(VkCommandBuffer cb, const AppImage& img, const AppBuffer& staging, std::uint32_t width,
                   std::uint32_t height) {
  VkImageMemoryBarrier to_dst{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
  to_dst.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  to_dst.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  to_dst.newLayout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
  to_dst.srcQueueFamilyIndex = to_dst.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  to_dst.image = img.image;
  to_dst.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
  vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, nullptr, 0, nullptr, 1,
                       &to_dst);
  VkBufferImageCopy region{};
  region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
  region.imageExtent = {width, height, 1};
  vkCmdCopyBufferToImage(cb, staging.buffer, img.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
}

// What the sampler computes, on the CPU: bilinear at pixel centres, clamped to the edge; `pad` outside.
HostTensor preprocess_on_cpu(const std::vector<std::uint8_t>& rgba, std::uint32_t iw, std::uint32_t ih, const Shape& shape,
                             const ImageInput& in) {
  const std::int64_t c_count = shape[1], h = shape[2], w = shape[3];
  double sx = 1.0 / w, sy = 1.0 / h, ox = 0.0, oy = 0.0;
  if (in.fit == ImageInput::Fit::kCenterCrop) {
    const double cw = std::min<double>(iw, ih * double(w) / h), ch = std::min<double>(ih, iw * double(h) / w);
    sx = cw / (w * double(iw)), sy = ch / (h * double(ih)), ox = (iw - cw) / 2.0 / iw, oy = (ih - ch) / 2.0 / ih;
  } else if (in.fit == ImageInput::Fit::kLetterbox) {
    const double f = std::min(double(w) / iw, double(h) / ih);
    const double px = (w - iw * f) / 2.0, py = (h - ih * f) / 2.0;
    sx = 1.0 / (iw * f), sy = 1.0 / (ih * f), ox = -px / (iw * f), oy = -py / (ih * f);
  }
  auto texel = [&](std::int64_t x, std::int64_t y, int comp) {
    x = std::clamp<std::int64_t>(x, 0, iw - 1), y = std::clamp<std::int64_t>(y, 0, ih - 1);
    return rgba[static_cast<std::size_t>((y * iw + x) * 4 + comp)] / 255.0;
  };
  std::vector<float> out(static_cast<std::size_t>(c_count * h * w));
  for (std::int64_t c = 0; c < c_count; ++c)
    for (std::int64_t y = 0; y < h; ++y)
      for (std::int64_t x = 0; x < w; ++x) {
        const double u = (x + 0.5) * sx + ox, v = (y + 0.5) * sy + oy;
        double value = in.pad;
        if (u >= 0 && u <= 1 && v >= 0 && v <= 1) {
          const double px = u * iw - 0.5, py = v * ih - 0.5;
          const double x0 = std::floor(px), y0 = std::floor(py), fx = px - x0, fy = py - y0;
          const int comp = in.channels[static_cast<std::size_t>(c)];
          const auto X = static_cast<std::int64_t>(x0), Y = static_cast<std::int64_t>(y0);
          const double s = (1 - fx) * (1 - fy) * texel(X, Y, comp) + fx * (1 - fy) * texel(X + 1, Y, comp) +
                           (1 - fx) * fy * texel(X, Y + 1, comp) + fx * fy * texel(X + 1, Y + 1, comp);
          value = (s * in.scale - in.mean[static_cast<std::size_t>(c)]) / in.std[static_cast<std::size_t>(c)];
        }
        out[static_cast<std::size_t>((c * h + y) * w + x)] = static_cast<float>(value);
      }
  return HostTensor::from_floats(shape, out);
}

}  // namespace

TEST_CASE("interop: an RGBA8 image input, its resize and normalization fused into the first kernel's loads") {
  AppVulkan app;
  {
    Context context = wrap(app);
    const Graph graph = model();
    Session plain = session(context, graph);
    constexpr std::uint32_t kWidth = 45, kHeight = 37;  // odd sizes, another aspect than the model's
    std::vector<std::uint8_t> pixels(kWidth * kHeight * 4);
    for (std::uint32_t y = 0; y < kHeight; ++y)
      for (std::uint32_t x = 0; x < kWidth; ++x)
        for (std::uint32_t c = 0; c < 4; ++c)
          pixels[(y * kWidth + x) * 4 + c] =
              static_cast<std::uint8_t>(128 + 100 * std::sin(0.21 * x + 0.33 * y + 1.7 * c));
    AppBuffer staging = app.make_buffer(pixels.size(), VK_BUFFER_USAGE_TRANSFER_SRC_BIT, true);
    std::memcpy(staging.mapped, pixels.data(), pixels.size());
    AppImage img = make_image(app, kWidth, kHeight, VK_FORMAT_R8G8B8A8_UNORM,
                              VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT);

    struct Case {
      const char* name;
      ImageInput input;
    };
    std::vector<Case> cases(5);
    cases[0].name = "stretch, ImageNet normalization";
    cases[0].input.mean = {0.485f, 0.456f, 0.406f, 0.0f};
    cases[0].input.std = {0.229f, 0.224f, 0.225f, 1.0f};
    cases[1].name = "center crop, blue and red swapped, 0..255";
    cases[1].input.fit = ImageInput::Fit::kCenterCrop;
    cases[1].input.channels = {2, 1, 0, 3};
    cases[1].input.scale = 255.0f;
    cases[1].input.mean = {100.0f, 110.0f, 120.0f, 0.0f};
    cases[1].input.std = {50.0f, 60.0f, 70.0f, 1.0f};
    cases[2].name = "letterbox with a border of 0.5";
    cases[2].input.fit = ImageInput::Fit::kLetterbox;
    cases[2].input.pad = 0.5f;
    cases[3].name = "fp16 storage: the image read in the Cast that the first Conv loads";
    OnnxOptions fp16;
    fp16.float_dtype = DType::kF16;
    auto graph16 = load_onnx(kModelDir + "/model.onnx", fp16);
    REQUIRE(graph16.ok());
    Session plain16 = session(context, *graph16);
    cases[4].name = "tiny_transformer: the image read by its patch-embedding Conv";
    cases[4].input.mean = {0.5f, 0.5f, 0.5f, 0.0f};
    auto transformer = load_onnx(std::string(VKFUSE_TEST_DATA_DIR) + "/models/tiny_transformer/model.onnx");
    REQUIRE(transformer.ok());
    Session plain_transformer = session(context, *transformer);
    bool first = true;
    // The image's layout from one case to the next: the second case leaves it TRANSFER_DST_OPTIMAL (as
    // for a decoder's next upload), which the third's record() moves back.
    VkImageLayout layout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
    for (Case& c : cases) {
      INFO(c.name);
      const bool half = &c == &cases[3], vit = &c == &cases[4];
      const Graph& graph_used = half ? *graph16 : vit ? *transformer : graph;
      Session& reference = half ? plain16 : vit ? plain_transformer : plain;
      c.input.width = kWidth;
      c.input.height = kHeight;
      SessionOptions options;
      options.image_inputs["input"] = c.input;
      auto s = Session::create(context, graph_used, options);
      REQUIRE_MESSAGE(s.ok(), s.status().to_string());
      CHECK(s->dispatch_count() == reference.dispatch_count());  // the pre-processing adds no dispatch
      CHECK(s->run({}).status().message().find("run it through an Execution") != std::string::npos);
      const HostTensor want = host_output(reference, preprocess_on_cpu(pixels, kWidth, kHeight, graph_used.inputs().at(0).shape, c.input));
      auto frame = s->create_execution();
      REQUIRE(frame.ok());
      const std::string output_name = frame->output_names().at(0);
      CHECK(frame->bind("input", {staging.buffer, 0, 64}).message().find("is an image input") != std::string::npos);
      const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT;
      AppBuffer out = app.make_buffer(want.bytes.size(), usage, false);
      AppBuffer readback = app.make_buffer(want.bytes.size(), VK_BUFFER_USAGE_TRANSFER_DST_BIT, true);
      ImageBinding binding{img.image, img.view};
      binding.layout = layout;
      binding.final_layout = &c == &cases[1] ? VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL : VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
      layout = binding.final_layout;
      ImageBinding bad = binding;
      bad.layout = VK_IMAGE_LAYOUT_UNDEFINED;
      CHECK(frame->bind_image("input", bad).message().find("UNDEFINED and PREINITIALIZED") != std::string::npos);
      bad = binding;
      bad.extent = {kWidth + 1, kHeight};
      CHECK(frame->bind_image("input", bad).message().find("compiled for 45x37") != std::string::npos);
      binding.extent = {kWidth, kHeight};
      binding.format = VK_FORMAT_R8G8B8A8_UNORM;
      OK(frame->bind_image("input", binding));
      CHECK(frame->bind_image(output_name, binding).message().find("is not an image output") != std::string::npos);
      OK(frame->bind(output_name, {out.buffer, 0, want.bytes.size(), usage}));
      VkCommandBuffer cb = app.begin_commands();
      if (first) upload_pixels(cb, img, staging, kWidth, kHeight);
      RecordSync sync;
      sync.before = {VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT};
      sync.after = {VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT};
      OK(frame->record(cb, sync));
      read_back(cb, out.buffer, 0, readback, want.bytes.size());
      app.submit(cb, {}, {}, {}, {});
      first = false;
      // The sampler's bilinear weights may be coarser than the CPU's doubles (8 bits on some hardware);
      // lavapipe's reads within 1e-3 of the largest output.
      const std::vector<float> expected = want.to_floats();
      const float* got = static_cast<const float*>(readback.mapped);
      float largest = 0.0f, worst = 0.0f;
      for (std::size_t i = 0; i < expected.size(); ++i) {
        largest = std::max(largest, std::fabs(expected[i]));
        worst = std::max(worst, std::fabs(got[i] - expected[i]));
      }
      INFO("worst " << worst << " of largest " << largest);
      CHECK(largest > 0.0f);
      CHECK(worst <= (half ? 3e-2f : 5e-3f) * largest);
      CHECK(frame->last_staging_bytes() == 0);
      frame = Result<Execution>(make_error(ErrorCode::kInternal, "released"));
      app.destroy(out);
      app.destroy(readback);
    }
    destroy_image(app, img);
    app.destroy(staging);
  }
  CHECK_MESSAGE(app.messages() == 0, app.first_message());
}

}  // namespace vkfuse::testing
