// Scheduler: records the whole model into one command buffer, once. Uploads, every group's dispatch
// with a barrier only where a group touches memory an earlier unsynchronized group wrote (or that it
// overwrites while an earlier one may still read it), timestamps, downloads.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "backend/command.h"
#include "backend/pipeline.h"

namespace vkfuse {

// A byte range of one buffer.
struct MemoryRange {
  VkBuffer buffer = VK_NULL_HANDLE;
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};

struct ScheduledDispatch {
  const ComputePipeline* pipeline = nullptr;
  VkDescriptorSet set = VK_NULL_HANDLE;
  std::array<std::uint32_t, 3> groups{1, 1, 1};
  std::vector<MemoryRange> reads;
  std::vector<MemoryRange> writes;
};

struct ScheduledCopy {
  VkBuffer src = VK_NULL_HANDLE;
  VkBuffer dst = VK_NULL_HANDLE;
  std::uint64_t bytes = 0;
};

struct Schedule {
  std::vector<ScheduledCopy> uploads;
  std::vector<ScheduledDispatch> dispatches;
  std::vector<ScheduledCopy> downloads;
};

// Where timestamps go (where the device has them). A timestamp at the bottom of the pipe waits for all
// earlier work, so one after every dispatch also stops independent dispatches from overlapping: kAround
// times the schedule as it runs without them, kEachDispatch gives every group's own time.
enum class Timestamps {
  kNone,
  kAround,        // slot 0 before the first dispatch, slot 1 after the last
  kEachDispatch,  // slot 0 before the first dispatch, slot g+1 after dispatch g
};

struct RecordStats {
  std::uint32_t dispatches = 0;
  std::uint32_t barriers = 0;   // between dispatches
  bool timestamps = false;      // written as asked (false: none asked, or the device has none)
};

// A recording of its own: begin, a barrier after whatever ran on the queue before, uploads, dispatches,
// downloads, end.
Result<RecordStats> record_schedule(CommandRecorder& recorder, const Schedule& schedule, Timestamps timestamps);

// The dispatches alone, into a recording already begun (the application's command buffer, between the
// barriers the caller records around them).
RecordStats record_dispatches(CommandRecorder& recorder, const std::vector<ScheduledDispatch>& dispatches,
                              Timestamps timestamps);

}  // namespace vkfuse
