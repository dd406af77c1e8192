// Session: plan -> kernels -> pipelines -> memory -> one recorded command buffer; run re-submits it.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <thread>

#include <vkfuse/vkfuse.hpp>

#include "backend/command.h"
#include "backend/log.h"
#include "backend/memory.h"
#include "backend/pipeline.h"
#include "codegen/kernel_builder.h"
#include "host/context_impl.h"
#include "host/fusion_planner.h"
#include "host/graph.h"
#include "host/group_kernel.h"
#include "host/memory_planner.h"
#include "host/passes/fold_layer_norm.h"
#include "host/parallel_for.h"
#include "host/scheduler.h"

namespace vkfuse {
namespace {

bool fusion_disabled_by_env() {
  const char* env = std::getenv("VKFUSE_DISABLE_FUSION");
  return env && std::strcmp(env, "0") != 0 && *env != '\0';
}

// The most bytes of constants one block (one allocation) takes; a block also stays within one binding.
constexpr std::uint64_t kConstantBlockBytes = std::uint64_t{256} << 20;

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Where a stored value lives: its own buffer (inputs, outputs, constants) or a slice of the arena.
struct Placement {
  VkBuffer buffer = VK_NULL_HANDLE;
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};

}  // namespace

struct Session::Impl {
  std::shared_ptr<Context::Impl> context;
  Graph graph;
  bool fusion = true;
  bool profile = true;
  FusionPlan plan;
  std::vector<GroupKernel> kernels;
  MemoryPlan memory;
  std::vector<GroupInfo> infos;
  double last_gpu_ms = 0.0;
  RecordStats record_stats;
  Schedule schedule;  // as recorded; measure_gpu_ms replays its dispatches
  SessionCreateStats create_stats;

  // Declaration order is destruction order reversed: the recorder (which waits for the GPU) goes
  // first, then descriptors and pipelines, then the buffers they reference.
  std::map<ValueId, Buffer> own_buffers;  // graph inputs and outputs
  std::vector<Buffer> constant_blocks;     // the constants kernels bind, packed (pack_constants)
  std::map<ValueId, Placement> constant_places;
  std::map<ValueId, Buffer> uploads;      // staging for graph inputs
  std::map<ValueId, Buffer> downloads;    // staging for graph outputs
  std::optional<Buffer> arena;
  // Split K across workgroups (KernelLaunch::split_counters): counters and partial sums, placed per group
  // by allocate_split_buffers; each group lists its ranges as read and written, so the scheduler orders
  // the groups that share partial sums.
  std::optional<Buffer> split_counters, split_partials;
  struct SplitPlace {
    std::uint64_t counter_offset = 0, partial_offset = 0;  // bytes into split_counters / split_partials
  };
  std::vector<SplitPlace> split_places;  // per kernel (used where its spec splits K)
  std::vector<ComputePipeline> pipelines;
  std::optional<DescriptorArena> descriptors;
  std::optional<CommandRecorder> recorder;

  // Fused sessions run the graph with its LayerNorms folded into the products that read them
  // (host/passes/fold_layer_norm.h), where there are any; unfused ones the graph as it was built.
  std::optional<FoldedLayerNorms> folded;  // graph_to_plan's
  const GraphIR& ir() const { return folded ? folded->graph : graph_ir(graph); }
  const DeviceContext& ctx() const { return context->ctx(); }

