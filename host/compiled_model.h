// CompiledModel: what a Session compiles once and every Execution of it shares: the fusion plan, the
// kernels and their pipelines, the constants (weights) on the device, and the layouts executions
// allocate from (intermediate arena, split-K scratch). Immutable once Session::create has built it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include <vkfuse/vkfuse.hpp>

#include "backend/memory.h"
#include "backend/pipeline.h"
#include "host/context_impl.h"
#include "host/fusion_planner.h"
#include "host/graph.h"
#include "host/group_kernel.h"
#include "host/memory_planner.h"
#include "host/passes/fold_layer_norm.h"

namespace vkfuse {

// Where a stored value lives: a buffer (an input's, an output's, a constant block, the arena) and a
// byte range of it.
struct Placement {
  VkBuffer buffer = VK_NULL_HANDLE;
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};

// Split K across workgroups (KernelLaunch::split_counters): each split group's counters and partial
// sums, as byte offsets into an execution's two scratch buffers (allocate per execution: groups of
// two executions in flight must not share them).
struct SplitLayout {
  struct Place {
    std::uint64_t counter_offset = 0, partial_offset = 0;
  };
  std::vector<Place> places;  // per kernel (used where its spec splits K)
  std::uint64_t counter_bytes = 0, partial_bytes = 0;
};

struct CompiledModel {
  std::shared_ptr<Context::Impl> context;
  Graph graph;
  bool fusion = true;
  bool profile = true;
  FusionPlan plan;
  std::vector<GroupKernel> kernels;
  std::vector<GroupInfo> infos;  // gpu_ms stays 0 here: executions time their own runs
  MemoryPlan memory;             // offsets into each execution's arena
  SplitLayout split;
  SessionCreateStats create_stats;

  std::vector<Buffer> constant_blocks;  // the constants kernels bind, packed (pack_constants)
  std::map<ValueId, Placement> constant_places;
  std::vector<ComputePipeline> pipelines;
  // Image inputs (SessionOptions::image_inputs): how each is sampled, and the one sampler they use.
  std::map<ValueId, KernelImage> images;
  std::map<ValueId, ImageInput> image_inputs;  // as the session was given them
  UniqueHandle<VkSampler> sampler;
  // Image outputs (SessionOptions::image_outputs): the graph with their stores appended
  // (host/passes/image_outputs.h), and each store's result (an output of ir()) as it was asked for.
  std::optional<GraphIR> with_image_stores;
  std::map<ValueId, ImageOutput> image_outputs;

  // Fused sessions run the graph with its LayerNorms folded into the products that read them
  // (host/passes/fold_layer_norm.h), where there are any; unfused ones the graph as it was built.
  std::optional<FoldedLayerNorms> folded;
  const GraphIR& ir() const { return folded ? folded->graph : unfolded(); }
  const GraphIR& unfolded() const { return with_image_stores ? *with_image_stores : graph_ir(graph); }
  const DeviceContext& ctx() const { return context->ctx(); }

  // Builds, compiles and makes pipelines for every group, on worker threads, calling `progress`
  // (SessionOptions::progress; may be empty) once per group. The callback is not kept.
  Status compile_kernels(const std::function<void(std::string_view, std::size_t, std::size_t)>& progress);
  // The constants a kernel may bind (a superset is harmless); upload_constants puts them on the device.
  std::vector<ValueId> bindable_constants() const;
  Status upload_constants(const std::vector<ValueId>& constants);
  // After compile_kernels: uploads bound constants bindable_constants missed, plans the arena and the
  // split-K layout.
  Status plan_memory();

  std::uint64_t constant_bytes() const;

  // SessionOptions::image_inputs -> images and the sampler; kInvalidArgument names a bad input.
  Status set_image_inputs(const std::map<std::string, ImageInput>& inputs);
  // SessionOptions::image_outputs, after planning: image_outputs by the values of ir().
  void set_image_outputs(const std::map<std::string, ImageOutput>& outputs);
  bool has_images() const { return !images.empty() || !image_outputs.empty(); }
  // Marks the kernel's reads of image inputs as samples of them, and its stores of image outputs as
  // texel stores; a path that cannot sample fails.
  Status apply_images(GroupKernel& kernel, const FusionGroup& group) const;
};

// Host-written upload buffers and the device buffers they fill (from offset 0, the staging's size).
struct Staged {
  Buffer staging;
  VkBuffer dst = VK_NULL_HANDLE;
};
// Flushes the staging buffers and copies them to their destinations in one recording, waiting for it.
Status copy_staged(const DeviceContext& ctx, std::vector<Staged>& copies);

}  // namespace vkfuse
