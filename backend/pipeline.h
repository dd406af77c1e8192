// ComputePipeline: SPIR-V -> VkPipeline with the one layout vkfuse uses (set 0: storage buffers at bindings
// 0..n-1; one push-constant range). DescriptorArena: the descriptor sets that bind buffers to such pipelines.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <span>
#include <vector>
#include <string>

#include "backend/device.h"
#include "backend/handle.h"
#include "backend/status.h"

namespace vkfuse {

struct PipelineDesc {
  std::span<const uint32_t> spirv;  // only read during create()
  uint32_t binding_count = 0;       // storage buffers at set 0, bindings 0..binding_count-1
  std::vector<uint32_t> image_bindings;  // those of them that are combined image samplers instead
  std::vector<uint32_t> storage_image_bindings;  // those that are storage images (written) instead
  uint32_t push_constant_bytes = 0;  // a multiple of 4; 0 = no push constants
  std::string label;                 // names the pipeline in errors and debug tools
};

// Owns the descriptor set layout, pipeline layout and pipeline (the shader module is destroyed once the pipeline
// exists). Move-only. Must be destroyed before the device and after the last submission that uses it completes.
// Immutable after creation: the accessors are thread-safe.
class ComputePipeline {
 public:
  // kInvalidArgument: empty or non-SPIR-V code, push_constant_bytes not a multiple of 4. kUnsupported:
  // binding_count above maxPerStageDescriptorStorageBuffers or push_constant_bytes above maxPushConstantsSize
  // (the message names the label and the limit). The entry point is "main". `cache` may be VK_NULL_HANDLE.
  static Result<ComputePipeline> create(const DeviceContext& ctx, const PipelineDesc& desc,
                                        VkPipelineCache cache = VK_NULL_HANDLE);

  ComputePipeline(ComputePipeline&&) noexcept = default;
  ComputePipeline& operator=(ComputePipeline&& other) noexcept;  // releases in destruction order first

  VkPipeline pipeline() const { return pipeline_.get(); }
  VkPipelineLayout layout() const { return layout_.get(); }
  VkDescriptorSetLayout set_layout() const { return set_layout_.get(); }
  uint32_t binding_count() const { return binding_count_; }
  bool is_image_binding(uint32_t binding) const;
  uint32_t image_binding_count() const { return static_cast<uint32_t>(image_bindings_.size()); }
  bool is_storage_image_binding(uint32_t binding) const;
  uint32_t storage_image_binding_count() const { return static_cast<uint32_t>(storage_image_bindings_.size()); }
  uint32_t push_constant_bytes() const { return push_constant_bytes_; }
  const std::string& label() const { return label_; }

 private:
  ComputePipeline() = default;

  // Destroyed bottom-up: pipeline, then its layout, then the set layout the layout was made from.
  UniqueHandle<VkDescriptorSetLayout> set_layout_;
  UniqueHandle<VkPipelineLayout> layout_;
  UniqueHandle<VkPipeline> pipeline_;
  uint32_t binding_count_ = 0;
  std::vector<uint32_t> image_bindings_;
  std::vector<uint32_t> storage_image_bindings_;
  uint32_t push_constant_bytes_ = 0;
  std::string label_;
};

// A range of a buffer bound to one storage-buffer binding; or, at an image binding, an image view, its
// sampler and the layout it is in while the set is used (a storage image: the view and GENERAL).
struct BufferRange {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize range = 0;  // bytes; VK_WHOLE_SIZE = to the end of the buffer (then not checked against limits)
  VkImageView view = VK_NULL_HANDLE;
  VkSampler sampler = VK_NULL_HANDLE;
  VkImageLayout layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
};

// A VkDescriptorPool sized for `max_sets` sets holding `max_buffers_total` storage-buffer descriptors in all.
// Sets are never freed one by one: they live as long as the arena (a recorded session allocates all of its sets
// once). Move-only; must outlive every command buffer that uses its sets. Not thread-safe.
class DescriptorArena {
 public:
  // kInvalidArgument: max_sets or max_buffers_total is 0.
  // `max_images_total`: combined image sampler descriptors; `max_storage_images_total`: storage image
  // descriptors (0: none).
  static Result<DescriptorArena> create(const DeviceContext& ctx, uint32_t max_sets, uint32_t max_buffers_total,
                                        uint32_t max_images_total = 0, uint32_t max_storage_images_total = 0);

  DescriptorArena(DescriptorArena&&) noexcept = default;
  DescriptorArena& operator=(DescriptorArena&&) noexcept = default;

  // Allocates a set for `pipeline` and writes buffers[i] to binding i. buffers.size() must equal
  // pipeline.binding_count(). kInvalidArgument: a null buffer, range 0, an offset that is not a multiple of
  // minStorageBufferOffsetAlignment, or the arena is full. kUnsupported: a range above maxStorageBufferRange.
  // The messages name the pipeline, the binding, the value and the limit.
  Result<VkDescriptorSet> allocate(const ComputePipeline& pipeline, std::span<const BufferRange> buffers);

  uint32_t sets_used() const { return sets_used_; }
  uint32_t buffers_used() const { return buffers_used_; }

 private:
  DescriptorArena() = default;

  VkDevice device_ = VK_NULL_HANDLE;
  UniqueHandle<VkDescriptorPool> pool_;
  uint64_t max_storage_buffer_range_ = 0;
  uint64_t min_offset_alignment_ = 1;
  uint32_t max_sets_ = 0, max_buffers_ = 0;
  uint32_t sets_used_ = 0, buffers_used_ = 0;
};

}  // namespace vkfuse
