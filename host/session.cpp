// Session: plan -> kernels -> pipelines -> memory (CompiledModel), and the execution run() uses.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <vkfuse/interop.hpp>
#include <vkfuse/vkfuse.hpp>

#include "backend/log.h"
#include "host/compiled_model.h"
#include "host/execution_impl.h"
#include "host/public_api.h"
#include "host/passes/image_outputs.h"

namespace vkfuse {
namespace {

bool fusion_disabled_by_env() {
  const char* env = std::getenv("VKFUSE_DISABLE_FUSION");
  return env && std::strcmp(env, "0") != 0 && *env != '\0';
}

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

// The compiled model, and the execution run() and measure_gpu_ms() use.
struct Session::Impl {
  // Held by run(), measure_gpu_ms() and the accessors of what a run changes: runs from several
  // threads take turns on the built-in execution.
  mutable std::mutex mutex;
  std::shared_ptr<CompiledModel> model;
  std::unique_ptr<Execution::Impl> execution;
  std::vector<GroupInfo> infos;  // the model's, with the built-in execution's last times
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

Result<Session> Session::create(const Context& context, const Graph& graph, const SessionOptions& options) {
  if (!context.impl()) return moved_from_error("Session::create: the context");
  if (graph.node_count() == 0) return make_error(ErrorCode::kInvalidArgument, "Session::create: the graph is empty");
  auto model = std::make_shared<CompiledModel>();
  model->context = context.impl();
  model->graph = graph;
  model->fusion = options.fusion && !fusion_disabled_by_env();
  model->profile = options.profile;
  const FusionMode mode = model->fusion ? FusionMode::kFused : FusionMode::kUnfused;
  SessionCreateStats& stats = model->create_stats;
  const auto start = Clock::now();
  auto phase = start;
  if (!options.image_outputs.empty()) {
    VKFUSE_ASSIGN_OR_RETURN(GraphIR stored, append_image_outputs(graph_ir(model->graph), options.image_outputs));
    model->with_image_stores.emplace(std::move(stored));
  }
  (void)graph_to_plan(model->unfolded(), mode, model->folded);
  VKFUSE_ASSIGN_OR_RETURN(model->plan, plan_fusion(model->ir(), model->context->plan, mode));
  stats.plan_ms = ms_since(phase);
  VKFUSE_TRY(model->set_image_inputs(options.image_inputs));
  model->set_image_outputs(options.image_outputs);
  phase = Clock::now();
  // The constants' buffers and upload need no kernel: they run on a thread of their own beside the
  // parallel stage (which creates pipelines and never touches the queue or these buffers), where the
  // driver allows it (DeviceCaps::submit_beside_pipeline_creation), else after it.
  Status constants_status;
  CompiledModel& m = *model;
  auto upload = [&m, &constants_status, &stats] {
    const auto begin = Clock::now();
    constants_status = m.upload_constants(m.bindable_constants());
    stats.constants_ms = ms_since(begin);
  };
  const bool overlap = m.ctx().caps.submit_beside_pipeline_creation;
  std::thread constants;
  if (overlap) constants = std::thread(upload);
  const Status kernels_status = m.compile_kernels(options.progress);
  stats.kernels_ms = ms_since(phase);
  phase = Clock::now();
  if (overlap) constants.join();
  else upload();
  const double constants_wait_ms = ms_since(phase);
  VKFUSE_TRY(kernels_status);
  VKFUSE_TRY(constants_status);
  phase = Clock::now();
  m.context->save_pipeline_cache();
  stats.cache_save_ms = ms_since(phase);
  phase = Clock::now();
  VKFUSE_TRY(m.plan_memory());
  auto impl = std::make_unique<Impl>();
  VKFUSE_ASSIGN_OR_RETURN(impl->execution, Execution::Impl::create(model));
  // With image inputs or outputs, the built-in execution has nothing to bind until bind_image.
  if (!m.has_images()) VKFUSE_TRY(impl->execution->prepare());
  stats.memory_ms = constants_wait_ms + ms_since(phase);
  phase = Clock::now();
  if (!m.has_images()) VKFUSE_TRY(impl->execution->record_own());
  stats.record_ms = ms_since(phase);
  stats.total_ms = ms_since(start);
  log_message(LogLevel::kInfo, "session: " + std::to_string(m.plan.op_count) + " ops in " +
                                   std::to_string(m.plan.groups.size()) + " dispatches, arena " +
                                   std::to_string(m.memory.arena_bytes) + " bytes");
  impl->infos = m.infos;
  impl->model = std::move(model);
  return Session(std::move(impl));
}

Result<std::map<std::string, HostTensor>> Session::run(const std::map<std::string, HostTensor>& inputs) {
  if (!impl_) return moved_from_error("Session::run");
  if (impl_->model->has_images())
    return make_error(ErrorCode::kInvalidArgument, "Session::run: this session has image inputs or outputs "
                                                   "(SessionOptions::image_inputs, image_outputs); run it through an Execution: "
                                                   "create_execution(), bind_image(), then record() or submit()");
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  VKFUSE_ASSIGN_OR_RETURN(auto outputs, impl_->execution->run(inputs));
  for (std::size_t k = 0; k < impl_->infos.size(); ++k) impl_->infos[k].gpu_ms = impl_->execution->group_ms[k];
  return outputs;
}

Result<Execution> Session::create_execution() const {
  if (!impl_) return moved_from_error("Session::create_execution");
  VKFUSE_ASSIGN_OR_RETURN(std::unique_ptr<Execution::Impl> execution, Execution::Impl::create(impl_->model));
  return Execution(std::move(execution));
}

Result<double> Session::measure_gpu_ms(int iterations) {
  if (!impl_) return moved_from_error("Session::measure_gpu_ms");
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->execution->measure_gpu_ms(iterations);
}

std::vector<GroupInfo> Session::groups() const {
  if (!impl_) return {};
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->infos;
}
std::size_t Session::dispatch_count() const { return impl_ ? impl_->model->plan.groups.size() : 0; }
std::size_t Session::barrier_count() const {
  if (!impl_) return 0;
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->execution->record_stats.barriers;
}
double Session::last_gpu_ms() const {
  if (!impl_) return 0.0;
  const std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->execution->last_gpu_ms;
}
bool Session::fusion_enabled() const { return impl_ && impl_->model->fusion; }
std::uint64_t Session::arena_bytes() const { return impl_ ? impl_->model->memory.arena_bytes : 0; }
std::uint64_t Session::weight_bytes() const { return impl_ ? impl_->model->constant_bytes() : 0; }
const SessionCreateStats& Session::create_stats() const {
  static const SessionCreateStats kNone;
  return impl_ ? impl_->model->create_stats : kNone;
}

}  // namespace vkfuse
