// vkfuse_glsl_snapshot MODEL.onnx OUT_DIR: writes the GLSL of every kernel a Session would compile for the
// model, for each device plan below x fused/unfused x f32/f16 storage x batch 1/8, one file per group in
// plan order (OUT_DIR/<device>/<precision>-b<batch>-<mode>/<index>.comp), without compiling anything.
// scripts/glsl_snapshot.sh runs it over the reference models and compares two trees: a restructuring of the
// planner or the lowering must leave every file byte-identical.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <vkfuse/onnx.hpp>

#include "backend/device_plan.h"
#include "codegen/kernel_builder.h"
#include "host/fusion_planner.h"
#include "host/graph.h"
#include "host/group_kernel.h"
#include "host/passes/fold_layer_norm.h"

namespace vkfuse {
namespace {

// Two fixed plans, so a snapshot does not depend on the machine it is made on: lavapipe's limits, and an
// NVIDIA datacenter GPU's (cooperative matrices, subgroups of 32). Every field is set here on purpose.
DevicePlan lavapipe_plan() {
  DevicePlan d;
  d.elementwise_workgroup = 256;
  d.reduce_workgroup = 256;
  d.max_bindings = 32;
  d.max_push_constant_bytes = 128;
  d.max_groups_x = 65535;
  d.binding_alignment = 16;
  d.max_binding_bytes = std::uint64_t{1} << 27;
  d.shared_memory_bytes = 32768;
  d.max_workgroup_invocations = 1024;
  d.subgroup_size = 8;
  d.compute_units = kDefaultComputeUnits;  // lavapipe reports none
  d.f16_storage = true;
  d.u8_storage = true;
  d.preserve_inf_nan = true;
  d.coopmat_f16 = false;
  d.subgroup_arithmetic = true;
  d.subgroup_shuffle = true;
  return d;
}

DevicePlan nvidia_plan() {
  DevicePlan d = lavapipe_plan();
  d.binding_alignment = 64;
  d.max_binding_bytes = std::uint64_t{1} << 32;
  d.shared_memory_bytes = 49152;
  d.subgroup_size = 32;
  d.compute_units = 132;  // the H200's SMs, as VK_NV_shader_sm_builtins reports them
  d.coopmat_f16 = true;
  return d;
}

bool write(const std::filesystem::path& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary);
  file.write(text.data(), static_cast<std::streamsize>(text.size()));
  return static_cast<bool>(file);
}

// One configuration: the kernels in plan order, or a line saying why there are none (a load or plan error
// is part of the snapshot too: a restructuring must not change it).
int snapshot(const std::string& model, const DevicePlan& device, DType dtype, std::int64_t batch, FusionMode mode,
             const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  OnnxOptions options;
  options.float_dtype = dtype;
  options.batch = batch;
  auto graph = load_onnx(model, options);
  if (!graph.ok()) return write(dir / "error.txt", graph.status().to_string() + "\n") ? 0 : 1;
  std::optional<FoldedLayerNorms> folded;
  const GraphIR& ir = graph_to_plan(graph_ir(*graph), mode, folded);
  auto plan = plan_fusion(ir, device, mode);
  if (!plan.ok()) return write(dir / "error.txt", plan.status().to_string() + "\n") ? 0 : 1;
  for (std::size_t k = 0; k < plan->groups.size(); ++k) {
    const std::string name = std::to_string(k);
    auto kernel = make_group_kernel(ir, plan->groups[k], device);
    if (!kernel.ok()) {
      if (!write(dir / (name + ".error.txt"), kernel.status().to_string() + "\n")) return 1;
      continue;
    }
    auto source = build_kernel(kernel->spec);
    const std::string text = source.ok() ? *source : source.status().to_string() + "\n";
    if (!write(dir / (name + (source.ok() ? ".comp" : ".error.txt")), text)) return 1;
  }
  return 0;
}

}  // namespace
}  // namespace vkfuse

int main(int argc, char** argv) {
  using namespace vkfuse;
  if (argc != 3) {
    std::fprintf(stderr, "usage: vkfuse_glsl_snapshot MODEL.onnx OUT_DIR\n");
    return 2;
  }
  const std::string model = argv[1];
  const std::filesystem::path out = argv[2];
  const std::pair<const char*, DevicePlan> devices[] = {{"lavapipe", lavapipe_plan()}, {"nvidia", nvidia_plan()}};
  int failures = 0;
  for (const auto& [device_name, device] : devices) {
    for (DType dtype : {DType::kF32, DType::kF16}) {
      for (std::int64_t batch : {1, 8}) {
        for (FusionMode mode : {FusionMode::kFused, FusionMode::kUnfused}) {
          const std::string config = std::string(dtype_name(dtype)) + "-b" + std::to_string(batch) + "-" +
                                     (mode == FusionMode::kFused ? "fused" : "unfused");
          failures += snapshot(model, device, dtype, batch, mode, out / device_name / config);
        }
      }
    }
  }
  if (failures > 0) std::fprintf(stderr, "vkfuse_glsl_snapshot: %d configurations could not be written\n", failures);
  return failures > 0 ? 1 : 0;
}
