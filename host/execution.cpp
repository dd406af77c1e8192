// Execution: one in-flight instance of a compiled model: bind, record, submit, wait (or run).
#include <algorithm>
#include <cstring>

#include "backend/log.h"
#include "codegen/kernel_builder.h"
#include "host/checked_math.h"
#include "host/execution_impl.h"
#include "host/public_api.h"

namespace vkfuse {
namespace {

using Residence = Execution::Impl::Residence;

const char* residence_name(Residence r) {
  switch (r) {
    case Residence::kHost: return "host-resident";
    case Residence::kDevice: return "device-resident (device_tensor)";
    case Residence::kBound: return "bound to an application buffer";
    case Residence::kImage: return "an image (bind_image)";
  }
  return "?";
}

// The layout the kernels use an image in: an input is sampled (GENERAL stays GENERAL, anything else
// is moved to SHADER_READ_ONLY_OPTIMAL), an output is written as a storage image (GENERAL).
VkImageLayout kernel_layout(const ImageBinding& image, bool input) {
  if (!input) return VK_IMAGE_LAYOUT_GENERAL;
  return image.layout == VK_IMAGE_LAYOUT_GENERAL ? VK_IMAGE_LAYOUT_GENERAL : VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
}

VkFormat vk_format(ImageOutput::Format format) {
  switch (format) {
    case ImageOutput::Format::kRGBA8: return VK_FORMAT_R8G8B8A8_UNORM;
    case ImageOutput::Format::kRGBA16F: return VK_FORMAT_R16G16B16A16_SFLOAT;
    case ImageOutput::Format::kRGBA32F: return VK_FORMAT_R32G32B32A32_SFLOAT;
  }
  return VK_FORMAT_UNDEFINED;
}

// The bytes a group's output covers in its binding `p`: all of it, or (a Concat's slice, which may
// start at 0, or a copy's places) the runs its placement puts it in, so that the groups storing the
// other parts need no barrier between them. Past kMaxRuns runs, the span from the first to the last.
void add_written_ranges(const Placement& p, const ElementPlacement& at, const Value& value,
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

}  // namespace

Result<std::unique_ptr<Execution::Impl>> Execution::Impl::create(std::shared_ptr<const CompiledModel> model) {
  auto impl = std::make_unique<Impl>();
  impl->model = std::move(model);
  const CompiledModel& m = *impl->model;
  const GraphIR& g = m.ir();
  for (ValueId v : g.inputs) {
    impl->io.push_back({v, g.value(v).name, true});
    if (m.images.count(v)) impl->io.back().residence = Residence::kImage;
  }
  for (ValueId v : g.outputs) {
    const bool seen = std::any_of(impl->io.begin(), impl->io.end(), [v](const Io& t) { return t.value == v; });
    if (!seen) impl->io.push_back({v, g.value(v).name, false});
    if (!seen && m.image_outputs.count(v)) impl->io.back().residence = Residence::kImage;
  }
  if (m.memory.arena_bytes > 0) {
    VKFUSE_ASSIGN_OR_RETURN(Buffer buffer, Buffer::create(m.ctx(), m.memory.arena_bytes, MemoryUsage::kDeviceLocal, "arena"));
    impl->arena.emplace(std::move(buffer));
  }
  if (m.split.counter_bytes > 0) {
    // Counters start at zero (the groups leave them zero); partial sums need no initial value.
    VKFUSE_ASSIGN_OR_RETURN(Buffer counters, Buffer::create(m.ctx(), m.split.counter_bytes, MemoryUsage::kDeviceLocal,
                                                            "split-K counters"));
    VKFUSE_ASSIGN_OR_RETURN(Buffer partials, Buffer::create(m.ctx(), m.split.partial_bytes, MemoryUsage::kDeviceLocal,
                                                            "split-K partial sums"));
    std::vector<Staged> zeros;
    VKFUSE_ASSIGN_OR_RETURN(Buffer staging, Buffer::create(m.ctx(), m.split.counter_bytes, MemoryUsage::kUpload));
    std::memset(staging.mapped(), 0, m.split.counter_bytes);
    zeros.push_back({std::move(staging), counters.handle()});
    VKFUSE_TRY(copy_staged(m.ctx(), zeros));
    impl->split_counters.emplace(std::move(counters));
    impl->split_partials.emplace(std::move(partials));
  }
  VKFUSE_ASSIGN_OR_RETURN(CommandRecorder recorder,
                          CommandRecorder::create(m.ctx(), static_cast<std::uint32_t>(m.kernels.size() + 1)));
  impl->recorder.emplace(std::move(recorder));
  impl->group_ms.assign(m.kernels.size(), 0.0);
  return impl;
}

Result<Execution::Impl::Io*> Execution::Impl::find(std::string_view name, const char* call) {
  for (Io& t : io)
    if (t.name == name) return &t;
  std::string names;
  for (const Io& t : io) names += (names.empty() ? "" : ", ") + std::string(t.input ? "input " : "output ") + t.name;
  return make_error(ErrorCode::kInvalidArgument, std::string(call) + ": the graph has no input or output named '" +
                                                     std::string(name) + "' (it has " + names + ")");
}

Status Execution::Impl::check_idle(const char* call) {
  VKFUSE_ASSIGN_OR_RETURN(bool running, recorder->poll());
  if (running)
    return make_error(ErrorCode::kInvalidArgument,
                      std::string(call) + ": the execution's submit() is still in flight; wait() for it first, or use "
                                          "one execution per frame in flight (Session::create_execution)");
  return {};
}

Status Execution::Impl::prepare() {
  if (!dirty) return {};
  for (Io& t : io) {
    const Value& value = ir().value(t.value);
    if (t.residence == Residence::kImage) {
      if (!t.image)
        return make_error(ErrorCode::kInvalidArgument, std::string(t.input ? "image input '" : "image output '") + t.name +
                                                           "' has no image: bind_image() it first");
      continue;
    }
    if (t.residence == Residence::kBound) {
      t.own.reset();
    } else if (!t.own) {
      VKFUSE_ASSIGN_OR_RETURN(Buffer own, Buffer::create(ctx(), value.bytes(), MemoryUsage::kDeviceLocal, value.name));
      t.own.emplace(std::move(own));
    }
    if (t.residence != Residence::kHost) {
      t.staging.reset();
      t.uploaded = false;
    } else if (!t.staging) {
      VKFUSE_ASSIGN_OR_RETURN(Buffer staging, Buffer::create(ctx(), value.bytes(), t.input ? MemoryUsage::kUpload : MemoryUsage::kDownload,
                                                             value.name + " (staging)"));
      t.staging.emplace(std::move(staging));
    }
  }
  VKFUSE_TRY(build_schedule());
  dirty = false;
  own_recorded = false;
  return {};
}

Placement Execution::Impl::placement(ValueId v) const {
  const Value& value = ir().value(v);
  if (auto it = model->plan.prefix_of.find(v); it != model->plan.prefix_of.end()) {  // the leading bytes of another value
    Placement whole = placement(it->second);
    return {whole.buffer, whole.offset, value.bytes()};
  }
  for (const Io& t : io)
    if (t.value == v) {
      if (t.residence == Residence::kBound) return {t.bound.buffer, t.bound.offset, value.bytes()};
      if (t.residence == Residence::kImage) return {VK_NULL_HANDLE, 0, value.bytes()};
      return {t.own->handle(), 0, value.bytes()};
    }
  if (auto it = model->constant_places.find(v); it != model->constant_places.end()) return it->second;
  return {arena->handle(), model->memory.offsets.at(v), value.bytes()};
}

Status Execution::Impl::build_schedule() {
  const CompiledModel& m = *model;
  std::uint32_t total_bindings = 0, total_images = 0, total_storage_images = 0;
  for (const ComputePipeline& p : m.pipelines) {
    total_bindings += p.binding_count();
    total_images += p.image_binding_count();
    total_storage_images += p.storage_image_binding_count();
  }
  descriptors.reset();  // its sets are referenced by no pending work: callers checked
  VKFUSE_ASSIGN_OR_RETURN(DescriptorArena pool, DescriptorArena::create(ctx(), static_cast<std::uint32_t>(m.kernels.size()),
                                                                       std::max<std::uint32_t>(total_bindings, 1), total_images,
                                                                       total_storage_images));
  descriptors.emplace(std::move(pool));
  schedule = {};
  for (std::size_t k = 0; k < m.kernels.size(); ++k) {
    const GroupKernel& kernel = m.kernels[k];
    const std::size_t outputs = m.plan.groups[k].outputs.size();
    std::vector<BufferRange> ranges;
    ScheduledDispatch dispatch;
    for (std::size_t b = 0; b < kernel.bound_values.size(); ++b) {
      const bool sampled = m.pipelines[k].is_image_binding(static_cast<std::uint32_t>(b));
      if (sampled || m.pipelines[k].is_storage_image_binding(static_cast<std::uint32_t>(b))) {
        const Io* t = nullptr;
        for (const Io& x : io)
          if (x.value == kernel.bound_values[b]) t = &x;
        if (t == nullptr || !t->image) return make_error(ErrorCode::kInternal, "an image binding of no bound image");
        BufferRange image;
        image.view = t->image->view;
        image.sampler = sampled ? m.sampler.get() : VK_NULL_HANDLE;
        image.layout = kernel_layout(*t->image, t->input);
        ranges.push_back(image);
        continue;
      }
      Placement p = placement(kernel.bound_values[b]);
      if (auto chunk = kernel.chunks.find(b); chunk != kernel.chunks.end()) {
        p.offset += chunk->second.offset;
        p.bytes = chunk->second.bytes;
      }
      if (p.bytes > m.context->plan.max_binding_bytes) {
        const Value& value = ir().value(kernel.bound_values[b]);
        return make_error(ErrorCode::kUnsupported,
                          "group '" + m.plan.groups[k].label + "' reads '" + value.name + "' " +
                              shape_to_string(value.shape) + " (" + std::to_string(p.bytes) +
                              " bytes) through one storage buffer binding; this device allows at most " +
                              std::to_string(m.context->plan.max_binding_bytes) + " bytes per binding");
      }
      ranges.push_back({p.buffer, p.offset, p.bytes});
      const bool is_output = b >= kernel.bound_values.size() - outputs;
      if (!is_output) {
        dispatch.reads.push_back({p.buffer, p.offset, p.bytes});
        continue;
      }
      const std::size_t o = b - (kernel.bound_values.size() - outputs);
      const Value& written = ir().value(m.plan.groups[k].outputs[o]);
      if (p.buffer != VK_NULL_HANDLE) add_written_ranges(p, kernel.spec.outputs[o].placement, written, dispatch.writes);
    }
    if (kernel.spec.split_counters > 0) {
      const MemoryRange counters{split_counters->handle(), m.split.places[k].counter_offset,
                                 kernel.spec.split_counters * sizeof(std::uint32_t)};
      const MemoryRange partials{split_partials->handle(), m.split.places[k].partial_offset, kernel.spec.split_partial_bytes};
      for (const MemoryRange& r : {counters, partials}) {
        ranges.push_back({r.buffer, r.offset, r.bytes});
        dispatch.reads.push_back(r);
        dispatch.writes.push_back(r);
      }
    }
    VKFUSE_ASSIGN_OR_RETURN(VkDescriptorSet set, descriptors->allocate(m.pipelines[k], ranges));
    dispatch.pipeline = &m.pipelines[k];
    dispatch.set = set;
    const std::array<std::uint64_t, 3> groups = kernel_workgroups(kernel.spec);
    dispatch.groups = {static_cast<std::uint32_t>(std::clamp<std::uint64_t>(groups[0], 1, m.context->plan.max_groups_x)),
                       static_cast<std::uint32_t>(groups[1]), static_cast<std::uint32_t>(groups[2])};
    schedule.dispatches.push_back(std::move(dispatch));
  }
  for (const Io& t : io) {
    if (t.residence != Residence::kHost) continue;
    if (t.input) schedule.uploads.push_back({t.staging->handle(), t.own->handle(), t.staging->size()});
    else schedule.downloads.push_back({t.own->handle(), t.staging->handle(), t.staging->size()});
  }
  return {};
}

Status Execution::Impl::record_own() {
  VKFUSE_TRY(prepare());
  if (own_recorded) return {};
  VKFUSE_ASSIGN_OR_RETURN(record_stats,
                          record_schedule(*recorder, schedule, model->profile ? Timestamps::kEachDispatch : Timestamps::kNone));
  own_recorded = true;
  return {};
}

Status Execution::Impl::bind(std::string_view name, const DeviceTensor& tensor) {
  VKFUSE_TRY(check_idle("Execution::bind"));
  VKFUSE_ASSIGN_OR_RETURN(Io* t, find(name, "Execution::bind"));
  if (t->residence == Residence::kImage)
    return make_error(ErrorCode::kInvalidArgument, "Execution::bind: '" + t->name + "' is an image " +
                                                       (t->input ? "input" : "output") + ": bind_image() it");
  const Value& value = ir().value(t->value);
  const std::string what = "Execution::bind: " + std::string(t->input ? "input '" : "output '") + t->name + "' " +
                           dtype_name(value.dtype) + shape_to_string(value.shape);
  if (tensor.buffer == VK_NULL_HANDLE) return make_error(ErrorCode::kInvalidArgument, what + ": the buffer is null");
  if (tensor.size < value.bytes())
    return make_error(ErrorCode::kInvalidArgument, what + " needs " + std::to_string(value.bytes()) + " bytes; the " +
                                                       "DeviceTensor gives " + std::to_string(tensor.size));
  const std::uint64_t align = std::max<std::uint64_t>(16, ctx().caps.min_storage_buffer_offset_alignment);
  if (tensor.offset % align != 0)
    return make_error(ErrorCode::kInvalidArgument, what + ": offset " + std::to_string(tensor.offset) +
                                                       " is not a multiple of " + std::to_string(align) +
                                                       " (minStorageBufferOffsetAlignment, and 16 for vec4 access)");
  if (tensor.usage != 0 && !(tensor.usage & VK_BUFFER_USAGE_STORAGE_BUFFER_BIT))
    return make_error(ErrorCode::kInvalidArgument, what + ": the buffer lacks VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, which "
                                                          "vkfuse's kernels need to read and write it");
  // The memory the buffer needs is at least its size: a range past it cannot lie inside the buffer.
  VkMemoryRequirements requirements{};
  vkGetBufferMemoryRequirements(ctx().device, tensor.buffer, &requirements);
  const std::optional<std::uint64_t> end = checked_add(tensor.offset, value.bytes());
  if (!end || *end > requirements.size)
    return make_error(ErrorCode::kInvalidArgument, what + ": bytes " + std::to_string(tensor.offset) + ".." +
                                                       (end ? std::to_string(*end) : "(past 2^64)") +
                                                       " run past the end of the buffer (" +
                                                       std::to_string(requirements.size) + " bytes)");
  t->residence = Residence::kBound;
  t->bound = tensor;
  dirty = true;
  return {};
}

Status Execution::Impl::bind_image(std::string_view name, const ImageBinding& image) {
  VKFUSE_TRY(check_idle("Execution::bind_image"));
  VKFUSE_ASSIGN_OR_RETURN(Io* t, find(name, "Execution::bind_image"));
  if (t->residence != Residence::kImage)
    return make_error(ErrorCode::kInvalidArgument, "Execution::bind_image: '" + t->name + "' is not an image " +
                                                       (t->input ? "input (name it in SessionOptions::image_inputs)"
                                                                 : "output (name it in SessionOptions::image_outputs)"));
  const std::string what = "Execution::bind_image: '" + t->name + "': ";
  if (image.image == VK_NULL_HANDLE || image.view == VK_NULL_HANDLE)
    return make_error(ErrorCode::kInvalidArgument, what + "the image and its view must be valid handles");
  // An output's contents are overwritten whole: it may start UNDEFINED (whatever it held is dropped).
  const auto unusable = [](VkImageLayout layout) {
    return layout == VK_IMAGE_LAYOUT_UNDEFINED || layout == VK_IMAGE_LAYOUT_PREINITIALIZED;
  };
  if (unusable(image.final_layout) || (unusable(image.layout) && (t->input || image.layout != VK_IMAGE_LAYOUT_UNDEFINED)))
    return make_error(ErrorCode::kInvalidArgument,
                      what + (t->input ? "UNDEFINED and PREINITIALIZED are not layouts an image to sample is in, or "
                                         "may be left in"
                                       : "an output image may start UNDEFINED (its contents dropped), but not be left "
                                         "so, nor be PREINITIALIZED"));
  std::uint32_t width = 0, height = 0;
  if (t->input) {
    width = model->image_inputs.at(t->value).width;
    height = model->image_inputs.at(t->value).height;
  } else {  // the texels [H, W, 4]
    const Shape& texels = ir().value(t->value).shape;
    height = static_cast<std::uint32_t>(texels[0]);
    width = static_cast<std::uint32_t>(texels[1]);
  }
  if ((image.extent.width != 0 || image.extent.height != 0) && (image.extent.width != width || image.extent.height != height))
    return make_error(ErrorCode::kInvalidArgument, what + "the image is " + std::to_string(image.extent.width) + "x" +
                                                       std::to_string(image.extent.height) + "; the session was compiled for " +
                                                       std::to_string(width) + "x" + std::to_string(height));
  if (t->input && image.format != VK_FORMAT_UNDEFINED) {
    VkFormatProperties properties{};
    vkGetPhysicalDeviceFormatProperties(ctx().physical, image.format, &properties);
    if (!(properties.optimalTilingFeatures & VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT))
      return make_error(ErrorCode::kInvalidArgument, what + "this device cannot filter format " +
                                                         std::to_string(static_cast<int>(image.format)) +
                                                         " linearly (VK_FORMAT_FEATURE_SAMPLED_IMAGE_FILTER_LINEAR_BIT)");
  }
  if (!t->input) {
    const VkFormat declared = vk_format(model->image_outputs.at(t->value).format);
    if (image.format != VK_FORMAT_UNDEFINED && image.format != declared)
      return make_error(ErrorCode::kInvalidArgument, what + "the view's format is " + std::to_string(static_cast<int>(image.format)) +
                                                         "; the session writes format " + std::to_string(static_cast<int>(declared)) +
                                                         " (ImageOutput::format)");
    VkFormatProperties properties{};
    vkGetPhysicalDeviceFormatProperties(ctx().physical, declared, &properties);
    if (!(properties.optimalTilingFeatures & VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT))
      return make_error(ErrorCode::kUnsupported, what + "this device cannot write format " +
                                                     std::to_string(static_cast<int>(declared)) +
                                                     " as a storage image (VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT)");
  }
  t->image = image;
  dirty = true;
  return {};
}

void Execution::Impl::transition_images(const RecordSync& sync, bool before) {
  for (const Io& t : io) {
    if (t.residence != Residence::kImage || !t.image) continue;
    const VkImageLayout used = kernel_layout(*t.image, t.input);
    const VkImageLayout from = before ? t.image->layout : used, to = before ? used : t.image->final_layout;
    if (from == to) continue;
    const VkAccessFlags kernel_access = t.input ? VK_ACCESS_SHADER_READ_BIT : VK_ACCESS_SHADER_WRITE_BIT;
    if (before)
      recorder->image_barrier(t.image->image, t.image->aspect, from, to, sync.before.stage | sync.after.stage,
                              sync.before.access, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, kernel_access);
    else if (t.input)  // whatever uses the image next (a decoder's write, a draw's read) waits for the transition
      recorder->image_barrier(t.image->image, t.image->aspect, from, to, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0,
                              VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT);
    else  // the kernels' texels, made visible to whoever reads them next (a draw, a copy)
      recorder->image_barrier(t.image->image, t.image->aspect, from, to, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                              VK_ACCESS_SHADER_WRITE_BIT, sync.after.stage | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                              sync.after.access | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  }
}

Result<DeviceTensor> Execution::Impl::device_tensor(std::string_view name) {
  VKFUSE_TRY(check_idle("Execution::device_tensor"));
  VKFUSE_ASSIGN_OR_RETURN(Io* t, find(name, "Execution::device_tensor"));
  if (t->residence == Residence::kImage)
    return make_error(ErrorCode::kInvalidArgument, "Execution::device_tensor: '" + t->name + "' is an image");
  if (t->residence != Residence::kDevice) {
    t->residence = Residence::kDevice;
    dirty = true;
  }
  if (!t->own) {
    const Value& value = ir().value(t->value);
    VKFUSE_ASSIGN_OR_RETURN(Buffer own, Buffer::create(ctx(), value.bytes(), MemoryUsage::kDeviceLocal, value.name));
    t->own.emplace(std::move(own));
  }
  return DeviceTensor{t->own->handle(), 0, t->own->size(),
                      VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT};
}

Status Execution::Impl::upload(std::string_view name, const HostTensor& tensor) {
  VKFUSE_TRY(check_idle("Execution::upload"));
  VKFUSE_ASSIGN_OR_RETURN(Io* t, find(name, "Execution::upload"));
  const Value& value = ir().value(t->value);
  if (!t->input) return make_error(ErrorCode::kInvalidArgument, "Execution::upload: '" + t->name + "' is an output");
  if (t->residence != Residence::kHost)
    return make_error(ErrorCode::kInvalidArgument, "Execution::upload: input '" + t->name + "' is " +
                                                       residence_name(t->residence) + "; write its buffer instead");
  if (tensor.shape != value.shape || tensor.dtype != value.dtype)
    return make_error(ErrorCode::kInvalidArgument,
                      "input '" + t->name + "' is " + dtype_name(tensor.dtype) + shape_to_string(tensor.shape) +
                          ", the graph expects " + dtype_name(value.dtype) + shape_to_string(value.shape));
  if (tensor.bytes.size() != value.bytes())
    return make_error(ErrorCode::kInvalidArgument, "input '" + t->name + "' holds " + std::to_string(tensor.bytes.size()) +
                                                       " bytes, expected " + std::to_string(value.bytes()));
  VKFUSE_TRY(prepare());
  std::memcpy(t->staging->mapped(), tensor.bytes.data(), tensor.bytes.size());
  VKFUSE_TRY(t->staging->flush());
  t->uploaded = true;
  return {};
}

Result<HostTensor> Execution::Impl::download(std::string_view name) {
  VKFUSE_ASSIGN_OR_RETURN(Io* t, find(name, "Execution::download"));
  const Value& value = ir().value(t->value);
  if (t->input || t->residence != Residence::kHost)
    return make_error(ErrorCode::kInvalidArgument, "Execution::download: '" + t->name + "' is not a host-resident output");
  VKFUSE_ASSIGN_OR_RETURN(bool running, recorder->poll());
  if (running) return make_error(ErrorCode::kNotReady, "Execution::download: the submit() is still running");
  if (last != LastWork::kSubmit || !t->staging || dirty)
    return make_error(ErrorCode::kInvalidArgument, "Execution::download: no completed submit() has written '" + t->name + "'");
  VKFUSE_TRY(t->staging->invalidate());
  HostTensor out{value.shape, value.dtype, std::vector<std::byte>(value.bytes())};
  std::memcpy(out.bytes.data(), t->staging->mapped(), out.bytes.size());
  return out;
}

Status Execution::Impl::record(VkCommandBuffer command_buffer, const RecordSync& sync) {
  if (command_buffer == VK_NULL_HANDLE)
    return make_error(ErrorCode::kInvalidArgument, "Execution::record: the command buffer is null");
  VKFUSE_TRY(check_idle("Execution::record"));
  std::string host;
  for (const Io& t : io)
    if (t.residence == Residence::kHost) host += (host.empty() ? "'" : ", '") + t.name + "'";
  if (!host.empty())
    return make_error(ErrorCode::kInvalidArgument, "Execution::record: " + host + " host-resident; a recording into "
                                                   "the application's command buffer reads and writes device buffers "
                                                   "only: bind() them or take device_tensor()");
  VKFUSE_TRY(prepare());
  VKFUSE_TRY(recorder->begin(command_buffer));
  // Before: the application's writes of the inputs, its reads of the outputs (the previous frame's),
  // and this execution's previous dispatches (its arena), all done before the first dispatch.
  recorder->barrier(sync.before.stage | sync.after.stage | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                    sync.before.access | VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                    VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  transition_images(sync, true);
  const RecordStats stats = record_dispatches(*recorder, schedule.dispatches, model->profile ? Timestamps::kAround : Timestamps::kNone);
  recorder->barrier(VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT,
                    sync.after.stage, sync.after.access);
  transition_images(sync, false);
  VKFUSE_TRY(recorder->end());
  record_stats = stats;
  own_recorded = false;
  last = LastWork::kRecord;
  last_staging_bytes = 0;
  timed = false;
  return {};
}

Result<SubmitTicket> Execution::Impl::submit(const SubmitSync& sync) {
  VKFUSE_TRY(check_idle("Execution::submit"));
  for (const Io& t : io) {
    if (!t.image) continue;
    const bool stays = t.image->layout == t.image->final_layout;
    if (t.input && (!stays || (t.image->layout != VK_IMAGE_LAYOUT_GENERAL &&
                               t.image->layout != VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL)))
      return make_error(ErrorCode::kInvalidArgument, "Execution::submit: image input '" + t.name + "' must be in "
                                                     "SHADER_READ_ONLY_OPTIMAL or GENERAL, and stay there (layout "
                                                     "transitions are record()'s)");
    if (!t.input && (!stays || t.image->layout != VK_IMAGE_LAYOUT_GENERAL))
      return make_error(ErrorCode::kInvalidArgument, "Execution::submit: image output '" + t.name + "' must be in "
                                                     "GENERAL and stay there (layout transitions are record()'s)");
  }
  VKFUSE_TRY(prepare());
  std::uint64_t staged = 0;
  for (const Io& t : io) {
    if (t.residence != Residence::kHost) continue;
    if (t.input && !t.uploaded)
      return make_error(ErrorCode::kInvalidArgument, "Execution::submit: input '" + t.name + "' has no data: upload() "
                                                     "it first (or bind() it, or write its device_tensor())");
    staged += t.staging->size();
  }
  VKFUSE_TRY(record_own());
  VKFUSE_ASSIGN_OR_RETURN(SubmitTicket ticket, recorder->submit(sync));
  last = LastWork::kSubmit;
  last_staging_bytes = staged;
  timed = false;
  return ticket;
}

Status Execution::Impl::finish_wait(std::uint64_t timeout_ns) {
  const bool was_running = recorder->in_flight();
  VKFUSE_TRY(recorder->wait(timeout_ns));
  if (!was_running && timed) return {};
  if (last == LastWork::kSubmit && record_stats.timestamps && own_recorded) {
    const auto count = static_cast<std::uint32_t>(model->kernels.size() + 1);
    VKFUSE_ASSIGN_OR_RETURN(std::vector<double> ns, recorder->read_timestamps_ns(count));
    last_gpu_ms = 0.0;
    for (std::size_t k = 0; k < group_ms.size() && k + 1 < ns.size(); ++k) {
      group_ms[k] = (ns[k + 1] - ns[k]) * 1e-6;
      last_gpu_ms += group_ms[k];
    }
    timed = true;
  }
  return {};
}

Result<std::map<std::string, HostTensor>> Execution::Impl::run(const std::map<std::string, HostTensor>& inputs) {
  for (const auto& [input_name, tensor] : inputs) {
    const std::string& name = input_name;  // Clang 14 cannot capture a structured binding
    const auto t = std::find_if(io.begin(), io.end(), [&](const Io& x) { return x.input && x.name == name; });
    if (t == io.end()) return make_error(ErrorCode::kInvalidArgument, "run: the graph has no input named '" + name + "'");
    if (t->residence != Residence::kHost)
      return make_error(ErrorCode::kInvalidArgument, "run: input '" + name + "' is " + residence_name(t->residence) +
                                                         "; do not pass it as a host tensor");
  }
  for (const Io& t : io) {
    if (!t.input || t.residence != Residence::kHost) continue;
    auto it = inputs.find(t.name);
    if (it == inputs.end()) return make_error(ErrorCode::kInvalidArgument, "run: input '" + t.name + "' is missing");
    VKFUSE_TRY(upload(t.name, it->second).with_context("run"));
  }
  VKFUSE_TRY(submit({}).status());
  VKFUSE_TRY(finish_wait(UINT64_MAX));
  std::map<std::string, HostTensor> outputs;
  for (const Io& t : io) {
    if (t.input || t.residence != Residence::kHost) continue;
    VKFUSE_ASSIGN_OR_RETURN(HostTensor out, download(t.name));
    outputs.emplace(t.name, std::move(out));
  }
  return outputs;
}

Result<double> Execution::Impl::gpu_ms() {
  if (!recorder->timestamps_supported() || !model->profile)
    return make_error(ErrorCode::kUnsupported, "Execution::last_gpu_ms: no timestamps (the device has none, or the "
                                               "session was made with profile = false)");
  if (last == LastWork::kRecord) {
    VKFUSE_ASSIGN_OR_RETURN(std::vector<double> ns, recorder->try_read_timestamps_ns(2));
    return (ns[1] - ns[0]) * 1e-6;
  }
  if (last == LastWork::kNone) return make_error(ErrorCode::kNotReady, "Execution::last_gpu_ms: nothing has run yet");
  VKFUSE_ASSIGN_OR_RETURN(bool running, recorder->poll());
  if (running) return make_error(ErrorCode::kNotReady, "Execution::last_gpu_ms: the submit() is still running");
  VKFUSE_TRY(finish_wait(0));
  return last_gpu_ms;
}

// The dispatches alone, `iterations` times back to back in one submission: no uploads, downloads or
// idle gaps, so the GPU stays at its working clocks. Mean milliseconds per iteration. Timestamps only
// around the whole: one after each dispatch would keep independent groups from overlapping, which
// a real run (no timestamps) lets them do.
Result<double> Execution::Impl::measure_gpu_ms(int iterations) {
  if (iterations < 1) return make_error(ErrorCode::kInvalidArgument, "measure_gpu_ms: iterations must be >= 1");
  VKFUSE_TRY(check_idle("measure_gpu_ms"));
  VKFUSE_TRY(prepare());
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

ExecutionMemory Execution::Impl::memory() const {
  ExecutionMemory m;
  if (arena) m.arena_bytes = arena->allocated_bytes();
  if (split_counters) m.scratch_bytes = split_counters->allocated_bytes() + split_partials->allocated_bytes();
  for (const Io& t : io) {
    if (t.own) m.io_bytes += t.own->allocated_bytes();
    if (t.staging) m.staging_bytes += t.staging->allocated_bytes();
  }
  return m;
}

Execution::Execution(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Execution::~Execution() = default;
Execution::Execution(Execution&&) noexcept = default;
Execution& Execution::operator=(Execution&&) noexcept = default;

namespace {

// A public call: an error on a moved-from execution, else `f` under the execution's lock, so calls from
// several threads take turns (public_api.h).
template <class R, class F>
R locked(const std::unique_ptr<Execution::Impl>& impl, const char* call, F&& f) {
  if (!impl) return moved_from_error(call);
  const std::lock_guard<std::mutex> lock(impl->mutex);
  return f(*impl);
}

}  // namespace

std::vector<std::string> Execution::input_names() const {
  std::vector<std::string> names;
  if (!impl_) return names;
  for (const Impl::Io& t : impl_->io)
    if (t.input) names.push_back(t.name);
  return names;
}
std::vector<std::string> Execution::output_names() const {
  std::vector<std::string> names;
  if (!impl_) return names;
  for (ValueId v : impl_->ir().outputs) names.push_back(impl_->ir().value(v).name);
  return names;
}
Status Execution::bind(std::string_view name, const DeviceTensor& tensor) {
  return locked<Status>(impl_, "Execution::bind", [&](Impl& e) { return e.bind(name, tensor); });
}
Status Execution::bind_image(std::string_view name, const ImageBinding& image) {
  return locked<Status>(impl_, "Execution::bind_image", [&](Impl& e) { return e.bind_image(name, image); });
}
Result<DeviceTensor> Execution::device_tensor(std::string_view name) {
  return locked<Result<DeviceTensor>>(impl_, "Execution::device_tensor", [&](Impl& e) { return e.device_tensor(name); });
}
Status Execution::upload(std::string_view name, const HostTensor& tensor) {
  return locked<Status>(impl_, "Execution::upload", [&](Impl& e) { return e.upload(name, tensor); });
}
Result<HostTensor> Execution::download(std::string_view name) {
  return locked<Result<HostTensor>>(impl_, "Execution::download", [&](Impl& e) { return e.download(name); });
}
Status Execution::record(VkCommandBuffer command_buffer, const RecordSync& sync) {
  return locked<Status>(impl_, "Execution::record", [&](Impl& e) { return e.record(command_buffer, sync); });
}
Result<SubmitTicket> Execution::submit(const SubmitSync& sync) {
  return locked<Result<SubmitTicket>>(impl_, "Execution::submit", [&](Impl& e) { return e.submit(sync); });
}
Status Execution::wait(std::uint64_t timeout_ns) {
  return locked<Status>(impl_, "Execution::wait", [&](Impl& e) { return e.finish_wait(timeout_ns); });
}
bool Execution::in_flight() {
  if (!impl_) return false;
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  const Result<bool> running = impl_->recorder->poll();
  return !running.ok() || *running;  // a lost device reports its error on the next call that can
}
Result<std::map<std::string, HostTensor>> Execution::run(const std::map<std::string, HostTensor>& inputs) {
  return locked<Result<std::map<std::string, HostTensor>>>(impl_, "Execution::run", [&](Impl& e) { return e.run(inputs); });
}
Result<double> Execution::last_gpu_ms() {
  return locked<Result<double>>(impl_, "Execution::last_gpu_ms", [&](Impl& e) { return e.gpu_ms(); });
}
std::uint64_t Execution::last_staging_bytes() const {
  if (!impl_) return 0;
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->last_staging_bytes;
}
ExecutionMemory Execution::memory() const {
  if (!impl_) return {};
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->memory();
}
std::size_t Execution::dispatch_count() const { return impl_ ? impl_->model->plan.groups.size() : 0; }

}  // namespace vkfuse
