// CommandRecorder: records one primary command buffer (dispatches, copies, barriers, timestamps) once and
// submits it as often as wanted, waiting for each submission or not; or records the same commands into
// a command buffer of the application's.
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "backend/device.h"
#include "backend/handle.h"
#include "backend/pipeline.h"
#include "backend/status.h"

#include <vkfuse/interop.hpp>

namespace vkfuse {

// Number of workgroups of size b that cover a items: ceil(a / b). b must be positive.
constexpr uint64_t div_up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

// Owns a command pool, one primary command buffer, a fence, a timeline semaphore (where the device has
// them enabled) and (if the queue family has timestamps and max_timestamps > 0) a timestamp query pool.
// Move-only. Not thread-safe; submissions take the DeviceContext's queue lock (submit_to_queue).
//
// Lifetime: after submit() the work is in flight until wait() (or poll()) sees it done; begin() and the
// destructor wait for it first, so destroying the recorder is always safe. Pipelines, descriptor sets and buffers
// used by the recording must stay alive while it may still be submitted.
//
// Recording errors (a dispatch above the workgroup limits, wrong push-constant size, ...) cannot be returned
// by the void recording calls; the first one is kept and returned by end(), and the buffer is then not
// submittable until the next begin().
class CommandRecorder {
 public:
  static Result<CommandRecorder> create(const DeviceContext& ctx, uint32_t max_timestamps);

  CommandRecorder(CommandRecorder&& other) noexcept;
  CommandRecorder& operator=(CommandRecorder&& other) noexcept;
  ~CommandRecorder();

  // Starts a new recording (replacing the previous one) and resets the timestamp queries in the command buffer.
  // With `external`, records into that command buffer (the application's, already begun and outside a render
  // pass) instead; end() then leaves it open, and the recorder's own buffer has no recording until the next
  // begin() without one.
  Status begin(VkCommandBuffer external = VK_NULL_HANDLE);

  // Binds `p` (skipped if already bound) and `set` at set 0, pushes `push_constants` (its size must equal
  // p.push_constant_bytes()), and dispatches. Group counts above maxComputeWorkGroupCount are a recording error;
  // a zero count is a legal no-op dispatch.
  void dispatch(const ComputePipeline& p, VkDescriptorSet set, std::span<const std::byte> push_constants,
                uint32_t groups_x, uint32_t groups_y = 1, uint32_t groups_z = 1);
  // vkCmdCopyBuffer; empty `regions` records nothing.
  void copy(VkBuffer src, VkBuffer dst, std::span<const VkBufferCopy> regions);

  enum class Barrier {
    kComputeToCompute,   // shader writes -> later shader reads and writes
    kTransferToCompute,  // copy writes -> shader reads and writes
    kComputeToTransfer,  // shader writes -> copy reads and writes
    kHostToTransfer,     // host writes -> copy reads. Not needed: a queue submit already makes host writes visible
  };
  // A global VkMemoryBarrier (cheaper to record than per-buffer barriers, and no weaker on current drivers).
  void barrier(Barrier kind);
  void barrier(VkPipelineStageFlags src_stage, VkAccessFlags src_access, VkPipelineStageFlags dst_stage,
               VkAccessFlags dst_access);
  // An image memory barrier on mip 0, layer 0 of `image`, moving it from `old_layout` to `new_layout`.
  void image_barrier(VkImage image, VkImageAspectFlags aspect, VkImageLayout old_layout, VkImageLayout new_layout,
                     VkPipelineStageFlags src_stage, VkAccessFlags src_access, VkPipelineStageFlags dst_stage,
                     VkAccessFlags dst_access);

  // Writes a timestamp into slot `index` once all previous commands have finished (BOTTOM_OF_PIPE). Without
  // timestamp support it records nothing. Returns false if index >= max_timestamps, or if the slot was already
  // written since begin() (a query must be reset before it is written again).
  bool timestamp(uint32_t index);

