#include "hud.h"

#include <imgui.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_vulkan.h>

#include <cstdio>

namespace viewer {

std::unique_ptr<Hud> Hud::create(Gpu& gpu, VkRenderPass render_pass, uint32_t image_count, GLFWwindow* window,
                                 std::string* error) {
  std::unique_ptr<Hud> hud(new Hud(gpu));
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 4};
  VkDescriptorPoolCreateInfo pool{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pool.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT;
  pool.maxSets = 4;
  pool.poolSizeCount = 1;
  pool.pPoolSizes = &size;
  if (VkResult r = vkCreateDescriptorPool(gpu.device, &pool, nullptr, &hud->pool_); r != VK_SUCCESS) {
    *error = vk_error("vkCreateDescriptorPool", r);
    return nullptr;
  }
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;  // no imgui.ini beside the user's files
  ImGui::StyleColorsDark();
  if (window) hud->glfw_ = ImGui_ImplGlfw_InitForVulkan(window, true);
  ImGui_ImplVulkan_InitInfo info{};
  info.Instance = gpu.instance;
  info.PhysicalDevice = gpu.physical;
  info.Device = gpu.device;
  info.QueueFamily = gpu.family;
  info.Queue = gpu.queue;
  info.DescriptorPool = hud->pool_;
  info.MinImageCount = image_count < 2 ? 2 : image_count;
  info.ImageCount = info.MinImageCount;
  info.MSAASamples = VK_SAMPLE_COUNT_1_BIT;
  if (!ImGui_ImplVulkan_Init(&info, render_pass)) {
    *error = "Dear ImGui's Vulkan backend failed to initialize";
    return nullptr;
  }
  hud->vulkan_ = true;
  if (!gpu.run_once([](VkCommandBuffer cb) { ImGui_ImplVulkan_CreateFontsTexture(cb); }, error)) return nullptr;
  ImGui_ImplVulkan_DestroyFontUploadObjects();
  return hud;
}

Hud::~Hud() {
  vkDeviceWaitIdle(gpu_.device);
  if (vulkan_) ImGui_ImplVulkan_Shutdown();
  if (glfw_) ImGui_ImplGlfw_Shutdown();
  if (ImGui::GetCurrentContext()) ImGui::DestroyContext();
  if (pool_) vkDestroyDescriptorPool(gpu_.device, pool_, nullptr);
}

void Hud::draw(VkCommandBuffer cb, VkExtent2D extent, const HudStats& s) {
  ImGui_ImplVulkan_NewFrame();
  if (glfw_) {
    ImGui_ImplGlfw_NewFrame();
  } else {
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(static_cast<float>(extent.width), static_cast<float>(extent.height));
    io.DeltaTime = s.frame_ms > 0.0 ? static_cast<float>(s.frame_ms / 1000.0) : 1.0f / 60.0f;
  }
  ImGui::NewFrame();
  ImGui::SetNextWindowPos(ImVec2(8, 8));
  ImGui::SetNextWindowBgAlpha(0.55f);
  ImGui::Begin("vkfuse", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav);
  ImGui::Text("%s (%s)", s.model.c_str(), s.kind.c_str());
  ImGui::Text("%s", s.source.c_str());
  ImGui::Text("%s", s.device.c_str());
  ImGui::Separator();
  ImGui::Text("%.1f fps  (%.2f ms per frame)", s.fps, s.frame_ms);
  ImGui::Text("model GPU   %7.3f ms  %s %s, %zu dispatches", s.model_gpu_ms, s.fused ? "fused" : "UNFUSED",
              s.fp16 ? "fp16" : "fp32", s.dispatches);
  ImGui::Text("upload GPU  %7.3f ms   draw GPU %.3f ms", s.upload_gpu_ms, s.draw_gpu_ms);
  ImGui::Text("decode CPU  %7.3f ms   present %.3f ms", s.decode_ms, s.present_ms);
  ImGui::Text("dispatches: %zu fused, %zu unfused", s.fused_dispatches, s.unfused_dispatches);
  for (const auto& [label, p] : s.top5) ImGui::Text("%5.1f%%  %s", 100.0 * p, label.c_str());
  ImGui::Separator();
  ImGui::Text("F fusion  P fp16%s  V view (%s)  +/- opacity", s.fp16_available ? "" : " (n/a)", s.view.c_str());
  ImGui::Text("<- -> split  H hud  Esc quit");
  ImGui::End();
  ImGui::Render();
  ImGui_ImplVulkan_RenderDrawData(ImGui::GetDrawData(), cb);
}

}  // namespace viewer