  // Each group's kernel is built, compiled (or found in the kernel cache) and made into a pipeline as one
  // task; the tasks run on a few threads and land in group order. The steps' times are summed per step.
  Status compile_kernels() {
    const std::size_t count = plan.groups.size();
    std::vector<std::optional<GroupKernel>> built(count);
    std::vector<std::optional<ComputePipeline>> made(count);
    std::vector<std::array<double, 3>> step_ms(count, {0.0, 0.0, 0.0});  // build, compile, pipeline
    const VkPipelineCache pipeline_cache = context->pipeline_cache->handle();
    auto compile_group = [&](std::size_t k) -> Status {
      const FusionGroup& group = plan.groups[k];
      auto start = Clock::now();
      VKFUSE_ASSIGN_OR_RETURN(GroupKernel kernel, make_group_kernel(ir(), group, context->plan));
      VKFUSE_ASSIGN_OR_RETURN(std::string source, build_kernel(kernel.spec));
      step_ms[k][0] = ms_since(start);
      start = Clock::now();
      VKFUSE_ASSIGN_OR_RETURN(SpirvBlob spirv, context->cache->get_or_compile(source, group.label, context->device_identity));
      step_ms[k][1] = ms_since(start);
      start = Clock::now();
      PipelineDesc desc{*spirv, count_bindings(kernel.spec), 0, group.label};
      VKFUSE_ASSIGN_OR_RETURN(ComputePipeline pipeline, ComputePipeline::create(ctx(), desc, pipeline_cache));
      step_ms[k][2] = ms_since(start);
      if (log_enabled(LogLevel::kDebug)) {
        char line[160];
        std::snprintf(line, sizeof(line), "': build %.1f ms, compile %.1f ms, pipeline %.1f ms, %zu SPIR-V words",
                      step_ms[k][0], step_ms[k][1], step_ms[k][2], spirv->size());
        log_message(LogLevel::kDebug, "kernel " + std::to_string(k) + " '" + group.label + line + describe_launch(kernel.spec));
      }
      built[k].emplace(std::move(kernel));
      made[k].emplace(std::move(pipeline));
      return {};
    };
    create_stats.compile_threads =
        static_cast<unsigned>(std::clamp<std::size_t>(count, 1, compile_thread_count()));
    VKFUSE_TRY(parallel_for(count, create_stats.compile_threads, compile_group));
    for (std::size_t k = 0; k < count; ++k) {
      const FusionGroup& group = plan.groups[k];
      GroupKernel& kernel = *built[k];
      pipelines.push_back(std::move(*made[k]));
      infos.push_back({group.label, group.nodes.size(), kernel.bound_values.size() - group.outputs.size(),
                       group.outputs.size(), 0.0});
      kernels.push_back(std::move(kernel));
      create_stats.build_ms += step_ms[k][0];
      create_stats.compile_ms += step_ms[k][1];
      create_stats.pipelines_ms += step_ms[k][2];
    }
    return {};
  }

  // A value's own device buffer, made once.
  Status own(ValueId v) {
    const Value& value = ir().value(v);
    if (own_buffers.count(v)) return {};
    // A buffer may exceed one binding's range: kernel ops bind it in chunks (record() checks the rest).
    VKFUSE_ASSIGN_OR_RETURN(Buffer buffer, Buffer::create(ctx(), value.bytes(), MemoryUsage::kDeviceLocal, value.name));
    own_buffers.emplace(v, std::move(buffer));
    return {};
  }

  // The constants a kernel may bind: every one that something reads, except one-element constants,
  // which kernels bake in as literals (group_kernel.cpp). A superset is harmless; allocate_buffers()
  // uploads any bound constant this missed.
  std::vector<ValueId> bindable_constants() const {
    std::vector<ValueId> out;
    for (ValueId v = 0; v < static_cast<ValueId>(ir().values.size()); ++v) {
      const Value& value = ir().value(v);
      if (value.constant && value.constant->numel() > 1 && !value.consumers.empty()) out.push_back(v);
    }
    return out;
  }

