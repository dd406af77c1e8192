#include "renderer.h"

#include <algorithm>

#include "view_frag.h"
#include "view_vert.h"

namespace viewer {
namespace {

struct PushConstants {
  float scale[2];
  int mode;
  float split;
  float opacity;
};

VkShaderModule make_module(VkDevice device, const uint32_t* code, std::size_t bytes) {
  VkShaderModuleCreateInfo info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  info.codeSize = bytes;
  info.pCode = code;
  VkShaderModule module = VK_NULL_HANDLE;
  vkCreateShaderModule(device, &info, nullptr, &module);
  return module;
}

}  // namespace

const char* view_name(ViewMode mode) {
  switch (mode) {
    case ViewMode::kSideBySide: return "side by side";
    case ViewMode::kSplit: return "split";
    case ViewMode::kOutput: return "output";
    case ViewMode::kOverlay: return "overlay";
    case ViewMode::kFrame: return "frame";
  }
  return "?";
}

std::unique_ptr<Renderer> Renderer::create(Gpu& gpu, VkFormat target_format, VkImageLayout final_layout,
                                           const std::vector<const Image*>& frames, const std::vector<const Image*>& outputs,
                                           std::string* error) {
  std::unique_ptr<Renderer> r(new Renderer(gpu));
  VkDevice device = gpu.device;
  VkAttachmentDescription color{};
  color.format = target_format;
  color.samples = VK_SAMPLE_COUNT_1_BIT;
  color.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
  color.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
  color.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
  color.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
  color.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  color.finalLayout = final_layout;
  VkAttachmentReference ref{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
  VkSubpassDescription subpass{};
  subpass.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
  subpass.colorAttachmentCount = 1;
  subpass.pColorAttachments = &ref;
  // The target's previous use (presentation engine reads, or the screenshot's copy) before this pass
  // writes it; the pass's writes before what follows (present or copy).
  VkSubpassDependency deps[2]{};
  deps[0].srcSubpass = VK_SUBPASS_EXTERNAL;
  deps[0].dstSubpass = 0;
  deps[0].srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  deps[0].srcAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
  deps[0].dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  deps[0].dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT | VK_ACCESS_COLOR_ATTACHMENT_READ_BIT;
  deps[1].srcSubpass = 0;
  deps[1].dstSubpass = VK_SUBPASS_EXTERNAL;
  deps[1].srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
  deps[1].srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
  deps[1].dstStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT;
  deps[1].dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
  VkRenderPassCreateInfo pass{VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO};
  pass.attachmentCount = 1;
  pass.pAttachments = &color;
  pass.subpassCount = 1;
  pass.pSubpasses = &subpass;
  pass.dependencyCount = 2;
  pass.pDependencies = deps;
  if (VkResult res = vkCreateRenderPass(device, &pass, nullptr, &r->render_pass_); res != VK_SUCCESS) {
    *error = vk_error("vkCreateRenderPass", res);
    return nullptr;
  }

  VkSamplerCreateInfo sampler{VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
  sampler.magFilter = sampler.minFilter = VK_FILTER_LINEAR;
  sampler.addressModeU = sampler.addressModeV = sampler.addressModeW = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
  vkCreateSampler(device, &sampler, nullptr, &r->sampler_);
  VkDescriptorSetLayoutBinding bindings[2]{};
  for (uint32_t b = 0; b < 2; ++b) {
    bindings[b].binding = b;
    bindings[b].descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    bindings[b].descriptorCount = 1;
    bindings[b].stageFlags = VK_SHADER_STAGE_FRAGMENT_BIT;
  }
  VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  set_info.bindingCount = 2;
  set_info.pBindings = bindings;
  vkCreateDescriptorSetLayout(device, &set_info, nullptr, &r->set_layout_);
  VkPushConstantRange push{VK_SHADER_STAGE_FRAGMENT_BIT, 0, sizeof(PushConstants)};
  VkPipelineLayoutCreateInfo layout{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout.setLayoutCount = 1;
  layout.pSetLayouts = &r->set_layout_;
  layout.pushConstantRangeCount = 1;
  layout.pPushConstantRanges = &push;
  vkCreatePipelineLayout(device, &layout, nullptr, &r->layout_);

  VkShaderModule vert = make_module(device, kViewVert, sizeof(kViewVert));
  VkShaderModule frag = make_module(device, kViewFrag, sizeof(kViewFrag));
  VkPipelineShaderStageCreateInfo stages[2]{};
  stages[0] = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, nullptr, 0, VK_SHADER_STAGE_VERTEX_BIT, vert, "main", nullptr};
  stages[1] = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, nullptr, 0, VK_SHADER_STAGE_FRAGMENT_BIT, frag, "main", nullptr};
  VkPipelineVertexInputStateCreateInfo vertex{VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
  VkPipelineInputAssemblyStateCreateInfo assembly{VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
  assembly.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
  VkPipelineViewportStateCreateInfo viewport{VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
  viewport.viewportCount = viewport.scissorCount = 1;
  VkPipelineRasterizationStateCreateInfo raster{VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
  raster.polygonMode = VK_POLYGON_MODE_FILL;
  raster.cullMode = VK_CULL_MODE_NONE;
  raster.lineWidth = 1.0f;
  VkPipelineMultisampleStateCreateInfo multisample{VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
  multisample.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
  VkPipelineColorBlendAttachmentState blend{};
  blend.colorWriteMask = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT | VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
  VkPipelineColorBlendStateCreateInfo blending{VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
  blending.attachmentCount = 1;
  blending.pAttachments = &blend;
  const VkDynamicState dynamic_states[] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
  VkPipelineDynamicStateCreateInfo dynamic{VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO};
  dynamic.dynamicStateCount = 2;
  dynamic.pDynamicStates = dynamic_states;
  VkGraphicsPipelineCreateInfo info{VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO};
  info.stageCount = 2;
  info.pStages = stages;
  info.pVertexInputState = &vertex;
  info.pInputAssemblyState = &assembly;
  info.pViewportState = &viewport;
  info.pRasterizationState = &raster;
  info.pMultisampleState = &multisample;
  info.pColorBlendState = &blending;
  info.pDynamicState = &dynamic;
  info.layout = r->layout_;
  info.renderPass = r->render_pass_;
  const VkResult made = vkCreateGraphicsPipelines(device, VK_NULL_HANDLE, 1, &info, nullptr, &r->pipeline_);
  vkDestroyShaderModule(device, vert, nullptr);
  vkDestroyShaderModule(device, frag, nullptr);
  if (made != VK_SUCCESS) {
    *error = vk_error("vkCreateGraphicsPipelines", made);
    return nullptr;
  }

  const uint32_t slots = static_cast<uint32_t>(frames.size());
  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, 2 * slots};
  VkDescriptorPoolCreateInfo pool{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pool.maxSets = slots;
  pool.poolSizeCount = 1;
  pool.pPoolSizes = &size;
  vkCreateDescriptorPool(device, &pool, nullptr, &r->pool_);
  std::vector<VkDescriptorSetLayout> layouts(slots, r->set_layout_);
  VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  alloc.descriptorPool = r->pool_;
  alloc.descriptorSetCount = slots;
  alloc.pSetLayouts = layouts.data();
  r->sets_.resize(slots);
  if (VkResult res = vkAllocateDescriptorSets(device, &alloc, r->sets_.data()); res != VK_SUCCESS) {
    *error = vk_error("vkAllocateDescriptorSets", res);
    return nullptr;
  }
  r->has_output_ = !outputs.empty() && outputs[0] != nullptr;
  for (uint32_t s = 0; s < slots; ++s) {
    const Image* second = r->has_output_ ? outputs[s] : frames[s];  // a classifier shows the frame twice
    VkDescriptorImageInfo images[2] = {{r->sampler_, frames[s]->view, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL},
                                       {r->sampler_, second->view, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL}};
    VkWriteDescriptorSet write{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    write.dstSet = r->sets_[s];
    write.dstBinding = 0;
    write.descriptorCount = 2;
    write.descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    write.pImageInfo = images;
    vkUpdateDescriptorSets(device, 1, &write, 0, nullptr);
  }
  return r;
}

Renderer::~Renderer() {
  VkDevice device = gpu_.device;
  vkDeviceWaitIdle(device);
  if (pool_) vkDestroyDescriptorPool(device, pool_, nullptr);
  if (pipeline_) vkDestroyPipeline(device, pipeline_, nullptr);
  if (layout_) vkDestroyPipelineLayout(device, layout_, nullptr);
  if (set_layout_) vkDestroyDescriptorSetLayout(device, set_layout_, nullptr);
  if (sampler_) vkDestroySampler(device, sampler_, nullptr);
  if (render_pass_) vkDestroyRenderPass(device, render_pass_, nullptr);
}

VkFramebuffer Renderer::make_framebuffer(VkImageView view, VkExtent2D extent, std::string* error) const {
  VkFramebufferCreateInfo info{VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
  info.renderPass = render_pass_;
  info.attachmentCount = 1;
  info.pAttachments = &view;
  info.width = extent.width;
  info.height = extent.height;
  info.layers = 1;
  VkFramebuffer framebuffer = VK_NULL_HANDLE;
  if (VkResult r = vkCreateFramebuffer(gpu_.device, &info, nullptr, &framebuffer); r != VK_SUCCESS) *error = vk_error("vkCreateFramebuffer", r);
  return framebuffer;
}

void Renderer::begin_and_draw(VkCommandBuffer cb, VkFramebuffer framebuffer, VkExtent2D target, std::size_t slot,
                              const ViewState& view, VkExtent2D frame_extent) const {
  VkClearValue clear{};
  clear.color = {{0.0f, 0.0f, 0.0f, 1.0f}};
  VkRenderPassBeginInfo begin{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
  begin.renderPass = render_pass_;
  begin.framebuffer = framebuffer;
  begin.renderArea = {{0, 0}, target};
  begin.clearValueCount = 1;
  begin.pClearValues = &clear;
  vkCmdBeginRenderPass(cb, &begin, VK_SUBPASS_CONTENTS_INLINE);
  const VkViewport viewport{0.0f, 0.0f, static_cast<float>(target.width), static_cast<float>(target.height), 0.0f, 1.0f};
  const VkRect2D scissor{{0, 0}, target};
  vkCmdSetViewport(cb, 0, 1, &viewport);
  vkCmdSetScissor(cb, 0, 1, &scissor);
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline_);
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, layout_, 0, 1, &sets_[slot], 0, nullptr);
  ViewMode mode = view.mode;
  if (!has_output_) mode = ViewMode::kFrame;
  // Letterbox: the content keeps its aspect (side by side is two frames wide).
  const float content = static_cast<float>(frame_extent.width) * (mode == ViewMode::kSideBySide ? 2.0f : 1.0f) /
                        static_cast<float>(std::max(1u, frame_extent.height));
  const float window = static_cast<float>(target.width) / static_cast<float>(std::max(1u, target.height));
  PushConstants push{{window > content ? window / content : 1.0f, window > content ? 1.0f : content / window},
                     static_cast<int>(mode), view.split, view.opacity};
  vkCmdPushConstants(cb, layout_, VK_SHADER_STAGE_FRAGMENT_BIT, 0, sizeof(push), &push);
  vkCmdDraw(cb, 3, 1, 0, 0);
}

}  // namespace viewer
