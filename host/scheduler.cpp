#include "host/scheduler.h"

#include <cstdlib>
#include <cstring>

namespace vkfuse {
namespace {

// VKFUSE_DEBUG_DROP_BARRIERS=1 records no barrier between dispatches: wrong results on purpose, so that
// a test can prove synchronization validation (VKFUSE_VALIDATION=sync) catches a missing barrier.
bool barriers_dropped() {
  const char* env = std::getenv("VKFUSE_DEBUG_DROP_BARRIERS");
  return env != nullptr && std::strcmp(env, "1") == 0;
}

bool overlaps(const MemoryRange& a, const MemoryRange& b) {
  return a.buffer == b.buffer && a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
}

bool overlaps_any(const std::vector<MemoryRange>& ranges, const std::vector<MemoryRange>& others) {
  for (const MemoryRange& a : ranges)
    for (const MemoryRange& b : others)
      if (overlaps(a, b)) return true;
  return false;
}

}  // namespace

RecordStats record_dispatches(CommandRecorder& recorder, const std::vector<ScheduledDispatch>& dispatches,
                              Timestamps timestamps) {
  RecordStats stats;
  stats.timestamps = timestamps != Timestamps::kNone && recorder.timestamps_supported();
  if (stats.timestamps) recorder.timestamp(0);

  // Reads and writes since the last barrier: a dispatch that reads what they wrote (RAW), or writes
  // what they read or wrote (WAR, WAW: the arena reuses bytes), must wait for them.
  std::vector<MemoryRange> pending_reads, pending_writes;
  const bool drop_barriers = barriers_dropped();
  for (std::size_t g = 0; g < dispatches.size(); ++g) {
    const ScheduledDispatch& d = dispatches[g];
    const bool hazard = overlaps_any(d.reads, pending_writes) || overlaps_any(d.writes, pending_writes) ||
                        overlaps_any(d.writes, pending_reads);
    if (hazard) {
      if (!drop_barriers) recorder.barrier(CommandRecorder::Barrier::kComputeToCompute);
      ++stats.barriers;
      pending_reads.clear();
      pending_writes.clear();
    }
    recorder.dispatch(*d.pipeline, d.set, {}, d.groups[0], d.groups[1], d.groups[2]);
    ++stats.dispatches;
    if (stats.timestamps && timestamps == Timestamps::kEachDispatch) recorder.timestamp(static_cast<std::uint32_t>(g + 1));
    pending_reads.insert(pending_reads.end(), d.reads.begin(), d.reads.end());
    pending_writes.insert(pending_writes.end(), d.writes.begin(), d.writes.end());
  }
  if (stats.timestamps && timestamps == Timestamps::kAround) recorder.timestamp(1);
  return stats;
}

Result<RecordStats> record_schedule(CommandRecorder& recorder, const Schedule& schedule, Timestamps timestamps) {
  VKFUSE_TRY(recorder.begin());
  // Whatever ran on the queue before (the application's passes, this schedule's previous submission)
  // is done with the buffers before the copies and dispatches touch them.
  recorder.barrier(VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, VK_ACCESS_MEMORY_WRITE_BIT,
                   VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                   VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT |
                       VK_ACCESS_SHADER_WRITE_BIT);
  for (const ScheduledCopy& copy : schedule.uploads) {
    const VkBufferCopy region{0, 0, copy.bytes};
    recorder.copy(copy.src, copy.dst, {&region, 1});
  }
  if (!schedule.uploads.empty()) recorder.barrier(CommandRecorder::Barrier::kTransferToCompute);
  const RecordStats stats = record_dispatches(recorder, schedule.dispatches, timestamps);
  if (!schedule.downloads.empty()) recorder.barrier(CommandRecorder::Barrier::kComputeToTransfer);
  for (const ScheduledCopy& copy : schedule.downloads) {
    const VkBufferCopy region{0, 0, copy.bytes};
    recorder.copy(copy.src, copy.dst, {&region, 1});
  }
  VKFUSE_TRY(recorder.end());
  return stats;
}

}  // namespace vkfuse
