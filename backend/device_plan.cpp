#include "backend/device_plan.h"

#include <algorithm>
#include <bit>

namespace vkfuse {

DevicePlan make_device_plan(const DeviceCaps& caps) {
  DevicePlan plan;
  // 256 invocations fill a wave on every vendor and leave room for registers; smaller devices get less.
  plan.elementwise_workgroup = std::min<std::uint32_t>(256, std::min(caps.max_workgroup_invocations, caps.max_workgroup_size[0]));
  // The reduce root folds partials in a shared-memory tree that halves the active range each step:
  // its workgroup must be a power of two.
  plan.reduce_workgroup = std::bit_floor(plan.elementwise_workgroup);
  // 32 storage buffers per group: a 16-input Concat (17) fits, descriptor sets stay small, and every
  // desktop driver and lavapipe allow it; smaller devices get their own limit.
  plan.max_bindings = std::min<std::uint32_t>(32, caps.max_storage_buffers_per_stage);
  plan.max_push_constant_bytes = caps.max_push_constants_bytes;
  // One workgroup per tile of work where the device allows it (NVIDIA: 2^31 - 1); the roots'
  // grid-stride loops cover what does not fit (65535 is the Vulkan minimum).
  plan.max_groups_x = std::max<std::uint32_t>(caps.max_workgroup_count[0], 1u);
  plan.binding_alignment = std::max<std::uint64_t>(256, caps.min_storage_buffer_offset_alignment);
  plan.max_binding_bytes = caps.max_storage_buffer_range;
  plan.shared_memory_bytes = std::max<std::uint32_t>(caps.max_shared_memory_bytes, 16384);
  plan.max_workgroup_invocations = std::max<std::uint32_t>(caps.max_workgroup_invocations, 128);
  plan.subgroup_size = std::max<std::uint32_t>(caps.subgroup_size, 1);
  if (caps.compute_units > 0) plan.compute_units = caps.compute_units;
  plan.f16_storage = caps.storage_buffer_16bit;
  plan.u8_storage = caps.storage_buffer_8bit;
  // Without it a compiler may fold x - x to 0 and x * 0 to 0, which is wrong for Inf and NaN inputs.
  plan.preserve_inf_nan = caps.preserve_inf_nan_f32;
  plan.coopmat_f16 = caps.coopmat_nv_f16 && caps.cooperative_matrix && caps.subgroup_size >= 16;
  constexpr VkSubgroupFeatureFlags kArithmetic = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  plan.subgroup_arithmetic = caps.subgroup_in_compute && (caps.subgroup_operations & kArithmetic) == kArithmetic;
  constexpr VkSubgroupFeatureFlags kShuffle = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
  plan.subgroup_shuffle = caps.subgroup_in_compute && (caps.subgroup_operations & kShuffle) == kShuffle;
  return plan;
}

}  // namespace vkfuse