  // Ends the recording. It first records a barrier that makes every shader and copy write visible to the host,
  // so mapped download buffers can be read after submit_and_wait() (a fence alone does not guarantee that).
  // An external recording gets neither that barrier nor vkEndCommandBuffer. Returns the first recording
  // error, if any.
  Status end();

  // Submits the recorded buffer without waiting: after `sync`'s waits, signalling its semaphores, the
  // recorder's timeline (ticket.value) and its fence. kInvalidArgument while a submission is in flight.
  // kDeviceLost on VK_ERROR_DEVICE_LOST, and every later call fails fast with kDeviceLost.
  Result<SubmitTicket> submit(const SubmitSync& sync = {});
  // Waits for the submission in flight (none: returns at once) and resets the fence. On timeout (kNotReady)
  // the work stays in flight.
  Status wait(uint64_t timeout_ns = UINT64_MAX);
  // Whether a submission is still running (true), else finishes it as wait() does.
  Result<bool> poll();
  bool in_flight() const { return in_flight_; }

  // submit() then wait().
  Status submit_and_wait(uint64_t timeout_ns = UINT64_MAX);

  // Slots [0, count) of the last completed submission, in nanoseconds relative to slot 0 (wrap-around within
  // the valid bits handled). Empty if timestamps are unsupported. kInvalidArgument: count above the maximum,
  // a slot not written by the recording, or no completed submission since end().
  Result<std::vector<double>> read_timestamps_ns(uint32_t count);
  // The same for an external recording, whose completion only the application knows: kNotReady while the
  // queries are not all available (not submitted yet, or still running).
  Result<std::vector<double>> try_read_timestamps_ns(uint32_t count);

  bool timestamps_supported() const { return query_pool_.get() != VK_NULL_HANDLE; }
  uint32_t dispatch_count() const { return dispatch_count_; }  // dispatches recorded since begin()

 private:
  enum class State { kInitial, kRecording, kExecutable, kInvalid };

  CommandRecorder() = default;
  void fail(ErrorCode code, std::string message);  // keeps the first recording error
  Status wait_in_flight(uint64_t timeout_ns);
  void wait_timeline_settled();  // before the timeline semaphore is destroyed
  bool recording() const { return state_ == State::kRecording && error_.ok(); }

  Result<std::vector<double>> ticks_to_ns(const std::vector<uint64_t>& ticks) const;

  DeviceContext ctx_;  // for submit_to_queue (queue and its lock), names and caps
  VkDevice device_ = VK_NULL_HANDLE;
  std::array<uint32_t, 3> max_groups_{};
  float timestamp_period_ns_ = 0.0f;
  uint32_t timestamp_valid_bits_ = 0;
  uint32_t max_timestamps_ = 0;

  UniqueHandle<VkCommandPool> pool_;  // frees the command buffer with it
  VkCommandBuffer command_buffer_ = VK_NULL_HANDLE;
  UniqueHandle<VkFence> fence_;
  UniqueHandle<VkSemaphore> timeline_;  // null without timeline semaphores
  uint64_t timeline_value_ = 0;         // the last value a submission signals
  PFN_vkWaitSemaphores wait_semaphores_ = nullptr;  // core 1.2 or the KHR alias, whichever the device has
  UniqueHandle<VkQueryPool> query_pool_;
  VkCommandBuffer target_ = VK_NULL_HANDLE;  // the buffer being recorded: command_buffer_ or an external one
  bool external_ = false;

  State state_ = State::kInitial;
  Status error_;                      // first recording error since begin()
  std::vector<bool> written_;         // timestamp slots written since begin()
  VkPipeline bound_pipeline_ = VK_NULL_HANDLE;
  uint32_t dispatch_count_ = 0;
  bool in_flight_ = false;            // submitted, not yet seen complete
  bool completed_ = false;            // a submission of the current recording completed
  bool device_lost_ = false;
};

}  // namespace vkfuse
