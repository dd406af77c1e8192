// The heads-up display, drawn with Dear ImGui into the view's render pass: frame rate, the model's
// GPU time per frame, decode, upload, draw and present times, dispatches fused and unfused, the keys,
// and a classifier's top five.
//
// Ownership: Hud owns ImGui's context and its Vulkan backend objects. One thread.
#pragma once

#include <vulkan/vulkan.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpu.h"

struct GLFWwindow;

namespace viewer {

// What one frame shows. Times in milliseconds; 0 where not measured.
struct HudStats {
  std::string model, kind, device, source, view;
  double fps = 0.0, frame_ms = 0.0;
  double model_gpu_ms = 0.0, upload_gpu_ms = 0.0, draw_gpu_ms = 0.0;
  double decode_ms = 0.0, present_ms = 0.0;
  std::size_t dispatches = 0, fused_dispatches = 0, unfused_dispatches = 0;
  bool fused = true, fp16 = false, fp16_available = false;
  std::vector<std::pair<std::string, float>> top5;  // label, probability
};

class Hud {
 public:
  // `window` null: offscreen, the display size is `extent`.
  static std::unique_ptr<Hud> create(Gpu& gpu, VkRenderPass render_pass, uint32_t image_count, GLFWwindow* window,
                                     std::string* error);
  ~Hud();
  // Inside the render pass, after the view's draw.
  void draw(VkCommandBuffer cb, VkExtent2D extent, const HudStats& stats);

 private:
  explicit Hud(Gpu& gpu) : gpu_(gpu) {}
  Gpu& gpu_;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  bool glfw_ = false;
  bool vulkan_ = false;
};

}  // namespace viewer