  Status allocate_buffers() {
    const GraphIR& g = ir();
    for (ValueId v : g.inputs) {
      VKFUSE_TRY(own(v));
      VKFUSE_ASSIGN_OR_RETURN(Buffer staging, Buffer::create(ctx(), g.value(v).bytes(), MemoryUsage::kUpload));
      uploads.emplace(v, std::move(staging));
    }
    for (ValueId v : g.outputs) {
      VKFUSE_TRY(own(v));
      VKFUSE_ASSIGN_OR_RETURN(Buffer staging, Buffer::create(ctx(), g.value(v).bytes(), MemoryUsage::kDownload));
      downloads.emplace(v, std::move(staging));
    }
    std::vector<ValueId> late;  // bound constants bindable_constants() did not foresee
    for (const GroupKernel& kernel : kernels)
      for (ValueId v : kernel.bound_values)
        if (g.value(v).constant && !constant_places.count(v) && std::find(late.begin(), late.end(), v) == late.end())
          late.push_back(v);
    VKFUSE_TRY(upload_constants(late));

    // Intermediates: one arena, offsets from liveness.
    std::vector<std::vector<ValueId>> reads, writes;
    std::vector<std::size_t> steps;
    for (std::size_t k = 0; k < kernels.size(); ++k) {
      steps.push_back(plan.groups[k].level);
      const std::size_t outputs = plan.groups[k].outputs.size();
      const auto& bound = kernels[k].bound_values;
      reads.emplace_back();
      for (auto v = bound.begin(); v != bound.end() - static_cast<std::ptrdiff_t>(outputs); ++v) {
        const auto prefix = plan.prefix_of.find(*v);  // a read of the value it is the leading bytes of
        reads.back().push_back(prefix == plan.prefix_of.end() ? *v : prefix->second);
      }
      writes.emplace_back(bound.end() - static_cast<std::ptrdiff_t>(outputs), bound.end());
    }
    memory = plan_memory(g, reads, writes, steps, context->plan.binding_alignment);
    for (const auto& [v, offset] : memory.offsets)
      if (g.value(v).bytes() > context->plan.max_binding_bytes)
        return make_error(ErrorCode::kUnsupported, "intermediate '" + g.value(v).name + "' " +
                                                       shape_to_string(g.value(v).shape) + " exceeds the device's " +
                                                       std::to_string(context->plan.max_binding_bytes) +
                                                       "-byte storage buffer binding limit");
    if (memory.arena_bytes > 0) {
      VKFUSE_ASSIGN_OR_RETURN(Buffer buffer, Buffer::create(ctx(), memory.arena_bytes, MemoryUsage::kDeviceLocal, "arena"));
      arena.emplace(std::move(buffer));
    }
    return allocate_split_buffers();
  }

  // The split-K scratch: counters zeroed once here (the groups leave them zero), partial sums
  // uninitialized. Every split group counts in counters of its own; partial sums are shared between
  // levels (one barrier apart) but not within one, where groups may run at once: the n-th split group
  // of each level uses slot n, as large as its largest user.
  Status allocate_split_buffers() {
    const std::uint64_t align = context->plan.binding_alignment;
    auto aligned = [align](std::uint64_t bytes) { return (bytes + align - 1) / align * align; };
    std::uint64_t counter_bytes = 0;
    std::vector<std::uint64_t> slot_bytes;
    std::vector<std::size_t> slot_of(kernels.size(), 0);
    std::size_t level = 0, in_level = 0;
    split_places.assign(kernels.size(), {});
    for (std::size_t k = 0; k < kernels.size(); ++k) {
      const KernelSpec& spec = kernels[k].spec;
      if (spec.split_counters == 0) continue;
      if (plan.groups[k].level != level) level = plan.groups[k].level, in_level = 0;
      split_places[k].counter_offset = counter_bytes;
      counter_bytes += aligned(spec.split_counters * sizeof(std::uint32_t));
      slot_of[k] = in_level++;
      if (slot_bytes.size() <= slot_of[k]) slot_bytes.push_back(0);
      slot_bytes[slot_of[k]] = std::max(slot_bytes[slot_of[k]], aligned(spec.split_partial_bytes));
    }
    if (counter_bytes == 0) return {};
    std::vector<std::uint64_t> slot_offset(slot_bytes.size(), 0);
    for (std::size_t i = 1; i < slot_bytes.size(); ++i) slot_offset[i] = slot_offset[i - 1] + slot_bytes[i - 1];
    const std::uint64_t partials = slot_offset.back() + slot_bytes.back();
    for (std::size_t k = 0; k < kernels.size(); ++k)
      if (kernels[k].spec.split_counters > 0) {
        if (kernels[k].spec.split_partial_bytes > context->plan.max_binding_bytes)
          return group_error(ErrorCode::kInternal, plan.groups[k].label, "split-K partial sums of " +
                             std::to_string(kernels[k].spec.split_partial_bytes) +
                             " bytes exceed one storage buffer binding");
        split_places[k].partial_offset = slot_offset[slot_of[k]];
      }
    VKFUSE_ASSIGN_OR_RETURN(Buffer counter_buffer,
                            Buffer::create(ctx(), counter_bytes, MemoryUsage::kDeviceLocal, "split-K counters"));
    VKFUSE_ASSIGN_OR_RETURN(Buffer partial_buffer,
                            Buffer::create(ctx(), std::max<std::uint64_t>(partials, align), MemoryUsage::kDeviceLocal,
                                           "split-K partial sums"));
    std::vector<Staged> zeros;
    VKFUSE_ASSIGN_OR_RETURN(Buffer staging, Buffer::create(ctx(), counter_bytes, MemoryUsage::kUpload));
    std::memset(staging.mapped(), 0, counter_bytes);
    zeros.push_back({std::move(staging), counter_buffer.handle()});
    VKFUSE_TRY(copy_staged(zeros));
    split_counters.emplace(std::move(counter_buffer));
    split_partials.emplace(std::move(partial_buffer));
    return {};
  }

