#include "app.h"

#define GLFW_INCLUDE_VULKAN
#include <GLFW/glfw3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include <vkfuse/interop.hpp>

#include "gpu.h"
#include "frame_queue.h"
#include "hud.h"
#include "image_writer.h"
#include "inference.h"
#include "renderer.h"
#include "target.h"
#include "video_source.h"

namespace viewer {
namespace {

using Clock = std::chrono::steady_clock;
double ms_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

constexpr uint32_t kTimestamps = 4;  // frame start, upload done, model done, draw done

// What a key changes; read by the frame loop.
struct Controls {
  bool fused = true, fp16 = false, hud = true, quit = false, resized = false;
  ViewState view;
  std::vector<ViewMode> modes;  // the views this model's output offers, V cycles through them
};

void on_key(GLFWwindow* window, int key, int, int action, int) {
  if (action != GLFW_PRESS && action != GLFW_REPEAT) return;
  auto* c = static_cast<Controls*>(glfwGetWindowUserPointer(window));
  switch (key) {
    case GLFW_KEY_ESCAPE:
    case GLFW_KEY_Q: c->quit = true; break;
    case GLFW_KEY_F: c->fused = !c->fused; break;
    case GLFW_KEY_P: c->fp16 = !c->fp16; break;
    case GLFW_KEY_H: c->hud = !c->hud; break;
    case GLFW_KEY_V: {
      auto it = std::find(c->modes.begin(), c->modes.end(), c->view.mode);
      c->view.mode = it == c->modes.end() || it + 1 == c->modes.end() ? c->modes.front() : *(it + 1);
      break;
    }
    case GLFW_KEY_LEFT: c->view.split = std::max(0.0f, c->view.split - 0.05f); break;
    case GLFW_KEY_RIGHT: c->view.split = std::min(1.0f, c->view.split + 0.05f); break;
    case GLFW_KEY_EQUAL:
    case GLFW_KEY_KP_ADD: c->view.opacity = std::min(1.0f, c->view.opacity + 0.1f); break;
    case GLFW_KEY_MINUS:
    case GLFW_KEY_KP_SUBTRACT: c->view.opacity = std::max(0.0f, c->view.opacity - 0.1f); break;
    default: break;
  }
}

void on_resize(GLFWwindow* window, int, int) { static_cast<Controls*>(glfwGetWindowUserPointer(window))->resized = true; }

// Everything one frame in flight owns.
struct Slot {
  Image frame;
  Buffer staging;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkSemaphore acquired = VK_NULL_HANDLE;
  VkQueryPool queries = VK_NULL_HANDLE;
  bool pending = false;        // submitted, its stats not read yet
  Variant* variant = nullptr;  // what it ran
  double decode_ms = 0.0;
  double wait_ms = 0.0;        // how long the loop waited for its decoded frame
};

// Running means of what the HUD and the summary show.
struct Means {
  double frame = 0, model = 0, upload = 0, draw = 0, decode = 0, wait = 0, present = 0;
  std::size_t count = 0;
  void add(double f, double m, double u, double d, double dec, double w, double p) {
    ++count;
    const double k = 1.0 / static_cast<double>(count);
    frame += (f - frame) * k, model += (m - model) * k, upload += (u - upload) * k, draw += (d - draw) * k;
    decode += (dec - decode) * k, wait += (w - wait) * k, present += (p - present) * k;
  }
};

std::vector<std::string> read_labels(const std::string& path) {
  std::vector<std::string> labels;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) labels.push_back(line);
  return labels;
}

// Text for inside a JSON string: quotes, backslashes and control characters dropped.
std::string json_text(const std::string& text) {
  std::string out;
  for (char c : text)
    if (c != '"' && c != '\\' && static_cast<unsigned char>(c) >= 0x20) out += c;
  return out;
}

VkExtent2D fit(VkExtent2D content, uint32_t max_w, uint32_t max_h) {
  const double s = std::min({1.0, double(max_w) / content.width, double(max_h) / content.height});
  return {std::max(1u, static_cast<uint32_t>(content.width * s)), std::max(1u, static_cast<uint32_t>(content.height * s))};
}


class App {
 public:
  explicit App(const Options& options) : o_(options) {}
  ~App();
  int run();

