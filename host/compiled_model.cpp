// CompiledModel: kernels -> pipelines, constants -> device, memory layouts; shared by executions.
#include "host/compiled_model.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>

#include "backend/command.h"
#include "backend/log.h"
#include "codegen/kernel_builder.h"
#include "host/parallel_for.h"
#include "host/passes/image_outputs.h"

namespace vkfuse {
namespace {

// The most bytes of constants one block (one allocation) takes; a block also stays within one binding.
constexpr std::uint64_t kConstantBlockBytes = std::uint64_t{256} << 20;

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// ", roots/conv2d.glsl, 256 invocations x 39 workgroups, VKF_BM 64u VKF_BN 64u ...": a kernel root's
// template, geometry and blocking, for the debug log (which tile a slow group got).
std::string describe_launch(const KernelSpec& spec) {
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

// Failures a damaged module can cause; out of memory, a lost device or a device limit are not its doing.
bool may_be_the_module(const Status& status) {
  return status.code() == ErrorCode::kVulkan || status.code() == ErrorCode::kInvalidArgument ||
         status.code() == ErrorCode::kCompile;
}

}  // namespace

Status copy_staged(const DeviceContext& ctx, std::vector<Staged>& copies) {
  if (copies.empty()) return {};
  for (Staged& c : copies) VKFUSE_TRY(c.staging.flush());
  VKFUSE_ASSIGN_OR_RETURN(CommandRecorder once, CommandRecorder::create(ctx, 0));
  VKFUSE_TRY(once.begin());
  for (const Staged& c : copies) {
    const VkBufferCopy region{0, 0, c.staging.size()};
    once.copy(c.staging.handle(), c.dst, {&region, 1});
  }
  VKFUSE_TRY(once.end());
  return once.submit_and_wait();
}

// Each group's kernel is built, compiled (or found in the kernel cache) and made into a pipeline as one
// task; the tasks run on a few threads and land in group order. The steps' times are summed per step.
Status CompiledModel::compile_kernels(
    const std::function<void(std::string_view, std::size_t, std::size_t)>& progress) {
  const std::size_t count = plan.groups.size();
  std::vector<std::optional<GroupKernel>> built(count);
  std::vector<std::optional<ComputePipeline>> made(count);
  std::vector<std::array<double, 3>> step_ms(count, {0.0, 0.0, 0.0});  // build, compile, pipeline
  const VkPipelineCache pipeline_cache = context->pipeline_cache->handle();
  std::mutex progress_mutex;
  std::size_t done = 0;
  auto compile_group = [&](std::size_t k) -> Status {
    const FusionGroup& group = plan.groups[k];
    auto start = Clock::now();
    VKFUSE_ASSIGN_OR_RETURN(GroupKernel kernel, make_group_kernel(ir(), group, context->plan));
    VKFUSE_TRY(apply_images(kernel, group));
    VKFUSE_ASSIGN_OR_RETURN(std::string source, build_kernel(kernel.spec));
    step_ms[k][0] = ms_since(start);
    start = Clock::now();
    VKFUSE_ASSIGN_OR_RETURN(SpirvBlob spirv, context->cache->get_or_compile(source, group.label, context->device_identity));
    step_ms[k][1] = ms_since(start);
    start = Clock::now();
    PipelineDesc desc{*spirv, count_bindings(kernel.spec), image_bindings(kernel.spec),
                      storage_image_bindings(kernel.spec), 0, group.label};
    Result<ComputePipeline> created = ComputePipeline::create(ctx(), desc, pipeline_cache);
    if (!created.ok() && may_be_the_module(created.status())) {
      // A disk entry can hold a module that passes its checks and still is not one the driver takes:
      // it is compiled from the source again, once, and the entry replaced.
      VKFUSE_ASSIGN_OR_RETURN(SpirvBlob fresh, context->cache->rebuild_refused(source, group.label,
                                                                                context->device_identity, spirv));
      if (fresh) {
        log_message(LogLevel::kInfo, created.status().message() + ": the module came from the kernel cache; compiled it again");
        spirv = std::move(fresh);
        desc.spirv = *spirv;
        created = ComputePipeline::create(ctx(), desc, pipeline_cache);
      }
    }
    if (!created.ok()) return created.status();
    ComputePipeline pipeline = std::move(created).value();
    step_ms[k][2] = ms_since(start);
    if (log_enabled(LogLevel::kDebug)) {
      char line[160];
      std::snprintf(line, sizeof(line), "': build %.1f ms, compile %.1f ms, pipeline %.1f ms, %zu SPIR-V words",
                    step_ms[k][0], step_ms[k][1], step_ms[k][2], spirv->size());
      log_message(LogLevel::kDebug, "kernel " + std::to_string(k) + " '" + group.label + line + describe_launch(kernel.spec));
    }
    built[k].emplace(std::move(kernel));
    made[k].emplace(std::move(pipeline));
    if (progress) {
      std::lock_guard<std::mutex> lock(progress_mutex);
      progress("kernels", ++done, count);
    }
    return {};
  };
  create_stats.compile_threads = static_cast<unsigned>(std::clamp<std::size_t>(count, 1, compile_thread_count()));
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

// Every constant that something reads, except one-element constants, which kernels bake in as
// literals (group_kernel.cpp).
std::vector<ValueId> CompiledModel::bindable_constants() const {
  std::vector<ValueId> out;
  for (ValueId v = 0; v < static_cast<ValueId>(ir().values.size()); ++v) {
    const Value& value = ir().value(v);
    if (value.constant && value.constant->numel() > 1 && !value.consumers.empty()) out.push_back(v);
  }
  return out;
}

// Constants go up once, packed into blocks (pack_constants): each block is one device-local buffer,
// filled from one staging buffer (written by the worker threads) in one recording.
Status CompiledModel::upload_constants(const std::vector<ValueId>& constants) {
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
  return copy_staged(ctx(), staging);
}

Status CompiledModel::plan_memory() {
  const GraphIR& g = ir();
  std::vector<ValueId> late;  // bound constants bindable_constants() did not foresee
  for (const GroupKernel& kernel : kernels)
    for (ValueId v : kernel.bound_values)
      if (g.value(v).constant && !constant_places.count(v) && std::find(late.begin(), late.end(), v) == late.end())
        late.push_back(v);
  VKFUSE_TRY(upload_constants(late));

  // Intermediates: one arena per execution, offsets from liveness.
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
  VKFUSE_ASSIGN_OR_RETURN(memory, vkfuse::plan_memory(g, reads, writes, steps, context->plan.binding_alignment));
  for (const auto& [v, offset] : memory.offsets)
    if (g.value(v).bytes() > context->plan.max_binding_bytes)
      return make_error(ErrorCode::kUnsupported, "intermediate '" + g.value(v).name + "' " +
                                                     shape_to_string(g.value(v).shape) + " exceeds the device's " +
                                                     std::to_string(context->plan.max_binding_bytes) +
                                                     "-byte storage buffer binding limit");

  // Split-K scratch: every split group counts in counters of its own; partial sums are shared between
  // levels (one barrier apart) but not within one, where groups may run at once: the n-th split group
  // of each level uses slot n, as large as its largest user.
  const std::uint64_t align = context->plan.binding_alignment;
  auto aligned = [align](std::uint64_t bytes) { return (bytes + align - 1) / align * align; };
  std::vector<std::uint64_t> slot_bytes;
  std::vector<std::size_t> slot_of(kernels.size(), 0);
  std::size_t level = 0, in_level = 0;
  split.places.assign(kernels.size(), {});
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    const KernelSpec& spec = kernels[k].spec;
    if (spec.split_counters == 0) continue;
    if (plan.groups[k].level != level) level = plan.groups[k].level, in_level = 0;
    split.places[k].counter_offset = split.counter_bytes;
    split.counter_bytes += aligned(spec.split_counters * sizeof(std::uint32_t));
    slot_of[k] = in_level++;
    if (slot_bytes.size() <= slot_of[k]) slot_bytes.push_back(0);
    slot_bytes[slot_of[k]] = std::max(slot_bytes[slot_of[k]], aligned(spec.split_partial_bytes));
  }
  if (split.counter_bytes == 0) return {};
  std::vector<std::uint64_t> slot_offset(slot_bytes.size(), 0);
  for (std::size_t i = 1; i < slot_bytes.size(); ++i) slot_offset[i] = slot_offset[i - 1] + slot_bytes[i - 1];
  split.partial_bytes = std::max<std::uint64_t>(slot_offset.back() + slot_bytes.back(), align);
  for (std::size_t k = 0; k < kernels.size(); ++k)
    if (kernels[k].spec.split_counters > 0) {
      if (kernels[k].spec.split_partial_bytes > context->plan.max_binding_bytes)
        return group_error(ErrorCode::kInternal, plan.groups[k].label, "split-K partial sums of " +
                           std::to_string(kernels[k].spec.split_partial_bytes) +
                           " bytes exceed one storage buffer binding");
      split.places[k].partial_offset = slot_offset[slot_of[k]];
    }
  return {};
}

Status CompiledModel::set_image_inputs(const std::map<std::string, ImageInput>& inputs) {
  if (inputs.empty()) return {};
  const GraphIR& g = ir();
  for (const auto& [input_name, in] : inputs) {
    const std::string& name = input_name;  // Clang 14 cannot capture a structured binding
    const auto v = std::find_if(g.inputs.begin(), g.inputs.end(), [&](ValueId u) { return g.value(u).name == name; });
    const std::string what = "image input '" + name + "'";
    if (v == g.inputs.end()) return make_error(ErrorCode::kInvalidArgument, what + ": the graph has no input of that name");
    const Value& value = g.value(*v);
    const Shape& s = value.shape;
    const bool float_type = value.dtype == DType::kF32 || value.dtype == DType::kF16;
    if (!float_type || s.size() != 4 || s[0] != 1)
      return make_error(ErrorCode::kInvalidArgument, what + " is " + dtype_name(value.dtype) + shape_to_string(s) +
                                                         "; an image input is a float [1, C, H, W] (or [1, H, W, C] with nhwc)");
    KernelImage image;
    image.nhwc = in.nhwc;
    image.channels = in.nhwc ? s[3] : s[1];
    image.height = in.nhwc ? s[1] : s[2];
    image.width = in.nhwc ? s[2] : s[3];
    if (image.channels > 4) return make_error(ErrorCode::kInvalidArgument, what + " has " + std::to_string(image.channels) + " channels; an image has at most 4");
    if (in.width == 0 || in.height == 0) return make_error(ErrorCode::kInvalidArgument, what + ": the image's width and height must be given");
    const double w = static_cast<double>(image.width), h = static_cast<double>(image.height);
    const double iw = in.width, ih = in.height;
    double sx = 1.0 / w, sy = 1.0 / h, ox = 0.0, oy = 0.0;  // uv = (xy + 0.5) * s + o
    if (in.fit == ImageInput::Fit::kCenterCrop) {
      const double cw = std::min(iw, ih * w / h), ch = std::min(ih, iw * h / w);
      sx = cw / (w * iw), sy = ch / (h * ih), ox = (iw - cw) / 2.0 / iw, oy = (ih - ch) / 2.0 / ih;
    } else if (in.fit == ImageInput::Fit::kLetterbox) {
      const double f = std::min(w / iw, h / ih);  // image pixels to input pixels
      const double px = (w - iw * f) / 2.0, py = (h - ih * f) / 2.0;
      sx = 1.0 / (iw * f), sy = 1.0 / (ih * f), ox = -px / (iw * f), oy = -py / (ih * f);
    }
    image.uv_scale = {static_cast<float>(sx), static_cast<float>(sy)};
    image.uv_offset = {static_cast<float>(ox), static_cast<float>(oy)};
    for (int c = 0; c < 4; ++c) {
      if (in.channels[c] < 0 || in.channels[c] > 3)
        return make_error(ErrorCode::kInvalidArgument, what + ": channels[" + std::to_string(c) + "] must be 0..3");
      if (in.std[c] == 0.0f) return make_error(ErrorCode::kInvalidArgument, what + ": std[" + std::to_string(c) + "] is 0");
      image.component[c] = in.channels[c];
      image.mul[c] = in.scale / in.std[c];
      image.add[c] = -in.mean[c] / in.std[c];
    }
    image.pad = in.pad;
    images[*v] = image;
    image_inputs[*v] = in;
  }
  // Bilinear, clamped at the edges, normalized coordinates: what the loads' uv expect.
  VkSamplerCreateInfo info{VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
  info.magFilter = info.minFilter = VK_FILTER_LINEAR;
  info.mipmapMode = VK_SAMPLER_MIPMAP_MODE_NEAREST;
  info.addressModeU = info.addressModeV = info.addressModeW = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
  info.maxLod = 0.0f;
  VkSampler handle = VK_NULL_HANDLE;
  VKFUSE_CHECK_VK(vkCreateSampler(ctx().device, &info, nullptr, &handle));
  const VkDevice device = ctx().device;
  sampler = UniqueHandle<VkSampler>(handle, [device](VkSampler h) { vkDestroySampler(device, h, nullptr); });
  return {};
}

void CompiledModel::set_image_outputs(const std::map<std::string, ImageOutput>& outputs) {
  const GraphIR& g = ir();
  for (ValueId v : g.outputs)
    if (auto it = outputs.find(g.value(v).name); it != outputs.end()) image_outputs[v] = it->second;
}

Status CompiledModel::apply_images(GroupKernel& kernel, const FusionGroup& group) const {
  KernelSpec& spec = kernel.spec;
  const std::string& label = group.label;
  for (std::size_t k = 0; k < group.outputs.size() && k < spec.outputs.size(); ++k) {
    const auto it = image_outputs.find(group.outputs[k]);
    if (it == image_outputs.end()) continue;
    if (!spec.is_kernel())
      return group_error(ErrorCode::kInternal, label, "an image output's store is not the group's root");
    spec.outputs[k].image_format = image_output_format_qualifier(it->second.format);
  }
  if (images.empty()) return {};
  auto sampled = [&](const KernelInput& input) {
    return !input.is_literal && input.load < 0 && input.buffer >= 0 && images.count(static_cast<ValueId>(input.buffer)) > 0;
  };
  auto mark = [&](std::vector<KernelInput>& inputs) -> Status {
    for (KernelInput& input : inputs) {
      if (!sampled(input)) continue;
      if (input.chunk_elements > 0)
        return group_error(ErrorCode::kUnsupported, label, "an image input larger than one binding");
      input.image = images.at(static_cast<ValueId>(input.buffer));
    }
    return {};
  };
  auto refuse = [&](const std::vector<KernelInput>& inputs, const char* where) -> Status {
    for (const KernelInput& input : inputs)
      if (sampled(input))
        return group_error(ErrorCode::kUnsupported, label, std::string("reads image input '") +
                           ir().value(static_cast<ValueId>(input.buffer)).name + "' " + where +
                           ", which cannot sample images yet");
    return {};
  };
  if (spec.is_vector()) VKFUSE_TRY(refuse(spec.inputs, "in a vector chain"));
  VKFUSE_TRY(mark(spec.inputs));
  for (KernelLoad& load : spec.loads) {
    if (load.element) VKFUSE_TRY(refuse(load.element->inputs, "through a producer's element template"));
    VKFUSE_TRY(mark(load.inputs));
  }
  if (spec.row_chain) VKFUSE_TRY(mark(spec.row_chain->inputs));
  VKFUSE_TRY(mark(spec.post_inputs));
  for (const auto& stage : spec.vector_stages) VKFUSE_TRY(refuse(stage.post_inputs, "in a vector chain"));
  return {};
}

std::uint64_t CompiledModel::constant_bytes() const {
  std::uint64_t bytes = 0;
  for (const Buffer& block : constant_blocks) bytes += block.allocated_bytes();
  return bytes;
}

}  // namespace vkfuse