  Placement placement(ValueId v) const {
    const Value& value = ir().value(v);
    if (auto it = plan.prefix_of.find(v); it != plan.prefix_of.end()) {  // the leading bytes of another value
      Placement whole = placement(it->second);
      return {whole.buffer, whole.offset, value.bytes()};
    }
    if (auto it = own_buffers.find(v); it != own_buffers.end()) return {it->second.handle(), 0, value.bytes()};
    if (auto it = constant_places.find(v); it != constant_places.end()) return it->second;
    return {arena->handle(), memory.offsets.at(v), value.bytes()};
  }

  // Constants go up once, packed into blocks (pack_constants): each block is one device-local buffer,
  // filled from one staging buffer (written by the worker threads) in one recording.
  Status upload_constants(const std::vector<ValueId>& constants) {
    if (constants.empty()) return {};
    std::vector<std::uint64_t> sizes;
    for (ValueId v : constants) sizes.push_back(ir().value(v).bytes());
    const std::uint64_t block_limit = std::min<std::uint64_t>(context->plan.chunk_bytes(), kConstantBlockBytes);
    const ConstantPacking packing = pack_constants(sizes, context->plan.binding_alignment, block_limit);
    std::vector<Staged> staging;
    std::vector<VkBuffer> blocks;
    for (std::uint64_t bytes : packing.block_bytes) {
      const std::string name = "constants " + std::to_string(constant_blocks.size());
      VKFUSE_ASSIGN_OR_RETURN(Buffer block, Buffer::create(ctx(), bytes, MemoryUsage::kDeviceLocal, name));
      VKFUSE_ASSIGN_OR_RETURN(Buffer up, Buffer::create(ctx(), bytes, MemoryUsage::kUpload, name + " (staging)"));
      blocks.push_back(block.handle());
      staging.push_back({std::move(up), block.handle()});
      constant_blocks.push_back(std::move(block));
    }
    VKFUSE_TRY(parallel_for(constants.size(), compile_thread_count(), [&](std::size_t i) -> Status {
      const HostTensor& data = *ir().value(constants[i]).constant;
      const ConstantSlot& slot = packing.slots[i];
      std::memcpy(static_cast<std::byte*>(staging[slot.block].staging.mapped()) + slot.offset, data.bytes.data(), data.bytes.size());
      return {};
    }));
    for (std::size_t i = 0; i < constants.size(); ++i)
      constant_places[constants[i]] = {blocks[packing.slots[i].block], packing.slots[i].offset, sizes[i]};
    return copy_staged(staging);
  }

  // Host-written upload buffers and the device buffers they fill (from offset 0, the staging's size).
  struct Staged {
    Buffer staging;
    VkBuffer dst = VK_NULL_HANDLE;
  };
  // Flushes the staging buffers and copies them to their destinations in one recording, waiting for it.
  Status copy_staged(std::vector<Staged>& copies) {
    if (copies.empty()) return {};
    for (Staged& c : copies) VKFUSE_TRY(c.staging.flush());
    VKFUSE_ASSIGN_OR_RETURN(CommandRecorder once, CommandRecorder::create(ctx(), 0));
    VKFUSE_TRY(once.begin());
    for (const Staged& c : copies) {
      const VkBufferCopy region{0, 0, c.staging.size()};
      once.copy(c.staging.handle(), c.dst, {&region, 1});
    }
    VKFUSE_TRY(once.end());
    return once.submit_and_wait();
  }