 private:
  bool fail(const std::string& message) {
    std::fprintf(stderr, "video_viewer: %s\n", message.c_str());
    return false;
  }
  bool setup();
  bool make_slots();
  bool frame(uint64_t n);
  void collect(Slot& slot, bool steady = true);
  bool finish();
  std::string top5_json() const;

  const Options& o_;
  std::string error_;
  std::unique_ptr<VideoSource> source_;
  std::unique_ptr<FrameQueue> frames_;  // decodes ahead on its own thread
  GLFWwindow* window_ = nullptr;
  std::unique_ptr<Gpu> gpu_;
  VkSurfaceKHR surface_ = VK_NULL_HANDLE;
  std::optional<vkfuse::Context> context_;
  std::vector<Slot> slots_;
  std::unique_ptr<Inference> inference_;
  std::unique_ptr<Target> target_;
  std::unique_ptr<Renderer> renderer_;
  std::unique_ptr<Hud> hud_;
  Controls controls_;
  Frame decoded_;
  std::vector<std::string> labels_;
  Means means_;
  std::size_t collected_ = 0;
  HudStats stats_;
  double timestamp_ms_ = 0.0;  // per tick
  uint32_t last_image_ = 0;
  Clock::time_point last_frame_, start_;
  bool paced_ = false;
  double present_ms_ = 0.0;
};

App::~App() {
  if (gpu_ && gpu_->device) vkDeviceWaitIdle(gpu_->device);
  frames_.reset();
  hud_.reset();
  renderer_.reset();
  target_.reset();
  inference_.reset();
  context_.reset();
  if (gpu_ && gpu_->device)
    for (Slot& s : slots_) {
      gpu_->destroy(s.frame);
      gpu_->destroy(s.staging);
      if (s.fence) vkDestroyFence(gpu_->device, s.fence, nullptr);
      if (s.acquired) vkDestroySemaphore(gpu_->device, s.acquired, nullptr);
      if (s.queries) vkDestroyQueryPool(gpu_->device, s.queries, nullptr);
    }
  if (surface_) vkDestroySurfaceKHR(gpu_->instance, surface_, nullptr);
  gpu_.reset();
  if (window_) glfwDestroyWindow(window_);
  if (!o_.offscreen) glfwTerminate();
}

bool App::setup() {
  const VkExtent2D hint = o_.input_size.value_or(VkExtent2D{0, 0});
  source_ = VideoSource::open(o_.input, static_cast<int>(hint.width), static_cast<int>(hint.height), &error_);
  if (!source_) return fail(error_);
  const VkExtent2D frame_extent{static_cast<uint32_t>(source_->width()), static_cast<uint32_t>(source_->height())};
  paced_ = o_.pace && !o_.offscreen && !source_->live();

  const char* validation_env = std::getenv("VKFUSE_VALIDATION");
  GpuOptions gpu_options;
  gpu_options.validation = validation_env && *validation_env && std::strcmp(validation_env, "0") != 0;
  gpu_options.device_index = o_.device;
  if (!o_.offscreen) {
    if (!glfwInit()) return fail("cannot open a window (no display: is DISPLAY set?); --offscreen runs without one");
    if (!glfwVulkanSupported()) return fail("GLFW finds no Vulkan loader for windows; --offscreen runs without one");
    uint32_t count = 0;
    const char** names = glfwGetRequiredInstanceExtensions(&count);
    for (uint32_t i = 0; i < count; ++i) gpu_options.instance_extensions.push_back(names[i]);
    gpu_options.presentation = true;
  }
  gpu_ = Gpu::create(gpu_options, &error_);
  if (!gpu_) return fail(error_);
  if (!o_.offscreen) {
    glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API);
    const VkExtent2D window = o_.size.value_or(fit(frame_extent, 1600, 900));
    window_ = glfwCreateWindow(static_cast<int>(window.width), static_cast<int>(window.height), "vkfuse video_viewer", nullptr, nullptr);
    if (!window_) return fail("cannot create a window");
    glfwSetWindowUserPointer(window_, &controls_);
    glfwSetKeyCallback(window_, on_key);
    glfwSetFramebufferSizeCallback(window_, on_resize);
    if (VkResult r = glfwCreateWindowSurface(gpu_->instance, window_, nullptr, &surface_); r != VK_SUCCESS)
      return fail(vk_error("glfwCreateWindowSurface", r));
  }
  if (!gpu_->create_device(surface_, &error_)) return fail(error_);

