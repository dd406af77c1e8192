#include "backend/command.h"

#include <memory>
#include <utility>

#include "backend/debug.h"
#include "backend/units.h"

namespace vkfuse {
namespace {

struct BarrierScopes {
  VkPipelineStageFlags src_stage, dst_stage;
  VkAccessFlags src_access, dst_access;
};

BarrierScopes scopes_of(CommandRecorder::Barrier kind) {
  // Destination access includes writes as well as reads: a later write to the same memory (WAW) also needs the
  // earlier write to be made available first.
  switch (kind) {
    case CommandRecorder::Barrier::kComputeToCompute:
      return {VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
              VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    case CommandRecorder::Barrier::kTransferToCompute:
      return {VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
              VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    case CommandRecorder::Barrier::kComputeToTransfer:
      return {VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
              VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
    case CommandRecorder::Barrier::kHostToTransfer:
      return {VK_PIPELINE_STAGE_HOST_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_HOST_WRITE_BIT,
              VK_ACCESS_TRANSFER_READ_BIT};
  }
  return {VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT,
          VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT};
}

void record_barrier(VkCommandBuffer cb, const BarrierScopes& s) {
  VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  barrier.srcAccessMask = s.src_access;
  barrier.dstAccessMask = s.dst_access;
  vkCmdPipelineBarrier(cb, s.src_stage, s.dst_stage, 0, 1, &barrier, 0, nullptr, 0, nullptr);
}

}  // namespace

Result<CommandRecorder> CommandRecorder::create(const DeviceContext& ctx, uint32_t max_timestamps) {
  CommandRecorder recorder;
  recorder.ctx_ = ctx;
  recorder.device_ = ctx.device;
  recorder.max_groups_ = ctx.caps.max_workgroup_count;
  recorder.timestamp_period_ns_ = ctx.caps.timestamp_period_ns;
  recorder.timestamp_valid_bits_ = ctx.caps.timestamp_valid_bits;
  recorder.max_timestamps_ = max_timestamps;
  VkDevice device = ctx.device;

  VkCommandPoolCreateInfo pool_info{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  // RESET_COMMAND_BUFFER: begin() may re-record the one buffer. No TRANSIENT: it lives long and is resubmitted.
  pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pool_info.queueFamilyIndex = ctx.queue_family;
  VkCommandPool pool = VK_NULL_HANDLE;
  VKFUSE_CHECK_VK(vkCreateCommandPool(device, &pool_info, nullptr, &pool));
  recorder.pool_ =
      UniqueHandle<VkCommandPool>(pool, [device](VkCommandPool p) { vkDestroyCommandPool(device, p, nullptr); });

  VkCommandBufferAllocateInfo allocate{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  allocate.commandPool = pool;
  allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  allocate.commandBufferCount = 1;
  VKFUSE_CHECK_VK(vkAllocateCommandBuffers(device, &allocate, &recorder.command_buffer_));

  VkFenceCreateInfo fence_info{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence = VK_NULL_HANDLE;
  VKFUSE_CHECK_VK(vkCreateFence(device, &fence_info, nullptr, &fence));
  recorder.fence_ = UniqueHandle<VkFence>(fence, [device](VkFence f) { vkDestroyFence(device, f, nullptr); });

  if (ctx.caps.timeline_semaphore) {
    VkSemaphoreTypeCreateInfo type_info{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type_info.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    type_info.initialValue = 0;
    VkSemaphoreCreateInfo semaphore_info{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    semaphore_info.pNext = &type_info;
    VkSemaphore semaphore = VK_NULL_HANDLE;
    VKFUSE_CHECK_VK(vkCreateSemaphore(device, &semaphore_info, nullptr, &semaphore));
    recorder.timeline_ =
        UniqueHandle<VkSemaphore>(semaphore, [device](VkSemaphore t) { vkDestroySemaphore(device, t, nullptr); });
    set_debug_name(ctx, VK_OBJECT_TYPE_SEMAPHORE, debug_handle(semaphore), "vkfuse timeline");
    PFN_vkVoidFunction wait = vkGetDeviceProcAddr(device, "vkWaitSemaphores");
    if (!wait) wait = vkGetDeviceProcAddr(device, "vkWaitSemaphoresKHR");
    recorder.wait_semaphores_ = reinterpret_cast<PFN_vkWaitSemaphores>(wait);
  }
  if (ctx.caps.timestamps && max_timestamps > 0) {
    VkQueryPoolCreateInfo query_info{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    query_info.queryType = VK_QUERY_TYPE_TIMESTAMP;
    query_info.queryCount = max_timestamps;
    VkQueryPool queries = VK_NULL_HANDLE;
    VKFUSE_CHECK_VK(vkCreateQueryPool(device, &query_info, nullptr, &queries));
    recorder.query_pool_ =
        UniqueHandle<VkQueryPool>(queries, [device](VkQueryPool q) { vkDestroyQueryPool(device, q, nullptr); });
    set_debug_name(ctx, VK_OBJECT_TYPE_QUERY_POOL, debug_handle(queries), "vkfuse timestamps");
  }
  set_debug_name(ctx, VK_OBJECT_TYPE_COMMAND_BUFFER, debug_handle(recorder.command_buffer_), "vkfuse recorder");
  return recorder;
}

CommandRecorder::CommandRecorder(CommandRecorder&& other) noexcept
    : ctx_(std::move(other.ctx_)),
      device_(std::exchange(other.device_, VK_NULL_HANDLE)),
      max_groups_(other.max_groups_),
      timestamp_period_ns_(other.timestamp_period_ns_),
      timestamp_valid_bits_(other.timestamp_valid_bits_),
      max_timestamps_(other.max_timestamps_),
      pool_(std::move(other.pool_)),
      command_buffer_(std::exchange(other.command_buffer_, VK_NULL_HANDLE)),
      fence_(std::move(other.fence_)),
      timeline_(std::move(other.timeline_)),
      timeline_value_(other.timeline_value_),
      wait_semaphores_(other.wait_semaphores_),
      query_pool_(std::move(other.query_pool_)),
      target_(std::exchange(other.target_, VK_NULL_HANDLE)),
      external_(other.external_),
      state_(std::exchange(other.state_, State::kInvalid)),
      error_(std::move(other.error_)),
      written_(std::move(other.written_)),
      bound_pipeline_(other.bound_pipeline_),
      dispatch_count_(other.dispatch_count_),
      in_flight_(std::exchange(other.in_flight_, false)),
      completed_(std::exchange(other.completed_, false)),
      device_lost_(other.device_lost_) {}

CommandRecorder& CommandRecorder::operator=(CommandRecorder&& other) noexcept {
  if (this != &other) {
    // The destructor waits for a timed-out submission before the pool goes; then take over `other`.
    std::destroy_at(this);
    std::construct_at(this, std::move(other));
  }
  return *this;
}

CommandRecorder::~CommandRecorder() {
  // A submission not yet waited for may still be running; its command buffer must not be freed under it.
  if (in_flight_ && !device_lost_ && fence_) {
    VkFence fence = fence_.get();
    (void)vkWaitForFences(device_, 1, &fence, VK_TRUE, UINT64_MAX);  // nothing to report to from a destructor
  }
  wait_timeline_settled();
}

void CommandRecorder::wait_timeline_settled() {
  // A signalled fence says the batch completed, which by the spec is enough to destroy its semaphores; but
  // Mesa's emulated timelines (lavapipe in Debian 12) install the signalled point on the queue's submit
  // thread after the fence fires, so freeing the semaphore then lets that thread write freed memory
  // (docs/hardening.md). Waiting for the timeline's own last value closes the window on every driver.
  if (!timeline_ || timeline_value_ == 0 || device_lost_ || !wait_semaphores_) return;
  VkSemaphore semaphore = timeline_.get();
  VkSemaphoreWaitInfo info{VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
  info.semaphoreCount = 1;
  info.pSemaphores = &semaphore;
  info.pValues = &timeline_value_;
  (void)wait_semaphores_(device_, &info, UINT64_MAX);  // nothing to report to from a destructor
}

void CommandRecorder::fail(ErrorCode code, std::string message) {
  if (error_.ok()) error_ = make_error(code, std::move(message));
}

Status CommandRecorder::wait_in_flight(uint64_t timeout_ns) {
  if (!in_flight_) return {};
  VkFence fence = fence_.get();
  const VkResult waited = vkWaitForFences(device_, 1, &fence, VK_TRUE, timeout_ns);
  if (waited == VK_TIMEOUT) {
    if (timeout_ns == UINT64_MAX)  // cannot time out by the spec: say what the driver did
      return make_error(ErrorCode::kNotReady, "vkWaitForFences returned VK_TIMEOUT with no timeout set; the submission is still running");
    return make_error(ErrorCode::kNotReady, "the submission did not complete within " + describe_timeout_ns(timeout_ns) +
                                                " and is still running");
  }
  if (waited == VK_ERROR_DEVICE_LOST) {
    device_lost_ = true;
    in_flight_ = false;  // a lost device never signals; there is nothing left to wait for
  }
  VKFUSE_CHECK_VK(waited);
  in_flight_ = false;
  VKFUSE_CHECK_VK(vkResetFences(device_, 1, &fence));
  completed_ = true;
  return {};
}

Status CommandRecorder::begin(VkCommandBuffer external) {
  if (device_lost_) return make_error(ErrorCode::kDeviceLost, "the Vulkan device was lost earlier");
  // A pending command buffer must not be re-recorded, nor its queries reset.
  VKFUSE_TRY(wait_in_flight(UINT64_MAX));
  if (state_ == State::kRecording && !external_) VKFUSE_CHECK_VK(vkResetCommandBuffer(command_buffer_, 0));
  state_ = State::kInvalid;
  external_ = external != VK_NULL_HANDLE;
  target_ = external_ ? external : command_buffer_;
  if (!external_) {
    VkCommandBufferBeginInfo info{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    info.flags = 0;  // not ONE_TIME_SUBMIT: recorded once, submitted many times (never two at once)
    VKFUSE_CHECK_VK(vkBeginCommandBuffer(command_buffer_, &info));
  }
  if (query_pool_) vkCmdResetQueryPool(target_, query_pool_.get(), 0, max_timestamps_);
  state_ = State::kRecording;
  error_ = Status();
  written_.assign(max_timestamps_, false);
  bound_pipeline_ = VK_NULL_HANDLE;
  dispatch_count_ = 0;
  completed_ = false;
  return {};
}

void CommandRecorder::dispatch(const ComputePipeline& p, VkDescriptorSet set, std::span<const std::byte> push_constants,
                               uint32_t groups_x, uint32_t groups_y, uint32_t groups_z) {
  const std::string what = "dispatch of pipeline '" + p.label() + "'";
  if (state_ != State::kRecording) return fail(ErrorCode::kInvalidArgument, what + " outside begin()/end()");
  if (!error_.ok()) return;
  if (p.pipeline() == VK_NULL_HANDLE) return fail(ErrorCode::kInvalidArgument, what + ": the pipeline is empty");
  if (push_constants.size() != p.push_constant_bytes()) {
    return fail(ErrorCode::kInvalidArgument, what + ": " + std::to_string(push_constants.size()) +
                                                 " bytes of push constants given, the pipeline declares " +
                                                 std::to_string(p.push_constant_bytes()));
  }
  if (set == VK_NULL_HANDLE && p.binding_count() > 0) {
    return fail(ErrorCode::kInvalidArgument, what + ": no descriptor set for its " +
                                                 std::to_string(p.binding_count()) + " bindings");
  }
  const uint32_t groups[3] = {groups_x, groups_y, groups_z};
  for (size_t axis = 0; axis < 3; ++axis) {
    if (groups[axis] > max_groups_[axis]) {
      return fail(ErrorCode::kUnsupported, what + ": " + std::to_string(groups[axis]) + " workgroups along " +
                                               "xyz"[axis] + ", above this device's maxComputeWorkGroupCount (" +
                                               std::to_string(max_groups_[axis]) + ")");
    }
  }
  if (p.pipeline() != bound_pipeline_) {
    vkCmdBindPipeline(target_, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline());
    bound_pipeline_ = p.pipeline();
  }
  if (set != VK_NULL_HANDLE) {
    vkCmdBindDescriptorSets(target_, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout(), 0, 1, &set, 0, nullptr);
  }
  if (!push_constants.empty()) {
    vkCmdPushConstants(target_, p.layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0,
                       static_cast<uint32_t>(push_constants.size()), push_constants.data());
  }
  vkCmdDispatch(target_, groups_x, groups_y, groups_z);
  ++dispatch_count_;
}

void CommandRecorder::copy(VkBuffer src, VkBuffer dst, std::span<const VkBufferCopy> regions) {
  if (state_ != State::kRecording) return fail(ErrorCode::kInvalidArgument, "copy outside begin()/end()");
  if (!error_.ok() || regions.empty()) return;
  if (src == VK_NULL_HANDLE || dst == VK_NULL_HANDLE) return fail(ErrorCode::kInvalidArgument, "copy: null buffer");
  vkCmdCopyBuffer(target_, src, dst, static_cast<uint32_t>(regions.size()), regions.data());
}

void CommandRecorder::barrier(Barrier kind) {
  if (state_ != State::kRecording) return fail(ErrorCode::kInvalidArgument, "barrier outside begin()/end()");
  if (!error_.ok()) return;
  record_barrier(target_, scopes_of(kind));
}

void CommandRecorder::barrier(VkPipelineStageFlags src_stage, VkAccessFlags src_access, VkPipelineStageFlags dst_stage,
                              VkAccessFlags dst_access) {
  if (state_ != State::kRecording) return fail(ErrorCode::kInvalidArgument, "barrier outside begin()/end()");
  if (!error_.ok()) return;
  record_barrier(target_, {src_stage, dst_stage, src_access, dst_access});
}

void CommandRecorder::image_barrier(VkImage image, VkImageAspectFlags aspect, VkImageLayout old_layout,
                                    VkImageLayout new_layout, VkPipelineStageFlags src_stage, VkAccessFlags src_access,
                                    VkPipelineStageFlags dst_stage, VkAccessFlags dst_access) {
  if (state_ != State::kRecording) return fail(ErrorCode::kInvalidArgument, "image barrier outside begin()/end()");
  if (!error_.ok()) return;
  VkImageMemoryBarrier barrier{VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
  barrier.srcAccessMask = src_access;
  barrier.dstAccessMask = dst_access;
  barrier.oldLayout = old_layout;
  barrier.newLayout = new_layout;
  barrier.srcQueueFamilyIndex = barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  barrier.image = image;
  barrier.subresourceRange = {aspect, 0, 1, 0, 1};
  vkCmdPipelineBarrier(target_, src_stage, dst_stage, 0, 0, nullptr, 0, nullptr, 1, &barrier);
}

bool CommandRecorder::timestamp(uint32_t index) {
  if (index >= max_timestamps_) return false;
  if (!query_pool_) return true;  // unsupported: nothing to record, not an error
  if (!recording() || written_[index]) return false;
  vkCmdWriteTimestamp(target_, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, query_pool_.get(), index);
  written_[index] = true;
  return true;
}

Status CommandRecorder::end() {
  if (state_ != State::kRecording) {
    return error_.ok() ? make_error(ErrorCode::kInvalidArgument, "end() without begin()") : error_;
  }
  if (external_) {
    state_ = State::kInitial;  // the application ends and submits its buffer; ours holds nothing now
    return error_;
  }
  // A fence wait makes device writes available, not visible to the host: this barrier does the rest.
  const BarrierScopes to_host{VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                              VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                              VK_ACCESS_HOST_READ_BIT};
  record_barrier(target_, to_host);
  state_ = State::kInvalid;
  VKFUSE_CHECK_VK(vkEndCommandBuffer(command_buffer_));
  if (!error_.ok()) return error_;
  state_ = State::kExecutable;
  return {};
}

Result<SubmitTicket> CommandRecorder::submit(const SubmitSync& sync) {
  if (device_lost_) return make_error(ErrorCode::kDeviceLost, "the Vulkan device was lost earlier");
  if (!error_.ok()) return error_;
  if (in_flight_) {
    return make_error(ErrorCode::kInvalidArgument, "the previous submission is still in flight: wait for it first");
  }
  if (state_ != State::kExecutable) {
    return make_error(ErrorCode::kInvalidArgument, "nothing to submit: record with begin() ... end() first");
  }
  std::vector<VkSemaphore> waits, signals;
  std::vector<VkPipelineStageFlags> stages;
  std::vector<uint64_t> wait_values, signal_values;
  for (const SemaphoreWait& w : sync.waits) {
    if (w.semaphore == VK_NULL_HANDLE) return make_error(ErrorCode::kInvalidArgument, "submit: a wait on a null semaphore");
    waits.push_back(w.semaphore);
    stages.push_back(w.stage == 0 ? VkPipelineStageFlags{VK_PIPELINE_STAGE_ALL_COMMANDS_BIT} : w.stage);
    wait_values.push_back(w.value);
  }
  for (const SemaphoreSignal& s : sync.signals) {
    if (s.semaphore == VK_NULL_HANDLE) return make_error(ErrorCode::kInvalidArgument, "submit: a signal of a null semaphore");
    signals.push_back(s.semaphore);
    signal_values.push_back(s.value);
  }
  SubmitTicket ticket;
  if (timeline_) {
    ticket = {timeline_.get(), timeline_value_ + 1};
    signals.push_back(ticket.timeline);
    signal_values.push_back(ticket.value);
  }
  VkSubmitInfo submit{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  submit.waitSemaphoreCount = static_cast<uint32_t>(waits.size());
  submit.pWaitSemaphores = waits.data();
  submit.pWaitDstStageMask = stages.data();
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &command_buffer_;
  submit.signalSemaphoreCount = static_cast<uint32_t>(signals.size());
  submit.pSignalSemaphores = signals.data();
  // Values for every semaphore (ignored for binary ones); the struct is known only with timeline support.
  VkTimelineSemaphoreSubmitInfo values{VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
  values.waitSemaphoreValueCount = static_cast<uint32_t>(wait_values.size());
  values.pWaitSemaphoreValues = wait_values.data();
  values.signalSemaphoreValueCount = static_cast<uint32_t>(signal_values.size());
  values.pSignalSemaphoreValues = signal_values.data();
  if (ctx_.caps.timeline_semaphore) submit.pNext = &values;
  const VkResult submitted = submit_to_queue(ctx_, submit, fence_.get());
  if (submitted == VK_ERROR_DEVICE_LOST) device_lost_ = true;
  VKFUSE_CHECK_VK(submitted);
  if (timeline_) timeline_value_ = ticket.value;
  in_flight_ = true;
  completed_ = false;
  return ticket;
}

Status CommandRecorder::wait(uint64_t timeout_ns) {
  if (device_lost_) return make_error(ErrorCode::kDeviceLost, "the Vulkan device was lost earlier");
  return wait_in_flight(timeout_ns);
}

Result<bool> CommandRecorder::poll() {
  if (!in_flight_) return false;
  const VkResult status = vkGetFenceStatus(device_, fence_.get());
  if (status == VK_NOT_READY) return true;
  if (status == VK_ERROR_DEVICE_LOST) device_lost_ = true;
  VKFUSE_CHECK_VK(status);
  VKFUSE_TRY(wait_in_flight(0));
  return false;
}

Status CommandRecorder::submit_and_wait(uint64_t timeout_ns) {
  VKFUSE_TRY(submit().status());
  return wait(timeout_ns);
}

Result<std::vector<double>> CommandRecorder::read_timestamps_ns(uint32_t count) {
  if (!query_pool_) return std::vector<double>{};
  if (device_lost_) return make_error(ErrorCode::kDeviceLost, "the Vulkan device was lost earlier");
  if (count > max_timestamps_) {
    return make_error(ErrorCode::kInvalidArgument, "read_timestamps_ns: " + std::to_string(count) +
                                                       " slots asked, the recorder has " +
                                                       std::to_string(max_timestamps_));
  }
  if (!completed_) {
    return make_error(ErrorCode::kInvalidArgument, "read_timestamps_ns: no submission of this recording has completed");
  }
  for (uint32_t i = 0; i < count; ++i) {
    // Reading an unwritten query with WAIT_BIT would block forever.
    if (!written_[i]) {
      return make_error(ErrorCode::kInvalidArgument, "read_timestamps_ns: slot " + std::to_string(i) +
                                                         " was not written by the recording");
    }
  }
  if (count == 0) return std::vector<double>{};
  std::vector<uint64_t> ticks(count);
  VKFUSE_CHECK_VK(vkGetQueryPoolResults(device_, query_pool_.get(), 0, count, count * sizeof(uint64_t), ticks.data(),
                                        sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
  return ticks_to_ns(ticks);
}

Result<std::vector<double>> CommandRecorder::try_read_timestamps_ns(uint32_t count) {
  if (!query_pool_ || count == 0) return std::vector<double>{};
  if (device_lost_) return make_error(ErrorCode::kDeviceLost, "the Vulkan device was lost earlier");
  if (count > max_timestamps_) return make_error(ErrorCode::kInvalidArgument, "try_read_timestamps_ns: too many slots");
  for (uint32_t i = 0; i < count; ++i)
    if (!written_[i]) return make_error(ErrorCode::kInvalidArgument, "try_read_timestamps_ns: slot " + std::to_string(i) +
                                                                         " was not written by the recording");
  std::vector<uint64_t> ticks(count);
  const VkResult got = vkGetQueryPoolResults(device_, query_pool_.get(), 0, count, count * sizeof(uint64_t), ticks.data(),
                                             sizeof(uint64_t), VK_QUERY_RESULT_64_BIT);
  if (got == VK_NOT_READY) return make_error(ErrorCode::kNotReady, "the recorded work has not run on the GPU yet");
  VKFUSE_CHECK_VK(got);
  return ticks_to_ns(ticks);
}

Result<std::vector<double>> CommandRecorder::ticks_to_ns(const std::vector<uint64_t>& ticks) const {
  const uint32_t count = static_cast<uint32_t>(ticks.size());
  const uint64_t mask = timestamp_valid_bits_ >= 64 ? ~uint64_t{0} : (uint64_t{1} << timestamp_valid_bits_) - 1;
  std::vector<double> ns(count);
  for (uint32_t i = 0; i < count; ++i) {
    // Differences modulo 2^valid_bits survive one wrap-around of the counter.
    const uint64_t delta = ((ticks[i] & mask) - (ticks[0] & mask)) & mask;
    ns[i] = static_cast<double>(delta) * static_cast<double>(timestamp_period_ns_);
  }
  return ns;
}

}  // namespace vkfuse
