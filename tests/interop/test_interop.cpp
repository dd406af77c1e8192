// vkfuse inside an application's Vulkan (<vkfuse/interop.hpp>): the application's own instance and
// device (validation and synchronization validation on: any message fails), its buffers bound as the
// model's input and output, vkfuse recorded into its command buffer between its own passes, its
// semaphores, several executions in flight on one copy of the weights, and every bad use we detect.
// Results are compared with the host-tensor path (Session::run) of the same model: the same kernels,
// so the bytes must be equal.
#include <doctest/doctest.h>

#include <cstring>
#include <mutex>
#include <vector>

#include <vkfuse/interop.hpp>
#include <vkfuse/onnx.hpp>
#include <vkfuse/tensor_io.hpp>
#include <vkfuse/vkfuse.hpp>

#include "interop/interop_support.h"

namespace vkfuse::testing {

TEST_CASE("interop: the model recorded into the application's command buffer between its own passes") {
  AppVulkan app;
  {
    Context context = wrap(app);
    CHECK(context.borrowed());
    const Graph graph = model();
    Session s = session(context, graph);
    const HostTensor input = model_input();
    const HostTensor want = host_output(s, input);
    const std::string output_name = s.create_execution()->output_names().at(0);

    auto frame = s.create_execution();
    REQUIRE_MESSAGE(frame.ok(), frame.status().to_string());
    const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                     VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    // The input at an offset into a larger buffer of the application's, as engines suballocate.
    const VkDeviceSize offset = 256;
    AppBuffer upload = app.make_buffer(input.bytes.size(), VK_BUFFER_USAGE_TRANSFER_SRC_BIT, true);
    AppBuffer in = app.make_buffer(offset + input.bytes.size(), usage, false);
    AppBuffer out = app.make_buffer(want.bytes.size(), usage, false);
    AppBuffer readback = app.make_buffer(want.bytes.size(), VK_BUFFER_USAGE_TRANSFER_DST_BIT, true);
    std::memcpy(upload.mapped, input.bytes.data(), input.bytes.size());
    OK(frame->bind("input", {in.buffer, offset, input.bytes.size(), usage}));
    OK(frame->bind(output_name, {out.buffer, 0, want.bytes.size(), usage}));

    const std::uint64_t weights_before = s.weight_bytes();
    for (int round = 0; round < 2; ++round) {  // the same execution recorded again in a new command buffer
      std::memset(readback.mapped, 0, want.bytes.size());
      VkCommandBuffer cb = app.begin_commands();
      const VkBufferCopy up{0, offset, input.bytes.size()};
      vkCmdCopyBuffer(cb, upload.buffer, in.buffer, 1, &up);  // the application's transfer pass writes the input
      RecordSync sync;
      sync.before = {VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT};
      sync.after = {VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
      OK(frame->record(cb, sync));
      read_back(cb, out.buffer, 0, readback, want.bytes.size());  // and a pass of its own reads the output
      app.submit(cb, {}, {}, {}, {});
      check_equal(readback.mapped, want);
      CHECK(frame->last_staging_bytes() == 0);
      auto ms = frame->last_gpu_ms();
      if (ms.ok()) CHECK(*ms > 0.0);
      else CHECK(ms.status().code() == ErrorCode::kUnsupported);
    }
    CHECK(s.weight_bytes() == weights_before);
    CHECK(frame->memory().staging_bytes == 0);
    CHECK(frame->memory().io_bytes == 0);  // both tensors are the application's
    frame = Result<Execution>(make_error(ErrorCode::kInternal, "released"));  // before the buffers it binds
    for (AppBuffer* b : {&upload, &in, &out, &readback}) app.destroy(*b);
  }
  CHECK_MESSAGE(app.messages() == 0, app.first_message());
}

TEST_CASE("interop: submit waits on the application's semaphores and signals binary and timeline ones") {
  AppVulkan app;
  REQUIRE(app.has_timeline);
  {
    Context context = wrap(app);
    const Graph graph = model();
    Session s = session(context, graph);
    const HostTensor input = model_input(0.25f);
    const HostTensor want = host_output(s, input);
    auto frame = s.create_execution();
    REQUIRE(frame.ok());
    const std::string output_name = frame->output_names().at(0);
    // vkfuse's own device buffers, written and read by the application's passes.
    auto in = frame->device_tensor("input");
    auto out = frame->device_tensor(output_name);
    REQUIRE(in.ok());
    REQUIRE(out.ok());
    AppBuffer upload = app.make_buffer(input.bytes.size(), VK_BUFFER_USAGE_TRANSFER_SRC_BIT, true);
    AppBuffer readback = app.make_buffer(want.bytes.size(), VK_BUFFER_USAGE_TRANSFER_DST_BIT, true);
    std::memcpy(upload.mapped, input.bytes.data(), input.bytes.size());
    const VkSemaphore written = app.make_semaphore(false);   // binary: the input is written
    const VkSemaphore timeline = app.make_semaphore(true);   // timeline: vkfuse is done, value 7

    VkCommandBuffer write = app.begin_commands();
    const VkBufferCopy up{0, in->offset, input.bytes.size()};
    vkCmdCopyBuffer(write, upload.buffer, in->buffer, 1, &up);
    app.submit(write, {}, {}, {written}, {0}, false);
    SubmitSync sync;
    sync.waits.push_back({written, 0, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT});
    sync.signals.push_back({timeline, 7});
    auto ticket = frame->submit(sync);
    REQUIRE_MESSAGE(ticket.ok(), ticket.status().to_string());
    CHECK(ticket->timeline != VK_NULL_HANDLE);
    CHECK(ticket->value == 1);
    // The application's read waits on the GPU for both: its own timeline value and vkfuse's ticket.
    VkCommandBuffer read = app.begin_commands();
    read_back(read, out->buffer, out->offset, readback, want.bytes.size());
    app.submit(read, {timeline, ticket->timeline}, {7, ticket->value}, {}, {});
    OK(frame->wait());
    check_equal(readback.mapped, want);
    CHECK(frame->last_staging_bytes() == 0);
    CHECK(frame->memory().staging_bytes == 0);
    app.wait_idle();
    frame = Result<Execution>(make_error(ErrorCode::kInternal, "released"));
    app.destroy(upload);
    app.destroy(readback);
  }
  CHECK_MESSAGE(app.messages() == 0, app.first_message());
}

TEST_CASE("interop: three executions in flight at once share one copy of the weights") {
  AppVulkan app;
  {
    Context context = wrap(app);
    const Graph graph = model();
    Session s = session(context, graph);
    constexpr int kFrames = 3;
    std::vector<HostTensor> inputs, wants;
    for (int f = 0; f < kFrames; ++f) {
      inputs.push_back(model_input(0.1f * static_cast<float>(f)));
      wants.push_back(host_output(s, inputs.back()));
    }
    CHECK(wants[0].bytes != wants[1].bytes);  // distinct inputs give distinct outputs: a mix-up would show
    const std::uint64_t weights = s.weight_bytes();
    REQUIRE(weights > 0);
    std::vector<Execution> frames;
    for (int f = 0; f < kFrames; ++f) {
      const std::uint64_t before = context.device_memory_bytes();
      auto e = s.create_execution();
      REQUIRE_MESSAGE(e.ok(), e.status().to_string());
      OK(e->upload("input", inputs[f]));
      // Everything this execution allocated is its own part: no weight was copied.
      CHECK(context.device_memory_bytes() - before == e->memory().total());
      frames.push_back(std::move(e).value());
    }
    CHECK(s.weight_bytes() == weights);
    for (int f = 0; f < kFrames; ++f) {
      auto ticket = frames[f].submit();
      REQUIRE_MESSAGE(ticket.ok(), ticket.status().to_string());
    }
    for (int f = 0; f < kFrames; ++f) {
      OK(frames[f].wait());
      auto got = frames[f].download(frames[f].output_names().at(0));
      REQUIRE_MESSAGE(got.ok(), got.status().to_string());
      CHECK(got->bytes == wants[f].bytes);
      CHECK(frames[f].last_staging_bytes() == inputs[f].bytes.size() + wants[f].bytes.size());
    }
  }
  CHECK_MESSAGE(app.messages() == 0, app.first_message());
}

TEST_CASE("interop: vkfuse takes the application's queue lock around every submit") {
  AppVulkan app;
  struct Counts {
    std::mutex mutex;
    int locks = 0, unlocks = 0;
  } counts;
  {
    ExternalDevice d = external(app);
    d.queue_lock.user = &counts;
    d.queue_lock.lock = [](void* u) {
      auto* c = static_cast<Counts*>(u);
      c->mutex.lock();
      ++c->locks;
    };
    d.queue_lock.unlock = [](void* u) {
      auto* c = static_cast<Counts*>(u);
      ++c->unlocks;
      c->mutex.unlock();
    };
    Context context = wrap(d);
    const Graph graph = model();
    Session s = session(context, graph);
    const int after_create = counts.locks;
    CHECK(after_create > 0);  // the weights' upload
    (void)host_output(s, model_input());
    CHECK(counts.locks == after_create + 1);
    CHECK(counts.unlocks == counts.locks);
  }
  CHECK_MESSAGE(app.messages() == 0, app.first_message());
}

TEST_CASE("interop: a device missing what the application requires is refused with every missing feature named") {
  AppVulkan::Options options;
  options.storage16 = false;
  options.storage8 = false;
  options.timeline = false;
  AppVulkan app(options);
  ExternalDevice d = external(app);
  d.require_fp16 = true;
  d.require_bool = true;
  d.require_timeline = true;
  auto refused = Context::wrap(d, {});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == ErrorCode::kUnsupported);
  const std::string& text = refused.status().message();
  INFO(text);
  CHECK(text.find("storageBuffer16BitAccess (f16 tensors)") != std::string::npos);
  CHECK(text.find("storageBuffer8BitAccess (bool tensors)") != std::string::npos);
  CHECK(text.find("timelineSemaphore") != std::string::npos);
  CHECK(text.find("VkPhysicalDeviceVulkan11Features::storageBuffer16BitAccess") != std::string::npos);

  // Without those requirements the same device is fine for fp32, and f16 fails at Session::create.
  d.require_fp16 = d.require_bool = d.require_timeline = false;
  auto context = Context::wrap(d, {});
  REQUIRE_MESSAGE(context.ok(), context.status().to_string());
  OnnxOptions fp16;
  fp16.float_dtype = DType::kF16;
  auto graph = load_onnx(kModelDir + "/model.onnx", fp16);
  REQUIRE(graph.ok());
  auto s = Session::create(*context, *graph, {});
  CHECK_FALSE(s.ok());

  ExternalDevice null_device = external(app);
  null_device.device = VK_NULL_HANDLE;
  CHECK(Context::wrap(null_device, {}).status().code() == ErrorCode::kInvalidArgument);
  ExternalDevice other_loader = external(app);
  other_loader.get_instance_proc_addr = [](VkInstance, const char*) -> PFN_vkVoidFunction { return nullptr; };
  CHECK(Context::wrap(other_loader, {}).status().code() == ErrorCode::kUnsupported);
  ExternalDevice same_loader = external(app);
  same_loader.get_instance_proc_addr = vkGetInstanceProcAddr;
  CHECK(Context::wrap(same_loader, {}).ok());
  CHECK_MESSAGE(app.messages() == 0, app.first_message());
}

TEST_CASE("interop: bad use gets a clear error and breaks nothing") {
  AppVulkan app;
  {
    Context context = wrap(app);
    const Graph graph = model();
    Session s = session(context, graph);
    const HostTensor input = model_input();
    const HostTensor want = host_output(s, input);
    auto e = s.create_execution();
    REQUIRE(e.ok());
    const VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    AppBuffer small = app.make_buffer(64, usage, false);
    AppBuffer transfer_only = app.make_buffer(input.bytes.size(), VK_BUFFER_USAGE_TRANSFER_DST_BIT, false);

    auto bad = e->bind("nope", {small.buffer, 0, 64, usage});
    CHECK(bad.code() == ErrorCode::kInvalidArgument);
    CHECK(bad.message().find("no input or output named 'nope' (it has input input, output ") != std::string::npos);
    bad = e->bind("input", {small.buffer, 0, 64, usage});
    CHECK(bad.message().find("needs " + std::to_string(input.bytes.size()) + " bytes") != std::string::npos);
    bad = e->bind("input", {small.buffer, 0, input.bytes.size(), usage});  // a size that lies
    CHECK(bad.message().find("run past the end of the buffer") != std::string::npos);
    bad = e->bind("input", {transfer_only.buffer, 0, input.bytes.size(), VK_BUFFER_USAGE_TRANSFER_DST_BIT});
    CHECK(bad.message().find("VK_BUFFER_USAGE_STORAGE_BUFFER_BIT") != std::string::npos);
    bad = e->bind("input", {transfer_only.buffer, 4, input.bytes.size(), usage});
    CHECK(bad.message().find("is not a multiple of") != std::string::npos);
    CHECK(e->bind("input", {VK_NULL_HANDLE, 0, input.bytes.size()}).message().find("null") != std::string::npos);

    VkCommandBuffer cb = app.begin_commands();
    bad = e->record(cb, {});
    CHECK(bad.message().find("host-resident") != std::string::npos);
    app.submit(cb, {}, {}, {}, {});  // empty: the failed record left nothing in it

    CHECK(e->submit().status().message().find("has no data: upload() it first") != std::string::npos);
    CHECK(e->download(e->output_names().at(0)).status().message().find("no completed submit()") != std::string::npos);
    CHECK(e->upload("input", HostTensor::from_floats({1, 2}, {0.0f, 1.0f})).message().find("the graph expects") !=
          std::string::npos);
    CHECK(e->upload(e->output_names().at(0), input).message().find("is an output") != std::string::npos);

    OK(e->upload("input", input));
    // Held in flight by a timeline value the application signals later (wait-before-signal is legal for
    // timeline semaphores only): everything but wait() is refused meanwhile.
    REQUIRE(app.has_timeline);
    const VkSemaphore gate = app.make_semaphore(true);
    SubmitSync gated;
    gated.waits.push_back({gate, 1, VK_PIPELINE_STAGE_TRANSFER_BIT});
    auto ticket = e->submit(gated);
    REQUIRE_MESSAGE(ticket.ok(), ticket.status().to_string());
    CHECK(e->in_flight());
    CHECK(e->submit().status().message().find("still in flight") != std::string::npos);
    CHECK(e->upload("input", input).message().find("still in flight") != std::string::npos);
    CHECK(e->device_tensor("input").status().message().find("still in flight") != std::string::npos);
    VkCommandBuffer late = app.begin_commands();
    CHECK(e->record(late, {}).message().find("still in flight") != std::string::npos);
    CHECK(e->download(e->output_names().at(0)).status().code() == ErrorCode::kNotReady);
    CHECK(e->wait(1000000).code() == ErrorCode::kNotReady);  // 1 ms: still held by the gate
    VkSemaphoreSignalInfo open{VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
    open.semaphore = gate;
    open.value = 1;
    REQUIRE(vkSignalSemaphore(app.device, &open) == VK_SUCCESS);  // the application opens the gate
    app.submit(late, {}, {}, {}, {});
    OK(e->wait());
    auto got = e->download(e->output_names().at(0));
    REQUIRE(got.ok());
    CHECK(got->bytes == want.bytes);  // nothing the refused calls did broke the execution
    e = Result<Execution>(make_error(ErrorCode::kInternal, "released"));
    app.destroy(small);
    app.destroy(transfer_only);
  }
  CHECK_MESSAGE(app.messages() == 0, app.first_message());
}

}  // namespace vkfuse::testing