  vkfuse::ExternalDevice app{gpu_->instance, gpu_->physical, gpu_->device, gpu_->family, gpu_->queue};
  app.instance_api_version = VK_API_VERSION_1_2;
  app.device_create_info = &gpu_->device_info;
  app.debug_utils = gpu_options.validation;
  auto context = vkfuse::Context::wrap(app, {});
  if (!context.ok()) return fail(context.status().to_string());
  context_ = std::move(context).value();
  if (!make_slots()) return false;

  std::vector<Image*> frames;
  for (Slot& s : slots_) frames.push_back(&s.frame);
  ModelOptions model = o_.model;
  inference_ = Inference::create(*gpu_, *context_, model, frame_extent, frames, &error_);
  if (!inference_) return fail(error_);
  switch (inference_->kind()) {
    case OutputKind::kImage: controls_.modes = {ViewMode::kSideBySide, ViewMode::kSplit, ViewMode::kOutput, ViewMode::kFrame}; break;
    case OutputKind::kSegmentation: controls_.modes = {ViewMode::kOverlay, ViewMode::kSideBySide, ViewMode::kOutput, ViewMode::kFrame}; break;
    case OutputKind::kClassification: controls_.modes = {ViewMode::kFrame}; break;
  }
  controls_.view.mode = o_.view.value_or(controls_.modes.front());
  if (inference_->kind() == OutputKind::kClassification) controls_.view.mode = ViewMode::kFrame;
  controls_.fused = o_.fusion;
  controls_.fp16 = o_.fp16;
  controls_.hud = o_.hud;
  if (o_.fp16 && !inference_->has_fp16())
    std::fprintf(stderr, "video_viewer: this device has no 16-bit storage; running fp32\n");
  if (!o_.labels.empty()) labels_ = read_labels(o_.labels);

  if (o_.offscreen) {
    const VkExtent2D content{frame_extent.width * (controls_.view.mode == ViewMode::kSideBySide ? 2 : 1), frame_extent.height};
    target_ = Target::offscreen(*gpu_, o_.size.value_or(content), static_cast<uint32_t>(slots_.size()), &error_);
  } else {
    target_ = Target::window(*gpu_, window_, surface_, &error_);
  }
  if (!target_) return fail(error_);
  std::vector<const Image*> frame_images, outputs;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    frame_images.push_back(&slots_[i].frame);
    outputs.push_back(inference_->kind() == OutputKind::kClassification ? nullptr : &inference_->output_image(i));
  }
  renderer_ = Renderer::create(*gpu_, target_->format(), target_->final_layout(), frame_images, outputs, &error_);
  if (!renderer_ || !target_->make_framebuffers(*renderer_, &error_)) return fail(error_);
  hud_ = Hud::create(*gpu_, renderer_->render_pass(), target_->image_count(), window_, &error_);
  if (!hud_) return fail(error_);
  timestamp_ms_ = gpu_->properties.limits.timestampPeriod / 1e6;

  stats_.model = inference_->name();
  stats_.kind = kind_name(inference_->kind());
  stats_.device = gpu_->properties.deviceName;
  stats_.source = source_->describe();
  stats_.fused_dispatches = inference_->variant(true, false).dispatches;
  stats_.unfused_dispatches = inference_->variant(false, false).dispatches;
  stats_.fp16_available = inference_->has_fp16();
  return true;
}