  // ", roots/conv2d.glsl, 256 invocations x 39 workgroups, VKF_BM 64u VKF_BN 64u ...": a kernel root's
  // template, geometry and blocking, for the debug log (which tile a slow group got).
  static std::string describe_launch(const KernelSpec& spec) {
    if (!spec.is_kernel()) return "";
    const std::array<std::uint64_t, 3> groups = kernel_workgroups(spec);
    std::string text = ", " + spec.kernel_root + ", " + std::to_string(spec.workgroup_size) + " invocations x " +
                       std::to_string(groups[0] * groups[1] * groups[2]) + " workgroups";
    for (const auto& [name, value] : spec.kernel_defines)
      if (name.rfind("VKF_B", 0) == 0 && name.size() <= 6) text += ", " + name + " " + value;  // VKF_BM, VKF_BN, VKF_BK
      else if (name == "VKF_SPLIT_GROUPS" || name == "VKF_SPLIT_K" || name.rfind("VKF_WARPS", 0) == 0 || name == "VKF_TM" || name == "VKF_TN")
        text += ", " + name + " " + value;
    return text;
  }

  // The bytes a group's output covers in its binding `p`: all of it, or (a Concat's slice, which may
  // start at 0, or a copy's places) the runs its placement puts it in, so that the groups storing the
  // other parts need no barrier between them. Past kMaxRuns runs, the span from the first to the last.
  static void add_written_ranges(const Placement& p, const ElementPlacement& at, const Value& value,
                                 std::vector<MemoryRange>& writes) {
    constexpr std::int64_t kMaxRuns = 64;
    const std::uint64_t element = dtype_size(value.dtype);
    const std::int64_t numel = shape_numel(value.shape);
    const std::int64_t run = at.slice > 0 ? at.slice : numel, runs = numel / run;
    // Strides are positive: a span's last element lies last.
    auto range = [&](std::int64_t first_run, std::int64_t last_run) {
      const std::uint64_t begin = static_cast<std::uint64_t>(at.at(first_run * run)) * element;
      const std::uint64_t end = static_cast<std::uint64_t>(at.at(last_run * run + run - 1) + 1) * element;
      writes.push_back({p.buffer, p.offset + begin, end - begin});
    };
    if (runs > kMaxRuns) return range(0, runs - 1);
    for (std::int64_t r = 0; r < runs; ++r) range(r, r);
  }

  Status record() {
    std::uint32_t total_bindings = 0;
    for (const GroupKernel& k : kernels) total_bindings += count_bindings(k.spec);
    VKFUSE_ASSIGN_OR_RETURN(DescriptorArena pool, DescriptorArena::create(ctx(), static_cast<std::uint32_t>(kernels.size()),
                                                                         std::max<std::uint32_t>(total_bindings, 1)));
    descriptors.emplace(std::move(pool));
    for (std::size_t k = 0; k < kernels.size(); ++k) {
      const GroupKernel& kernel = kernels[k];
      const std::size_t outputs = plan.groups[k].outputs.size();
      std::vector<BufferRange> ranges;
      ScheduledDispatch dispatch;
      for (std::size_t b = 0; b < kernel.bound_values.size(); ++b) {
        Placement p = placement(kernel.bound_values[b]);
        if (auto chunk = kernel.chunks.find(b); chunk != kernel.chunks.end()) {
          p.offset += chunk->second.offset;
          p.bytes = chunk->second.bytes;
        }
        if (p.bytes > context->plan.max_binding_bytes) {
          const Value& value = ir().value(kernel.bound_values[b]);
          return make_error(ErrorCode::kUnsupported,
                            "group '" + plan.groups[k].label + "' reads '" + value.name + "' " +
                                shape_to_string(value.shape) + " (" + std::to_string(p.bytes) +
                                " bytes) through one storage buffer binding; this device allows at most " +
                                std::to_string(context->plan.max_binding_bytes) + " bytes per binding");
        }
        ranges.push_back({p.buffer, p.offset, p.bytes});
        const bool is_output = b >= kernel.bound_values.size() - outputs;
        if (!is_output) {
          dispatch.reads.push_back({p.buffer, p.offset, p.bytes});
          continue;
        }
        const std::size_t o = b - (kernel.bound_values.size() - outputs);
        const Value& written = ir().value(plan.groups[k].outputs[o]);
        add_written_ranges(p, kernel.spec.outputs[o].placement, written, dispatch.writes);
      }
      if (kernel.spec.split_counters > 0) {
        const MemoryRange counters{split_counters->handle(), split_places[k].counter_offset,
                                   kernel.spec.split_counters * sizeof(std::uint32_t)};
        const MemoryRange partials{split_partials->handle(), split_places[k].partial_offset, kernel.spec.split_partial_bytes};
        for (const MemoryRange& r : {counters, partials}) {
          ranges.push_back({r.buffer, r.offset, r.bytes});
          dispatch.reads.push_back(r);
          dispatch.writes.push_back(r);
        }
      }
      VKFUSE_ASSIGN_OR_RETURN(VkDescriptorSet set, descriptors->allocate(pipelines[k], ranges));
      dispatch.pipeline = &pipelines[k];
      dispatch.set = set;
      const std::array<std::uint64_t, 3> groups = kernel_workgroups(kernel.spec);
      dispatch.groups = {static_cast<std::uint32_t>(std::clamp<std::uint64_t>(groups[0], 1, context->plan.max_groups_x)),
                         static_cast<std::uint32_t>(groups[1]), static_cast<std::uint32_t>(groups[2])};
      schedule.dispatches.push_back(std::move(dispatch));
    }
    for (const auto& [v, up] : uploads) schedule.uploads.push_back({up.handle(), own_buffers.at(v).handle(), up.size()});
    for (const auto& [v, down] : downloads)
      schedule.downloads.push_back({own_buffers.at(v).handle(), down.handle(), down.size()});
    VKFUSE_ASSIGN_OR_RETURN(CommandRecorder rec, CommandRecorder::create(ctx(), static_cast<std::uint32_t>(kernels.size() + 1)));
    recorder.emplace(std::move(rec));
    VKFUSE_ASSIGN_OR_RETURN(record_stats, record_schedule(*recorder, schedule, profile ? Timestamps::kEachDispatch : Timestamps::kNone));
    return {};
  }

