// libFuzzer target: an .onnx file's bytes through import, folding, shape inference and fusion planning
// (fused and unfused) and each group's kernel source, as Session::create does before any Vulkan call.
// Any input must end in a Status; a crash, a sanitizer report or a hang is a finding.
#include <cstddef>
#include <cstdint>

#include <vkfuse/onnx.hpp>

#include "backend/device_plan.h"
#include "codegen/kernel_builder.h"
#include "host/fusion_planner.h"
#include "host/group_kernel.h"

namespace {

// A device plan with lavapipe-like limits: small enough that tiling and splitting decisions run.
const vkfuse::DevicePlan& fuzz_device() {
  static const vkfuse::DevicePlan plan = [] {
    vkfuse::DeviceCaps caps;
    caps.max_shared_memory_bytes = 32768;
    caps.max_workgroup_invocations = 1024;
    caps.max_workgroup_size = {1024, 1024, 64};
    caps.max_workgroup_count = {65535, 65535, 65535};
    caps.subgroup_size = 8;
    caps.subgroup_operations = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT |
                               VK_SUBGROUP_FEATURE_SHUFFLE_BIT;
    caps.subgroup_in_compute = true;
    caps.max_push_constants_bytes = 128;
    caps.max_storage_buffers_per_stage = 64;
    caps.max_bound_descriptor_sets = 8;
    caps.max_storage_buffer_range = 128u << 20;
    caps.max_memory_allocation_size = 1ull << 31;
    caps.min_storage_buffer_offset_alignment = 16;
    caps.device_local_bytes = 4ull << 30;
    caps.storage_buffer_16bit = true;
    return vkfuse::make_device_plan(caps);
  }();
  return plan;
}

void plan_and_build(const vkfuse::Graph& graph, vkfuse::FusionMode mode) {
  const vkfuse::GraphIR& ir = vkfuse::graph_ir(graph);
  auto plan = vkfuse::plan_fusion(ir, fuzz_device(), mode);
  if (!plan.ok()) return;
  for (const vkfuse::FusionGroup& group : plan->groups) {
    auto kernel = vkfuse::make_group_kernel(ir, group, fuzz_device());
    if (kernel.ok()) (void)vkfuse::build_kernel(kernel->spec);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  vkfuse::OnnxOptions options;
  options.batch = 1;  // symbolic batch dims are fixed, as `vkfuse plan` does
  auto graph = vkfuse::load_onnx_from_memory(data, size, options, "fuzz.onnx");
  if (!graph.ok()) return 0;
  plan_and_build(*graph, vkfuse::FusionMode::kFused);
  plan_and_build(*graph, vkfuse::FusionMode::kUnfused);
  return 0;
}