bool App::make_slots() {
  const VkExtent2D extent{static_cast<uint32_t>(source_->width()), static_cast<uint32_t>(source_->height())};
  slots_.resize(static_cast<std::size_t>(o_.frames_in_flight));
  std::vector<VkCommandBuffer> cbs(slots_.size());
  VkCommandBufferAllocateInfo alloc{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  alloc.commandPool = gpu_->pool;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = static_cast<uint32_t>(cbs.size());
  if (VkResult r = vkAllocateCommandBuffers(gpu_->device, &alloc, cbs.data()); r != VK_SUCCESS)
    return fail(vk_error("vkAllocateCommandBuffers", r));
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    s.cb = cbs[i];
    s.frame = gpu_->make_image(extent, VK_FORMAT_R8G8B8A8_UNORM, VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT, &error_);
    if (!s.frame.image) return fail(error_);
    s.staging = gpu_->make_buffer(VkDeviceSize{extent.width} * extent.height * 4, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, true, &error_);
    if (!s.staging.buffer) return fail(error_);
    VkFenceCreateInfo fence{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    fence.flags = VK_FENCE_CREATE_SIGNALED_BIT;
    vkCreateFence(gpu_->device, &fence, nullptr, &s.fence);
    VkSemaphoreCreateInfo semaphore{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    vkCreateSemaphore(gpu_->device, &semaphore, nullptr, &s.acquired);
    VkQueryPoolCreateInfo queries{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    queries.queryType = VK_QUERY_TYPE_TIMESTAMP;
    queries.queryCount = kTimestamps;
    vkCreateQueryPool(gpu_->device, &queries, nullptr, &s.queries);
  }
  return true;
}

// The finished frame's GPU times, from its timestamps, into the means and the HUD. Not `steady`: the
// frames drained at exit, which come back all at once and have no frame time of their own.
void App::collect(Slot& s, bool steady) {
  if (!s.pending) return;
  s.pending = false;
  uint64_t ts[kTimestamps] = {};
  const bool timed = vkGetQueryPoolResults(gpu_->device, s.queries, 0, kTimestamps, sizeof(ts), ts, sizeof(uint64_t),
                                           VK_QUERY_RESULT_64_BIT) == VK_SUCCESS;
  auto span = [&](int a, int b) { return timed ? static_cast<double>(ts[b] - ts[a]) * timestamp_ms_ : 0.0; };
  const Clock::time_point now = Clock::now();
  const double frame_ms = ms_between(last_frame_, now);
  last_frame_ = now;
  // The HUD shows smoothed values (readable at 60 fps); the summary the plain means after warm-up
  // (pipelines' first use and the decoder's start are in the first frames).
  const double upload = span(0, 1), model = span(1, 2), draw = span(2, 3);
  auto smooth = [first = collected_ == 0](double& shown, double value) { shown = first ? value : shown + (value - shown) * 0.1; };
  smooth(stats_.upload_gpu_ms, upload);
  smooth(stats_.model_gpu_ms, model);
  smooth(stats_.draw_gpu_ms, draw);
  smooth(stats_.decode_ms, s.decode_ms);
  smooth(stats_.present_ms, present_ms_);
  smooth(stats_.frame_ms, frame_ms);
  stats_.fps = stats_.frame_ms > 0.0 ? 1000.0 / stats_.frame_ms : 0.0;
  if (++collected_ > 2 * slots_.size() && steady) means_.add(frame_ms, model, upload, draw, s.decode_ms, s.wait_ms, present_ms_);
  if (inference_->kind() == OutputKind::kClassification) {
    stats_.top5.clear();
    for (const auto& [k, p] : inference_->top5(static_cast<std::size_t>(&s - slots_.data()))) {
      const auto index = static_cast<std::size_t>(k);
      stats_.top5.push_back({index < labels_.size() ? labels_[index] : "class " + std::to_string(k), p});
    }
  }
}

bool App::frame(uint64_t n) {
  Slot& s = slots_[n % slots_.size()];
  const uint32_t slot_index = static_cast<uint32_t>(n % slots_.size());
  vkWaitForFences(gpu_->device, 1, &s.fence, VK_TRUE, UINT64_MAX);
  collect(s);

  if (paced_) {  // a file plays at its own rate
    const auto due = start_ + std::chrono::duration<double>(static_cast<double>(n) / source_->fps());
    std::this_thread::sleep_until(due);
  }
  const Clock::time_point wait_start = Clock::now();
  if (!frames_->pop(decoded_, &error_)) return fail(error_);
  s.wait_ms = ms_between(wait_start, Clock::now());
  s.decode_ms = decoded_.decode_ms;
  std::memcpy(s.staging.mapped, decoded_.rgba.data(), std::min<std::size_t>(decoded_.rgba.size(), s.staging.size));

  // A resize (or a present that found the swapchain stale) recreates it before the next acquire, so
  // no image of the old swapchain is left acquired; an acquire that finds it out of date does the same.
  uint32_t image = 0;
  bool stale = controls_.resized;
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (stale) {
      controls_.resized = false;
      if (!target_->recreate(*renderer_, &error_)) return fail(error_);
      std::fprintf(stderr, "video_viewer: the window is now %ux%u (swapchain recreated)\n", target_->extent().width,
                   target_->extent().height);
    }
    if (!target_->acquire(slot_index, s.acquired, &image, &stale, &error_)) return fail(error_);
    if (!stale) break;
  }
  if (stale) return true;  // still out of date (the window is changing): the next frame tries again
  Variant& variant = inference_->variant(controls_.fused, controls_.fp16);
  s.variant = &variant;

  vkResetCommandBuffer(s.cb, 0);
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vkBeginCommandBuffer(s.cb, &begin);
  vkCmdResetQueryPool(s.cb, s.queries, 0, kTimestamps);
  vkCmdWriteTimestamp(s.cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, s.queries, 0);
  // The frame image's last readers (this slot's previous draw and model) finished before its fence.
  image_barrier(s.cb, s.frame.image, VK_IMAGE_LAYOUT_UNDEFINED, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, 0,
                VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT);
  VkBufferImageCopy region{};
  region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
  region.imageExtent = {s.frame.extent.width, s.frame.extent.height, 1};
  vkCmdCopyBufferToImage(s.cb, s.staging.buffer, s.frame.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &region);
  image_barrier(s.cb, s.frame.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
  vkCmdWriteTimestamp(s.cb, VK_PIPELINE_STAGE_TRANSFER_BIT, s.queries, 1);
  if (!inference_->record(variant, slot_index, s.cb, &error_)) return fail(error_);
  vkCmdWriteTimestamp(s.cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, s.queries, 2);
  renderer_->begin_and_draw(s.cb, target_->framebuffer(image), target_->extent(), slot_index, controls_.view, s.frame.extent);
  stats_.view = view_name(controls_.view.mode);
  stats_.fused = variant.fused;
  stats_.fp16 = variant.fp16;
  stats_.dispatches = variant.dispatches;
  if (controls_.hud) hud_->draw(s.cb, target_->extent(), stats_);
  vkCmdEndRenderPass(s.cb);
  vkCmdWriteTimestamp(s.cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s.queries, 3);
  vkEndCommandBuffer(s.cb);

  vkResetFences(gpu_->device, 1, &s.fence);
  const VkPipelineStageFlags wait_stage = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  const VkSemaphore rendered = target_->rendered(image);
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.waitSemaphoreCount = target_->is_window() ? 1 : 0;
  submit.pWaitSemaphores = &s.acquired;
  submit.pWaitDstStageMask = &wait_stage;
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &s.cb;
  submit.signalSemaphoreCount = target_->is_window() ? 1 : 0;
  submit.pSignalSemaphores = &rendered;
  if (VkResult r = vkQueueSubmit(gpu_->queue, 1, &submit, s.fence); r != VK_SUCCESS) return fail(vk_error("vkQueueSubmit", r));
  s.pending = true;
  const Clock::time_point present_start = Clock::now();
  if (!target_->present(image, &stale, &error_)) return fail(error_);
  present_ms_ = ms_between(present_start, Clock::now());
  if (stale) controls_.resized = true;
  last_image_ = image;
  return true;
}

bool App::finish() {
  vkDeviceWaitIdle(gpu_->device);
  for (Slot& s : slots_) collect(s, false);
  bool ok = true;
  if (!o_.screenshot.empty()) {
    std::vector<uint8_t> rgba;
    const VkExtent2D e = target_->extent();
    ok = target_->read_back(last_image_, &rgba, &error_) &&
         write_png(o_.screenshot, static_cast<int>(e.width), static_cast<int>(e.height), rgba.data(), &error_);
    if (!ok) fail(error_);
  }
  if (ok && !o_.dump_frame.empty()) {
    ok = write_png(o_.dump_frame, source_->width(), source_->height(), decoded_.rgba.data(), &error_);
    if (!ok) fail(error_);
  }
  return ok;
}

// A classifier's last top five as JSON pairs ["label", probability].
std::string App::top5_json() const {
  std::string out;
  for (const auto& [label, p] : stats_.top5) {
    const std::string escaped = json_text(label);
    char number[32];
    std::snprintf(number, sizeof number, "%.4f", static_cast<double>(p));
    out += (out.empty() ? "[\"" : ", [\"") + escaped + "\", " + number + "]";
  }
  return out;
}

int App::run() {
  if (!setup()) return 1;
  frames_ = std::make_unique<FrameQueue>(*source_, 2);
  start_ = last_frame_ = Clock::now();
  uint64_t n = 0;
  bool ok = true;
  while (ok && !controls_.quit && (o_.frames == 0 || n < static_cast<uint64_t>(o_.frames))) {
    if (window_ && static_cast<int>(n) == o_.resize_frame)
      glfwSetWindowSize(window_, static_cast<int>(o_.resize_to.width), static_cast<int>(o_.resize_to.height));
    if (window_) {
      glfwPollEvents();
      if (glfwWindowShouldClose(window_)) break;
    }
    ok = frame(n++);
  }
  ok = finish() && ok;
  const uint32_t messages = gpu_->validation_messages();
  if (messages > 0) std::fprintf(stderr, "video_viewer: %u validation messages (see above)\n", messages);
  std::fprintf(stderr, "video_viewer: %llu frames of %s through %s (%s), %s %s", static_cast<unsigned long long>(n),
               stats_.source.c_str(), stats_.model.c_str(), stats_.kind.c_str(), stats_.fused ? "fused" : "unfused",
               stats_.fp16 ? "fp16" : "fp32");
  if (means_.count > 0)
    std::fprintf(stderr, ": %.2f ms per frame, the model %.3f ms of GPU time (means of the last %zu frames)\n", means_.frame,
                 means_.model, means_.count);
  else
    std::fprintf(stderr, " (too few frames to time past the warm-up)\n");
  if (o_.json)
    std::printf("{\"model\": \"%s\", \"kind\": \"%s\", \"source\": \"%s\", \"device\": \"%s\", \"fused\": %s, "
                "\"precision\": \"%s\", \"dispatches\": %zu, \"frames\": %llu, \"averaged_frames\": %zu, \"frame_ms\": %.4f, "
                "\"model_gpu_ms\": %.4f, \"upload_gpu_ms\": %.4f, \"draw_gpu_ms\": %.4f, \"decode_ms\": %.4f, \"decode_wait_ms\": %.4f, \"present_ms\": %.4f, "
                "\"offscreen\": %s, \"top5\": [%s]}\n",
                json_text(stats_.model).c_str(), stats_.kind.c_str(), json_text(stats_.source).c_str(),
                json_text(stats_.device).c_str(), stats_.fused ? "true" : "false",
                stats_.fp16 ? "fp16" : "fp32", stats_.dispatches, static_cast<unsigned long long>(n), means_.count, means_.frame,
                means_.model, means_.upload, means_.draw, means_.decode, means_.wait, means_.present, o_.offscreen ? "true" : "false",
                top5_json().c_str());
  return ok && messages == 0 ? 0 : 1;
}

}  // namespace

int run_viewer(const Options& options) {
  App app(options);
  return app.run();
}

}  // namespace viewer
