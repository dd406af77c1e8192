// The viewer's draw: one full-screen triangle whose fragment shader shows the frame and the model's
// output as the view mode says (side by side, a split, the output alone, a segmentation overlay, the
// frame alone), letterboxed. The HUD (hud.h) draws into the same render pass afterwards.
//
// Ownership: Renderer owns its render pass, pipeline, sampler and descriptor sets; the images it is
// given must outlive it. One thread.
#pragma once

#include <vulkan/vulkan.h>

#include <memory>
#include <string>
#include <vector>

#include "gpu.h"

namespace viewer {

enum class ViewMode { kSideBySide = 0, kSplit = 1, kOutput = 2, kOverlay = 3, kFrame = 4 };
const char* view_name(ViewMode mode);

struct ViewState {
  ViewMode mode = ViewMode::kSideBySide;
  float split = 0.5f;
  float opacity = 0.6f;
};

class Renderer {
 public:
  // A render pass into `target_format` ending in `final_layout` (PRESENT_SRC_KHR for a swapchain,
  // TRANSFER_SRC_OPTIMAL for an offscreen target); one descriptor set per slot over frames[i] and
  // outputs[i] (an output may be null: a classifier has no image, the frame is shown instead).
  static std::unique_ptr<Renderer> create(Gpu& gpu, VkFormat target_format, VkImageLayout final_layout,
                                          const std::vector<const Image*>& frames, const std::vector<const Image*>& outputs,
                                          std::string* error);
  ~Renderer();

  VkRenderPass render_pass() const { return render_pass_; }
  VkFramebuffer make_framebuffer(VkImageView view, VkExtent2D extent, std::string* error) const;

  // Begins the render pass on `framebuffer` and draws the view; the caller draws the HUD and ends it.
  void begin_and_draw(VkCommandBuffer cb, VkFramebuffer framebuffer, VkExtent2D target, std::size_t slot,
                      const ViewState& view, VkExtent2D frame_extent) const;

 private:
  explicit Renderer(Gpu& gpu) : gpu_(gpu) {}
  Gpu& gpu_;
  VkRenderPass render_pass_ = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
  VkSampler sampler_ = VK_NULL_HANDLE;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  std::vector<VkDescriptorSet> sets_;
  bool has_output_ = true;
};

}  // namespace viewer
