#include "backend/pipeline.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "backend/debug.h"
#include "backend/log.h"

namespace vkfuse {
namespace {

constexpr uint32_t kSpirvMagic = 0x07230203;

std::string statistic_value(const VkPipelineExecutableStatisticKHR& s) {
  switch (s.format) {
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: return s.value.b32 ? "true" : "false";
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: return std::to_string(s.value.i64);
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: return std::to_string(s.value.u64);
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: return std::to_string(s.value.f64);
    default: return "?";
  }
}

// Debug log: "pipeline <label>: <statistic> <value>, ..." for each executable the driver reports (NVIDIA:
// the register count, which bounds how many workgroups share an SM). Best effort: a failed query logs
// nothing.
void log_pipeline_statistics(const DeviceContext& ctx, VkPipeline pipeline, const std::string& label) {
  auto properties_of = reinterpret_cast<PFN_vkGetPipelineExecutablePropertiesKHR>(
      vkGetDeviceProcAddr(ctx.device, "vkGetPipelineExecutablePropertiesKHR"));
  auto statistics_of = reinterpret_cast<PFN_vkGetPipelineExecutableStatisticsKHR>(
      vkGetDeviceProcAddr(ctx.device, "vkGetPipelineExecutableStatisticsKHR"));
  if (!properties_of || !statistics_of) return;
  const VkPipelineInfoKHR info{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, nullptr, pipeline};
  uint32_t executables = 0;
  if (properties_of(ctx.device, &info, &executables, nullptr) != VK_SUCCESS) return;
  for (uint32_t e = 0; e < executables; ++e) {
    const VkPipelineExecutableInfoKHR executable{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, nullptr, pipeline, e};
    uint32_t count = 0;
    if (statistics_of(ctx.device, &executable, &count, nullptr) != VK_SUCCESS) continue;
    std::vector<VkPipelineExecutableStatisticKHR> statistics(count, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    if (statistics_of(ctx.device, &executable, &count, statistics.data()) != VK_SUCCESS) continue;
    std::string line = "pipeline " + label + ":";
    for (uint32_t i = 0; i < count; ++i)
      line += std::string(i ? ", " : " ") + statistics[i].name + " " + statistic_value(statistics[i]);
    log_message(LogLevel::kDebug, line);
  }
}

}  // namespace

Result<ComputePipeline> ComputePipeline::create(const DeviceContext& ctx, const PipelineDesc& desc,
                                                VkPipelineCache cache) {
  const std::string what = "pipeline '" + desc.label + "'";
  if (desc.spirv.size() < 5 || desc.spirv[0] != kSpirvMagic) {
    return make_error(ErrorCode::kInvalidArgument, what + ": the code is not SPIR-V (" +
                                                       std::to_string(desc.spirv.size()) +
                                                       " words, no SPIR-V magic number)");
  }
  if (desc.binding_count > ctx.caps.max_storage_buffers_per_stage) {
    return make_error(ErrorCode::kUnsupported, what + " uses " + std::to_string(desc.binding_count) +
                                                   " storage buffers; this device allows " +
                                                   std::to_string(ctx.caps.max_storage_buffers_per_stage) +
                                                   " per stage (maxPerStageDescriptorStorageBuffers)");
  }
  if (desc.push_constant_bytes % 4 != 0) {
    return make_error(ErrorCode::kInvalidArgument, what + ": push_constant_bytes " +
                                                       std::to_string(desc.push_constant_bytes) +
                                                       " is not a multiple of 4");
  }
  if (desc.push_constant_bytes > ctx.caps.max_push_constants_bytes) {
    return make_error(ErrorCode::kUnsupported, what + " uses " + std::to_string(desc.push_constant_bytes) +
                                                   " bytes of push constants; this device allows " +
                                                   std::to_string(ctx.caps.max_push_constants_bytes) +
                                                   " (maxPushConstantsSize)");
  }

  ComputePipeline pipeline;
  pipeline.binding_count_ = desc.binding_count;
  pipeline.image_bindings_ = desc.image_bindings;
  pipeline.storage_image_bindings_ = desc.storage_image_bindings;
  pipeline.push_constant_bytes_ = desc.push_constant_bytes;
  pipeline.label_ = desc.label;
  VkDevice device = ctx.device;

  std::vector<VkDescriptorSetLayoutBinding> bindings(desc.binding_count);
  for (uint32_t i = 0; i < desc.binding_count; ++i) {
    bindings[i].binding = i;
    bindings[i].descriptorType = pipeline.is_image_binding(i)           ? VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER
                                 : pipeline.is_storage_image_binding(i) ? VK_DESCRIPTOR_TYPE_STORAGE_IMAGE
                                                                        : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  set_info.bindingCount = desc.binding_count;
  set_info.pBindings = bindings.data();
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VKFUSE_CHECK_VK(vkCreateDescriptorSetLayout(device, &set_info, nullptr, &set_layout));
  pipeline.set_layout_ = UniqueHandle<VkDescriptorSetLayout>(
      set_layout, [device](VkDescriptorSetLayout l) { vkDestroyDescriptorSetLayout(device, l, nullptr); });

  VkPushConstantRange push_range{VK_SHADER_STAGE_COMPUTE_BIT, 0, desc.push_constant_bytes};
  VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout_info.setLayoutCount = 1;
  layout_info.pSetLayouts = &set_layout;
  layout_info.pushConstantRangeCount = desc.push_constant_bytes > 0 ? 1 : 0;
  layout_info.pPushConstantRanges = desc.push_constant_bytes > 0 ? &push_range : nullptr;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VKFUSE_CHECK_VK(vkCreatePipelineLayout(device, &layout_info, nullptr, &layout));
  pipeline.layout_ = UniqueHandle<VkPipelineLayout>(
      layout, [device](VkPipelineLayout l) { vkDestroyPipelineLayout(device, l, nullptr); });

  // The module is only needed while the pipeline is built; it dies at the end of this function.
  VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  module_info.codeSize = desc.spirv.size_bytes();
  module_info.pCode = desc.spirv.data();
  VkShaderModule module_handle = VK_NULL_HANDLE;
  VKFUSE_CHECK_VK(vkCreateShaderModule(device, &module_info, nullptr, &module_handle));
  UniqueHandle<VkShaderModule> shader_module(
      module_handle, [device](VkShaderModule m) { vkDestroyShaderModule(device, m, nullptr); });

  VkComputePipelineCreateInfo pipeline_info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  pipeline_info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  pipeline_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  pipeline_info.stage.module = module_handle;
  pipeline_info.stage.pName = "main";
  pipeline_info.layout = layout;
  if (ctx.caps.pipeline_statistics) pipeline_info.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
  VkPipeline handle = VK_NULL_HANDLE;
  Status created = [&]() -> Status {
    VKFUSE_CHECK_VK(vkCreateComputePipelines(device, cache, 1, &pipeline_info, nullptr, &handle));
    return {};
  }();
  if (!created.ok()) return created.with_context(what);
  pipeline.pipeline_ =
      UniqueHandle<VkPipeline>(handle, [device](VkPipeline p) { vkDestroyPipeline(device, p, nullptr); });

  if (ctx.caps.pipeline_statistics) log_pipeline_statistics(ctx, handle, desc.label);
  if (!desc.label.empty()) {
    set_debug_name(ctx, VK_OBJECT_TYPE_PIPELINE, debug_handle(handle), desc.label);
    set_debug_name(ctx, VK_OBJECT_TYPE_PIPELINE_LAYOUT, debug_handle(layout), desc.label);
    set_debug_name(ctx, VK_OBJECT_TYPE_DESCRIPTOR_SET_LAYOUT, debug_handle(set_layout), desc.label);
  }
  return pipeline;
}

ComputePipeline& ComputePipeline::operator=(ComputePipeline&& other) noexcept {
  if (this != &other) {
    // A member-wise assignment would destroy the set layout first and the pipeline last.
    std::destroy_at(this);
    std::construct_at(this, std::move(other));
  }
  return *this;
}

Result<DescriptorArena> DescriptorArena::create(const DeviceContext& ctx, uint32_t max_sets,
                                                uint32_t max_buffers_total, uint32_t max_images_total,
                                                uint32_t max_storage_images_total) {
  if (max_sets == 0 || max_buffers_total == 0) {
    return make_error(ErrorCode::kInvalidArgument, "DescriptorArena: max_sets (" + std::to_string(max_sets) +
                                                       ") and max_buffers_total (" + std::to_string(max_buffers_total) +
                                                       ") must be positive");
  }
  DescriptorArena arena;
  arena.device_ = ctx.device;
  arena.max_storage_buffer_range_ = ctx.caps.max_storage_buffer_range;
  arena.min_offset_alignment_ = std::max<uint64_t>(ctx.caps.min_storage_buffer_offset_alignment, 1);
  arena.max_sets_ = max_sets;
  arena.max_buffers_ = max_buffers_total;

  std::vector<VkDescriptorPoolSize> sizes{{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, max_buffers_total}};
  if (max_images_total > 0) sizes.push_back({VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, max_images_total});
  if (max_storage_images_total > 0) sizes.push_back({VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, max_storage_images_total});
  VkDescriptorPoolCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  info.flags = 0;  // no FREE_DESCRIPTOR_SET: sets die with the pool, which lets drivers allocate linearly
  info.maxSets = max_sets;
  info.poolSizeCount = static_cast<uint32_t>(sizes.size());
  info.pPoolSizes = sizes.data();
  VkDescriptorPool pool = VK_NULL_HANDLE;
  VKFUSE_CHECK_VK(vkCreateDescriptorPool(ctx.device, &info, nullptr, &pool));
  VkDevice device = ctx.device;
  arena.pool_ = UniqueHandle<VkDescriptorPool>(
      pool, [device](VkDescriptorPool p) { vkDestroyDescriptorPool(device, p, nullptr); });
  set_debug_name(ctx, VK_OBJECT_TYPE_DESCRIPTOR_POOL, debug_handle(pool), "vkfuse descriptor arena");
  return arena;
}

bool ComputePipeline::is_image_binding(uint32_t binding) const {
  return std::find(image_bindings_.begin(), image_bindings_.end(), binding) != image_bindings_.end();
}

bool ComputePipeline::is_storage_image_binding(uint32_t binding) const {
  return std::find(storage_image_bindings_.begin(), storage_image_bindings_.end(), binding) !=
         storage_image_bindings_.end();
}

Result<VkDescriptorSet> DescriptorArena::allocate(const ComputePipeline& pipeline,
                                                  std::span<const BufferRange> buffers) {
  const std::string what = "pipeline '" + pipeline.label() + "'";
  if (buffers.size() != pipeline.binding_count()) {
    return make_error(ErrorCode::kInvalidArgument, what + " has " + std::to_string(pipeline.binding_count()) +
                                                       " bindings but " + std::to_string(buffers.size()) +
                                                       " buffers were given");
  }
  for (size_t i = 0; i < buffers.size(); ++i) {
    const BufferRange& b = buffers[i];
    const std::string binding = what + ", binding " + std::to_string(i);
    if (pipeline.is_image_binding(static_cast<uint32_t>(i))) {
      if (b.view == VK_NULL_HANDLE || b.sampler == VK_NULL_HANDLE)
        return make_error(ErrorCode::kInvalidArgument, binding + ": an image binding without an image view and sampler");
      continue;
    }
    if (pipeline.is_storage_image_binding(static_cast<uint32_t>(i))) {
      if (b.view == VK_NULL_HANDLE)
        return make_error(ErrorCode::kInvalidArgument, binding + ": a storage image binding without an image view");
      continue;
    }
    if (b.buffer == VK_NULL_HANDLE) return make_error(ErrorCode::kInvalidArgument, binding + ": null buffer");
    if (b.range == 0) return make_error(ErrorCode::kInvalidArgument, binding + ": range is 0");
    if (b.offset % min_offset_alignment_ != 0) {
      return make_error(ErrorCode::kInvalidArgument,
                        binding + ": offset " + std::to_string(b.offset) + " is not a multiple of " +
                            std::to_string(min_offset_alignment_) + " (minStorageBufferOffsetAlignment)");
    }
    if (b.range != VK_WHOLE_SIZE && b.range > max_storage_buffer_range_) {
      return make_error(ErrorCode::kUnsupported, binding + ": range of " + std::to_string(b.range) +
                                                     " bytes is above this device's maxStorageBufferRange (" +
                                                     std::to_string(max_storage_buffer_range_) + " bytes)");
    }
  }
  // Checked here rather than left to the driver: a full pool is a planning error with a clear cause.
  if (sets_used_ + 1 > max_sets_ || buffers_used_ + buffers.size() > max_buffers_) {
    return make_error(ErrorCode::kInvalidArgument,
                      "descriptor arena is full: " + what + " needs 1 set and " + std::to_string(buffers.size()) +
                          " buffers; " + std::to_string(sets_used_) + "/" + std::to_string(max_sets_) + " sets and " +
                          std::to_string(buffers_used_) + "/" + std::to_string(max_buffers_) + " buffers are used");
  }

  VkDescriptorSetLayout set_layout = pipeline.set_layout();
  VkDescriptorSetAllocateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  info.descriptorPool = pool_.get();
  info.descriptorSetCount = 1;
  info.pSetLayouts = &set_layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  VKFUSE_CHECK_VK(vkAllocateDescriptorSets(device_, &info, &set));
  sets_used_ += 1;
  buffers_used_ += static_cast<uint32_t>(buffers.size());

  std::vector<VkDescriptorBufferInfo> infos(buffers.size());
  std::vector<VkDescriptorImageInfo> images(buffers.size());
  std::vector<VkWriteDescriptorSet> writes(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = static_cast<uint32_t>(i);
    writes[i].descriptorCount = 1;
    if (pipeline.is_image_binding(static_cast<uint32_t>(i))) {
      images[i] = {buffers[i].sampler, buffers[i].view, buffers[i].layout};
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
      writes[i].pImageInfo = &images[i];
      continue;
    }
    if (pipeline.is_storage_image_binding(static_cast<uint32_t>(i))) {
      images[i] = {VK_NULL_HANDLE, buffers[i].view, buffers[i].layout};
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
      writes[i].pImageInfo = &images[i];
      continue;
    }
    infos[i] = {buffers[i].buffer, buffers[i].offset, buffers[i].range};
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  if (!writes.empty()) vkUpdateDescriptorSets(device_, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
  return set;
}

}  // namespace vkfuse
