// vkfuse inside an application's Vulkan (<vkfuse/interop.hpp>): the application's own instance and
// device (validation and synchronization validation on: any message fails), its buffers bound as the
// model's input and output, vkfuse recorded into its command buffer between its own passes, its
// semaphores, several executions in flight on one copy of the weights, and every bad use we detect.
// Results are compared with the host-tensor path (Session::run) of the same model: the same kernels,
// so the bytes must be equal.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <vector>

#include <vkfuse/interop.hpp>
#include <vkfuse/onnx.hpp>
#include <vkfuse/tensor_io.hpp>
#include <vkfuse/vkfuse.hpp>

#include "interop/app_vulkan.h"

namespace vkfuse::testing {
namespace {

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

HostTensor model_input(float shift = 0.0f) {
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

void check_equal(const void* got, const HostTensor& want) {
  CHECK(std::memcmp(got, want.bytes.data(), want.bytes.size()) == 0);
}

#define OK(expr)                                                     \
  do {                                                               \
    const ::vkfuse::Status status_ = (expr);                         \
    REQUIRE_MESSAGE(status_.ok(), #expr << ": " << status_.to_string()); \
  } while (0)

}  // namespace

TEST_CASE("interop: the model recorded into the application's command buffer between its own passes") {
  AppVulkan app;
  {
    Context context = wrap(app);
    CHECK(context.borrowed());
    const Graph graph = model();
    Session s = session(context, graph);
    const HostTensor input = model_input();
    const HostTensor want = host_output(s, input);
    const std::string output_name = s.create_execution()->output_names().at(0);

    auto frame = s.create_execution();
    REQUIRE_MESSAGE(frame.ok(), frame.status().to_string());
    const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    // The input at an offset into a larger buffer of the application's, as engines suballocate.
    const VkDeviceSize offset = 256;
    AppBuffer upload = app.make_buffer(input.bytes.size(), VK_BUFFER_USAGE_TRANSFER_SRC_BIT, true);
    AppBuffer in = app.make_buffer(offset + input.bytes.size(), usage, false);
    AppBuffer out = app.make_buffer(want.bytes.size(), usage, false);
    AppBuffer readback = app.make_buffer(want.bytes.size(), VK_BUFFER_USAGE_TRANSFER_DST_BIT, true);
    std::memcpy(upload.mapped, input.bytes.data(), input.bytes.size());
    OK(frame->bind("input", {in.buffer, offset, input.bytes.size(), usage}));
    OK(frame->bind(output_name, {out.buffer, 0, want.bytes.size(), usage}));

    const std::uint64_t weights_before = s.weight_bytes();
    for (int round = 0; round < 2; ++round) {  // the same execution recorded again in a new command buffer
      std::memset(readback.mapped, 0, want.bytes.size());
      VkCommandBuffer cb = app.begin_commands();
      const VkBufferCopy up{0, offset, input.bytes.size()};
      vkCmdCopyBuffer(cb, upload.buffer, in.buffer, 1, &up);  // the application's transfer pass writes the input
      RecordSync sync;
      sync.before = {VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT};
      sync.after = {VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
      OK(frame->record(cb, sync));
      read_back(cb, out.buffer, 0, readback, want.bytes.size());  // and a pass of its own reads the output
      app.submit(cb, {}, {}, {}, {});
      check_equal(readback.mapped, want);
      CHECK(frame->last_staging_bytes() == 0);
      auto ms = frame->last_gpu_ms();
      if (ms.ok()) CHECK(*ms > 0.0);
      else CHECK(ms.status().code() == ErrorCode::kUnsupported);
    }
    CHECK(s.weight_bytes() == weights_before);
    CHECK(frame->memory().staging_bytes == 0);
    CHECK(frame->memory().io_bytes == 0);  // both tensors are the application's
    frame = Result<Execution>(make_error(ErrorCode::kInternal, "released"));  // before the buffers it binds
    for (AppBuffer* b : {&upload, &in, &out, &readback}) app.destroy(*b);
  }
  CHECK_MESSAGE(app.messages() == 0, app.first_message());
}

TEST_CASE("interop: submit waits on the application's semaphores and signals binary and timeline ones") {
  AppVulkan app;
  REQUIRE(app.has_timeline);
  {
    Context context = wrap(app);
    const Graph graph = model();
    Session s = session(context, graph);
    const HostTensor input = model_input(0.25f);
    const HostTensor want = host_output(s, input);
    auto frame = s.create_execution();
    REQUIRE(frame.ok());
    const std::string output_name = frame->output_names().at(0);
    // vkfuse's own device buffers, written and read by the application's passes.
    auto in = frame->device_tensor("input");
    auto out = frame->device_tensor(output_name);
    REQUIRE(in.ok());
    REQUIRE(out.ok());
    AppBuffer upload = app.make_buffer(input.bytes.size(), VK_BUFFER_USAGE_TRANSFER_SRC_BIT, true);
    AppBuffer readback = app.make_buffer(want.bytes.size(), VK_BUFFER_USAGE_TRANSFER_DST_BIT, true);
    std::memcpy(upload.mapped, input.bytes.data(), input.bytes.size());
    const VkSemaphore written = app.make_semaphore(false);   // binary: the input is written
    const VkSemaphore timeline = app.make_semaphore(true);   // timeline: vkfuse is done, value 7

    VkCommandBuffer write = app.begin_commands();
    const VkBufferCopy up{0, in->offset, input.bytes.size()};
    vkCmdCopyBuffer(write, upload.buffer, in->buffer, 1, &up);
    app.submit(write, {}, {}, {written}, {0}, false);
    SubmitSync sync;
    sync.waits.push_back({written, 0, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT});
    sync.signals.push_back({timeline, 7});
    auto ticket = frame->submit(sync);
    REQUIRE_MESSAGE(ticket.ok(), ticket.status().to_string());
    CHECK(ticket->timeline != VK_NULL_HANDLE);
    CHECK(ticket->value == 1);
    // The application's read waits on the GPU for both: its own timeline value and vkfuse's ticket.
    VkCommandBuffer read = app.begin_commands();
    read_back(read, out->buffer, out->offset, readback, want.bytes.size());
    app.submit(read, {timeline, ticket->timeline}, {7, ticket->value}, {}, {});
    OK(frame->wait());
    check_equal(readback.mapped, want);
    CHECK(frame->last_staging_bytes() == 0);
    CHECK(frame->memory().staging_bytes == 0);
    app.wait_idle();
    frame = Result<Execution>(make_error(ErrorCode::kInternal, "released"));
    app.destroy(upload);
    app.destroy(readback);
  }
  CHECK_MESSAGE(app.messages() == 0, app.first_message());
}

TEST_CASE("interop: three executions in flight at once share one copy of the weights") {
  AppVulkan app;
  {
    Context context = wrap(app);
    const Graph graph = model();
    Session s = session(context, graph);
    constexpr int kFrames = 3;
    std::vector<HostTensor> inputs, wants;
    for (int f = 0; f < kFrames; ++f) {
      inputs.push_back(model_input(0.1f * static_cast<float>(f)));
      wants.push_back(host_output(s, inputs.back()));
    }
    CHECK(wants[0].bytes != wants[1].bytes);  // distinct inputs give distinct outputs: a mix-up would show
    const std::uint64_t weights = s.weight_bytes();
    REQUIRE(weights > 0);
    std::vector<Execution> frames;
    for (int f = 0; f < kFrames; ++f) {
      const std::uint64_t before = context.device_memory_bytes();
      auto e = s.create_execution();
      REQUIRE_MESSAGE(e.ok(), e.status().to_string());
      OK(e->upload("input", inputs[f]));
      // Everything this execution allocated is its own part: no weight was copied.
      CHECK(context.device_memory_bytes() - before == e->memory().total());
      frames.push_back(std::move(e).value());
    }
    CHECK(s.weight_bytes() == weights);
    for (int f = 0; f < kFrames; ++f) {
      auto ticket = frames[f].submit();
      REQUIRE_MESSAGE(ticket.ok(), ticket.status().to_string());
    }
    for (int f = 0; f < kFrames; ++f) {
      OK(frames[f].wait());
      auto got = frames[f].download(frames[f].output_names().at(0));
      REQUIRE_MESSAGE(got.ok(), got.status().to_string());
      CHECK(got->bytes == wants[f].bytes);
      CHECK(frames[f].last_staging_bytes() == inputs[f].bytes.size() + wants[f].bytes.size());
    }
  }
  CHECK_MESSAGE(app.messages() == 0, app.first_message());
}

TEST_CASE("interop: vkfuse takes the application's queue lock around every submit") {
  AppVulkan app;
  struct Counts {
    std::mutex mutex;
    int locks = 0, unlocks = 0;
  } counts;
  {
    ExternalDevice d = external(app);
    d.queue_lock.user = &counts;
    d.queue_lock.lock = [](void* u) {
      auto* c = static_cast<Counts*>(u);
      c->mutex.lock();
      ++c->locks;
    };
    d.queue_lock.unlock = [](void* u) {
      auto* c = static_cast<Counts*>(u);
      ++c->unlocks;
      c->mutex.unlock();
    };
    Context context = wrap(d);
    const Graph graph = model();
    Session s = session(context, graph);
    const int after_create = counts.locks;
    CHECK(after_create > 0);  // the weights' upload
    (void)host_output(s, model_input());
    CHECK(counts.locks == after_create + 1);
    CHECK(counts.unlocks == counts.locks);
  }
  CHECK_MESSAGE(app.messages() == 0, app.first_message());
}

TEST_CASE("interop: a device missing what the application requires is refused with every missing feature named") {
  AppVulkan::Options options;
  options.storage16 = false;
  options.storage8 = false;
  options.timeline = false;
  AppVulkan app(options);
  ExternalDevice d = external(app);
  d.require_fp16 = true;
  d.require_bool = true;
  d.require_timeline = true;
  auto refused = Context::wrap(d, {});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == ErrorCode::kUnsupported);
  const std::string& text = refused.status().message();
  INFO(text);
  CHECK(text.find("storageBuffer16BitAccess (f16 tensors)") != std::string::npos);
  CHECK(text.find("storageBuffer8BitAccess (bool tensors)") != std::string::npos);
  CHECK(text.find("timelineSemaphore") != std::string::npos);
  CHECK(text.find("VkPhysicalDeviceVulkan11Features::storageBuffer16BitAccess") != std::string::npos);

  // Without those requirements the same device is fine for fp32, and f16 fails at Session::create.
  d.require_fp16 = d.require_bool = d.require_timeline = false;
  auto context = Context::wrap(d, {});
  REQUIRE_MESSAGE(context.ok(), context.status().to_string());
  OnnxOptions fp16;
  fp16.float_dtype = DType::kF16;
  auto graph = load_onnx(kModelDir + "/model.onnx", fp16);
  REQUIRE(graph.ok());
  auto s = Session::create(*context, *graph, {});
  CHECK_FALSE(s.ok());

  ExternalDevice null_device = external(app);
  null_device.device = VK_NULL_HANDLE;
  CHECK(Context::wrap(null_device, {}).status().code() == ErrorCode::kInvalidArgument);
  ExternalDevice other_loader = external(app);
  other_loader.get_instance_proc_addr = [](VkInstance, const char*) -> PFN_vkVoidFunction { return nullptr; };
  CHECK(Context::wrap(other_loader, {}).status().code() == ErrorCode::kUnsupported);
  ExternalDevice same_loader = external(app);
  same_loader.get_instance_proc_addr = vkGetInstanceProcAddr;
  CHECK(Context::wrap(same_loader, {}).ok());
  CHECK_MESSAGE(app.messages() == 0, app.first_message());
}

TEST_CASE("interop: bad use gets a clear error and breaks nothing") {
  AppVulkan app;
  {
    Context context = wrap(app);
    const Graph graph = model();
    Session s = session(context, graph);
    const HostTensor input = model_input();
    const HostTensor want = host_output(s, input);
    auto e = s.create_execution();
    REQUIRE(e.ok());
    const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    AppBuffer small = app.make_buffer(64, usage, false);
    AppBuffer transfer_only = app.make_buffer(input.bytes.size(), VK_BUFFER_USAGE_TRANSFER_DST_BIT, false);

    auto bad = e->bind("nope", {small.buffer, 0, 64, usage});
    CHECK(bad.code() == ErrorCode::kInvalidArgument);
    CHECK(bad.message().find("no input or output named 'nope' (it has input input, output ") != std::string::npos);
    bad = e->bind("input", {small.buffer, 0, 64, usage});
    CHECK(bad.message().find("needs " + std::to_string(input.bytes.size()) + " bytes") != std::string::npos);
    bad = e->bind("input", {small.buffer, 0, input.bytes.size(), usage});  // a size that lies
    CHECK(bad.message().find("run past the end of the buffer") != std::string::npos);
    bad = e->bind("input", {transfer_only.buffer, 0, input.bytes.size(), VK_BUFFER_USAGE_TRANSFER_DST_BIT});
    CHECK(bad.message().find("VK_BUFFER_USAGE_STORAGE_BUFFER_BIT") != std::string::npos);
    bad = e->bind("input", {transfer_only.buffer, 4, input.bytes.size(), usage});
    CHECK(bad.message().find("is not a multiple of") != std::string::npos);
    CHECK(e->bind("input", {VK_NULL_HANDLE, 0, input.bytes.size()}).message().find("null") != std::string::npos);

    VkCommandBuffer cb = app.begin_commands();
    bad = e->record(cb, {});
    CHECK(bad.message().find("host-resident") != std::string::npos);
    app.submit(cb, {}, {}, {}, {});  // empty: the failed record left nothing in it

    CHECK(e->submit().status().message().find("has no data: upload() it first") != std::string::npos);
    CHECK(e->download(e->output_names().at(0)).status().message().find("no completed submit()") != std::string::npos);
    CHECK(e->upload("input", HostTensor::from_floats({1, 2}, {0.0f, 1.0f})).message().find("the graph expects") !=
          std::string::npos);
    CHECK(e->upload(e->output_names().at(0), input).message().find("is an output") != std::string::npos);

    OK(e->upload("input", input));
    // Held in flight by a timeline value the application signals later (wait-before-signal is legal for
    // timeline semaphores only): everything but wait() is refused meanwhile.
    REQUIRE(app.has_timeline);
    const VkSemaphore gate = app.make_semaphore(true);
    SubmitSync gated;
    gated.waits.push_back({gate, 1, VK_PIPELINE_STAGE_TRANSFER_BIT});
    auto ticket = e->submit(gated);
    REQUIRE_MESSAGE(ticket.ok(), ticket.status().to_string());
    CHECK(e->in_flight());
    CHECK(e->submit().status().message().find("still in flight") != std::string::npos);
    CHECK(e->upload("input", input).message().find("still in flight") != std::string::npos);
    CHECK(e->device_tensor("input").status().message().find("still in flight") != std::string::npos);
    VkCommandBuffer late = app.begin_commands();
    CHECK(e->record(late, {}).message().find("still in flight") != std::string::npos);
    CHECK(e->download(e->output_names().at(0)).status().code() == ErrorCode::kNotReady);
    CHECK(e->wait(1000000).code() == ErrorCode::kNotReady);  // 1 ms: still held by the gate
    VkSemaphoreSignalInfo open{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
    open.semaphore = gate;
    open.value = 1;
    REQUIRE(vkSignalSemaphore(app.device, &open) == VK_SUCCESS);  // the application opens the gate
    app.submit(late, {}, {}, {}, {});
    OK(e->wait());
    auto got = e->download(e->output_names().at(0));
    REQUIRE(got.ok());
    CHECK(got->bytes == want.bytes);  // nothing the refused calls did broke the execution
    e = Result<Execution>(make_error(ErrorCode::kInternal, "released"));
    app.destroy(small);
    app.destroy(transfer_only);
  }
  CHECK_MESSAGE(app.messages() == 0, app.first_message());
}

}  // namespace vkfuse::testing

namespace vkfuse::testing {
namespace {

// The application's RGBA8 image, filled by its own transfer pass from `bytes` (rows of width * 4) and
// left in TRANSFER_DST_OPTIMAL: vkfuse's record() moves it to SHADER_READ_ONLY_OPTIMAL.
struct AppImage {
  VkImage image = VK_NULL_HANDLE;
  VkImageView view = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
};

AppImage make_image(AppVulkan& app, std::uint32_t width, std::uint32_t height, VkFormat format) {
  AppImage img;
  VkImageCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
  info.imageType = VK_IMAGE_TYPE_2D;
  info.format = format;
  info.extent = {width, height, 1};
  info.mipLevels = info.arrayLayers = 1;
  info.samples = VK_SAMPLE_COUNT_1_BIT;
  info.tiling = VK_IMAGE_TILING_OPTIMAL;
  info.usage = VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;
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
    const Shape shape = graph.inputs().at(0).shape;
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
    AppImage img = make_image(app, kWidth, kHeight, VK_FORMAT_R8G8B8A8_UNORM);

    struct Case {
      const char* name;
      ImageInput input;
    };
    std::vector<Case> cases(4);
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
    bool first = true;
    // The image's layout from one case to the next: the second case leaves it TRANSFER_DST_OPTIMAL (as
    // for a decoder's next upload), which the third's record() moves back.
    VkImageLayout layout = VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL;
    for (Case& c : cases) {
      INFO(c.name);
      const bool half = &c == &cases[3];
      const Graph& graph_used = half ? *graph16 : graph;
      Session& reference = half ? plain16 : plain;
      c.input.width = kWidth;
      c.input.height = kHeight;
      SessionOptions options;
      options.image_inputs["input"] = c.input;
      auto s = Session::create(context, graph_used, options);
      REQUIRE_MESSAGE(s.ok(), s.status().to_string());
      CHECK(s->dispatch_count() == reference.dispatch_count());  // the pre-processing adds no dispatch
      CHECK(s->run({}).status().message().find("run it through an Execution") != std::string::npos);
      const HostTensor want = host_output(reference, preprocess_on_cpu(pixels, kWidth, kHeight, shape, c.input));
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
      CHECK(frame->bind_image(output_name, binding).message().find("is not an image input") != std::string::npos);
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
