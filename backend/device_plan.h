// DevicePlan: what vkfuse decides from a DeviceCaps snapshot. Pure (no Vulkan calls), so planners can
// be tested with fake caps.
#pragma once

#include <cstdint>

#include "backend/device_caps.h"

namespace vkfuse {

// The compute units planned with where a device does not report its count: the GPU the tile rules were
// tuned on (an NVIDIA H100/H200, 132 SMs; bench/results). A smaller GPU counts as filled sooner and so
// gets tiles with more reuse, which suits it too.
inline constexpr std::uint32_t kDefaultComputeUnits = 132;

struct DevicePlan {
  std::uint32_t elementwise_workgroup = 256;  // invocations per workgroup for elementwise roots
  std::uint32_t reduce_workgroup = 256;       // invocations per workgroup for reduction roots
  std::uint32_t max_bindings = 32;            // storage buffers one group may bind
  std::uint32_t max_push_constant_bytes = 128;
  std::uint32_t max_groups_x = 65535;         // workgroups per dispatch (grid-stride loops cover the rest)
  std::uint64_t binding_alignment = 256;      // offsets of bound ranges (and vec4 alignment)
  std::uint64_t max_binding_bytes = 1u << 27; // one storage-buffer binding
  std::uint32_t shared_memory_bytes = 16384;  // per workgroup, for the tiled anchors (Vulkan minimum 16 KB)
  std::uint32_t max_workgroup_invocations = 128;  // Vulkan minimum
  std::uint32_t subgroup_size = 1;  // 0 or 1: unknown; NVIDIA 32, AMD 64 (or 32), lavapipe 8
  // SMs / CUs / shader cores: how many workgroups run side by side, which decides when a product fills
  // the GPU (host/ops/kernel_support.h). From the device where it reports them, else kDefaultComputeUnits.
  std::uint32_t compute_units = kDefaultComputeUnits;
  bool f16_storage = false;
  bool u8_storage = false;
  bool preserve_inf_nan = false;  // kernels declare SignedZeroInfNanPreserve for fp32 (IEEE NaN/Inf semantics)
  // f16 x f16 GEMMs run on roots/gemm_coopmat.glsl (DeviceCaps::coopmat_nv_f16, enabled on the device,
  // with a known subgroup size of at least 16).
  bool coopmat_f16 = false;
  // Compute shaders may use subgroup arithmetic (GL_KHR_shader_subgroup_arithmetic): the reduce root
  // then combines a walk's partial results with one subgroup operation and one barrier instead of a
  // shared-memory tree of log2(workgroup) barriers.
  bool subgroup_arithmetic = false;
  // Compute shaders may use subgroup shuffles (GL_KHR_shader_subgroup_shuffle): the tiled GEMM root
  // adds a row's statistics over the invocations that stage it (a LayerNorm folded into the product).
  bool subgroup_shuffle = false;

  // A kernel op's input larger than one binding is bound in chunks of this many bytes: the most whole
  // binding alignments one binding holds.
  std::uint64_t chunk_bytes() const { return max_binding_bytes / binding_alignment * binding_alignment; }
};

DevicePlan make_device_plan(const DeviceCaps& caps);

}  // namespace vkfuse
