// Execution::Impl: one execution of a CompiledModel (its arena, its inputs' and outputs' buffers, its
// descriptor sets, its recorder). Session keeps one for run(); create_execution() makes more.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <vkfuse/interop.hpp>

#include "backend/command.h"
#include "backend/memory.h"
#include "backend/pipeline.h"
#include "host/compiled_model.h"
#include "host/scheduler.h"

namespace vkfuse {

struct Execution::Impl {
  enum class Residence { kHost, kDevice, kBound, kImage };
  // A graph input or output: where it lives now.
  struct Io {
    ValueId value = -1;
    std::string name;
    bool input = true;
    Residence residence = Residence::kHost;
    std::optional<Buffer> own;      // kHost, kDevice
    std::optional<Buffer> staging;  // kHost: upload (inputs) or download (outputs)
    DeviceTensor bound;             // kBound
    std::optional<ImageBinding> image;  // kImage (an image input: always kImage), once bound
    bool uploaded = false;          // kHost inputs: upload() has given it data
  };
  enum class LastWork { kNone, kSubmit, kRecord };

  // Every public Execution call holds it: calls from several threads take turns.
  mutable std::mutex mutex;

  // Declaration order is destruction order reversed: the recorder (which waits for the GPU) goes
  // first, then the descriptor sets, then the buffers they reference, the model last.
  std::shared_ptr<const CompiledModel> model;
  std::vector<Io> io;  // graph inputs, then outputs that are not inputs
  std::optional<Buffer> arena, split_counters, split_partials;
  std::optional<DescriptorArena> descriptors;
  Schedule schedule;  // as bound now; measure_gpu_ms replays its dispatches
  RecordStats record_stats;
  std::optional<CommandRecorder> recorder;

  bool dirty = true;          // bindings changed: buffers, descriptor sets and schedule to rebuild
  bool own_recorded = false;  // the recorder's own command buffer holds the current schedule
  LastWork last = LastWork::kNone;
  std::uint64_t last_staging_bytes = 0;
  std::vector<double> group_ms;  // per group, of the last timed submit
  double last_gpu_ms = 0.0;
  bool timed = false;  // group_ms / last_gpu_ms hold a completed submit's times

  // Arena, split-K scratch (counters zeroed) and a recorder; every tensor host-resident.
  static Result<std::unique_ptr<Impl>> create(std::shared_ptr<const CompiledModel> model);

  const GraphIR& ir() const { return model->ir(); }
  const DeviceContext& ctx() const { return model->ctx(); }

  Result<Io*> find(std::string_view name, const char* call);
  Status check_idle(const char* call);
  // Buffers for each tensor's residence, descriptor sets and the schedule, where bindings changed.
  Status prepare();
  Status build_schedule();
  Placement placement(ValueId v) const;
  // The own command buffer holds the schedule (recorded where it does not).
  Status record_own();
  Status finish_wait(std::uint64_t timeout_ns);

  Status bind(std::string_view name, const DeviceTensor& tensor);
  Status bind_image(std::string_view name, const ImageBinding& image);
  // Layout transitions of bound images around a record() (before: to SHADER_READ_ONLY_OPTIMAL).
  void transition_images(const RecordSync& sync, bool before);
  Result<DeviceTensor> device_tensor(std::string_view name);
  Status upload(std::string_view name, const HostTensor& tensor);
  Result<HostTensor> download(std::string_view name);
  Status record(VkCommandBuffer command_buffer, const RecordSync& sync);
  Result<SubmitTicket> submit(const SubmitSync& sync);
  Result<std::map<std::string, HostTensor>> run(const std::map<std::string, HostTensor>& inputs);
  Result<double> gpu_ms();
  Result<double> measure_gpu_ms(int iterations);
  ExecutionMemory memory() const;
};

}  // namespace vkfuse