  // The dispatches alone, `iterations` times back to back in one submission: no uploads, downloads or
  // idle gaps, so the GPU stays at its working clocks. Mean milliseconds per iteration. Timestamps only
  // around the whole: one after each dispatch would keep independent groups from overlapping, which
  // a real run (no timestamps) lets them do.
  Result<double> measure_gpu_ms(int iterations) {
    if (iterations < 1) return make_error(ErrorCode::kInvalidArgument, "measure_gpu_ms: iterations must be >= 1");
    Schedule repeated;
    for (int i = 0; i < iterations; ++i)
      repeated.dispatches.insert(repeated.dispatches.end(), schedule.dispatches.begin(), schedule.dispatches.end());
    constexpr std::uint32_t slots = 2;
    VKFUSE_ASSIGN_OR_RETURN(CommandRecorder bench, CommandRecorder::create(ctx(), slots));
    VKFUSE_ASSIGN_OR_RETURN(RecordStats stats, record_schedule(bench, repeated, Timestamps::kAround));
    if (!stats.timestamps) return make_error(ErrorCode::kUnsupported, "measure_gpu_ms: the device has no timestamps");
    VKFUSE_TRY(bench.submit_and_wait());
    VKFUSE_ASSIGN_OR_RETURN(std::vector<double> ns, bench.read_timestamps_ns(slots));
    return (ns.back() - ns.front()) * 1e-6 / iterations;
  }

  Result<std::map<std::string, HostTensor>> run(const std::map<std::string, HostTensor>& inputs) {
    const GraphIR& g = ir();
    for (const auto& [name, tensor] : inputs) {
      bool known = false;
      for (ValueId v : g.inputs) known |= g.value(v).name == name;
      if (!known) return make_error(ErrorCode::kInvalidArgument, "run: the graph has no input named '" + name + "'");
    }
    for (ValueId v : g.inputs) {
      const Value& value = g.value(v);
      auto it = inputs.find(value.name);
      if (it == inputs.end()) return make_error(ErrorCode::kInvalidArgument, "run: input '" + value.name + "' is missing");
      const HostTensor& t = it->second;
      if (t.shape != value.shape || t.dtype != value.dtype)
        return make_error(ErrorCode::kInvalidArgument,
                          "run: input '" + value.name + "' is " + dtype_name(t.dtype) + shape_to_string(t.shape) +
                              ", the graph expects " + dtype_name(value.dtype) + shape_to_string(value.shape));
      if (t.bytes.size() != value.bytes())
        return make_error(ErrorCode::kInvalidArgument, "run: input '" + value.name + "' holds " +
                                                           std::to_string(t.bytes.size()) + " bytes, expected " +
                                                           std::to_string(value.bytes()));
      Buffer& up = uploads.at(v);
      std::memcpy(up.mapped(), t.bytes.data(), t.bytes.size());
      VKFUSE_TRY(up.flush());
    }
    VKFUSE_TRY(recorder->submit_and_wait());
    if (record_stats.timestamps) {
      VKFUSE_ASSIGN_OR_RETURN(std::vector<double> ns, recorder->read_timestamps_ns(static_cast<std::uint32_t>(kernels.size() + 1)));
      last_gpu_ms = 0.0;
      for (std::size_t k = 0; k < infos.size() && k + 1 < ns.size(); ++k) {
        infos[k].gpu_ms = (ns[k + 1] - ns[k]) * 1e-6;
        last_gpu_ms += infos[k].gpu_ms;
      }
    }
    std::map<std::string, HostTensor> outputs;
    for (ValueId v : g.outputs) {
      const Value& value = g.value(v);
      Buffer& down = downloads.at(v);
      VKFUSE_TRY(down.invalidate());
      HostTensor t{value.shape, value.dtype, std::vector<std::byte>(value.bytes())};
      std::memcpy(t.bytes.data(), down.mapped(), t.bytes.size());
      outputs.emplace(value.name, std::move(t));
    }
    return outputs;
  }
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

Result<Session> Session::create(const Context& context, const Graph& graph, const SessionOptions& options) {
  if (graph.node_count() == 0) return make_error(ErrorCode::kInvalidArgument, "Session::create: the graph is empty");
  auto impl = std::make_unique<Impl>();
  impl->context = context.impl();
  impl->graph = graph;
  impl->fusion = options.fusion && !fusion_disabled_by_env();
  impl->profile = options.profile;
  const FusionMode mode = impl->fusion ? FusionMode::kFused : FusionMode::kUnfused;
  SessionCreateStats& stats = impl->create_stats;
  const auto start = Clock::now();
  auto phase = start;
  (void)graph_to_plan(graph_ir(impl->graph), mode, impl->folded);
  VKFUSE_ASSIGN_OR_RETURN(impl->plan, plan_fusion(impl->ir(), impl->context->plan, mode));
  stats.plan_ms = ms_since(phase);
  phase = Clock::now();
  // The constants' buffers and upload need no kernel: they run on a thread of their own beside the
  // parallel stage (which creates pipelines and never touches the queue or these buffers).
  Status constants_status;
  std::thread constants([&impl, &constants_status, &stats] {
    const auto begin = Clock::now();
    constants_status = impl->upload_constants(impl->bindable_constants());
    stats.constants_ms = ms_since(begin);
  });
  const Status kernels_status = impl->compile_kernels();
  stats.kernels_ms = ms_since(phase);
  phase = Clock::now();
  constants.join();
  const double constants_wait_ms = ms_since(phase);
  VKFUSE_TRY(kernels_status);
  VKFUSE_TRY(constants_status);
  phase = Clock::now();
  impl->context->save_pipeline_cache();
  stats.cache_save_ms = ms_since(phase);
  phase = Clock::now();
  VKFUSE_TRY(impl->allocate_buffers());
  stats.memory_ms = constants_wait_ms + ms_since(phase);
  phase = Clock::now();
  VKFUSE_TRY(impl->record());
  stats.record_ms = ms_since(phase);
  stats.total_ms = ms_since(start);
  log_message(LogLevel::kInfo, "session: " + std::to_string(impl->plan.op_count) + " ops in " +
                                   std::to_string(impl->plan.groups.size()) + " dispatches, arena " +
                                   std::to_string(impl->memory.arena_bytes) + " bytes");
  return Session(std::move(impl));
}

Result<std::map<std::string, HostTensor>> Session::run(const std::map<std::string, HostTensor>& inputs) {
  return impl_->run(inputs);
}

Result<double> Session::measure_gpu_ms(int iterations) { return impl_->measure_gpu_ms(iterations); }

const std::vector<GroupInfo>& Session::groups() const { return impl_->infos; }
std::size_t Session::dispatch_count() const { return impl_->plan.groups.size(); }
std::size_t Session::barrier_count() const { return impl_->record_stats.barriers; }
double Session::last_gpu_ms() const { return impl_->last_gpu_ms; }
bool Session::fusion_enabled() const { return impl_->fusion; }
std::uint64_t Session::arena_bytes() const { return impl_->memory.arena_bytes; }
const SessionCreateStats& Session::create_stats() const { return impl_->create_stats; }

}  // namespace vkfuse
