// vkfuse_bench_frame: one model, end to end per frame, the ways an application can feed it: the host
// path (Session::run: upload, submit, wait, download), the device path (inputs and outputs in device
// buffers, Execution::submit + wait: no staging) and the device path with two frames in flight (the
// steady-state frame time when the CPU does not wait for each frame). Wall-clock milliseconds per frame
// (median over --frames after a warm-up), plus the GPU time of the dispatches alone. JSON lines.
//
//   vkfuse_bench_frame MODEL.onnx [--frames 300] [--precision fp32|fp16] [--batch 1] [--image WxH]
//       [--output-image palette]
// With --image, a WxH RGBA8 frame instead (bench/frame_image.h); with --output-image palette too, the
// output shown as a segmentation's palette image.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <vkfuse/interop.hpp>
#include <vkfuse/onnx.hpp>
#include <vkfuse/vkfuse.hpp>

#include "bench/bench_args.h"
#include "bench/bench_timing.h"
#include "bench/frame_image.h"

namespace {

using Clock = std::chrono::steady_clock;

int fail(const char* what, const vkfuse::Status& status) {
  std::fprintf(stderr, "vkfuse_bench_frame: %s: %s\n", what, status.to_string().c_str());
  return 1;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// Calls `frame` `frames` times after a warm-up of frames/5; the median wall milliseconds of one call.
template <typename Frame>
vkfuse::Result<double> per_frame_ms(int frames, Frame frame) {
  std::vector<double> ms;
  for (int i = 0; i < frames + frames / 5; ++i) {
    const auto start = Clock::now();
    if (vkfuse::Status s = frame(); !s.ok()) return s;
    if (i >= frames / 5) ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  return median(ms);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: vkfuse_bench_frame MODEL.onnx [--frames N] [--precision fp32|fp16] [--batch N]\n");
    return 2;
  }
  const std::string path = argv[1];
  const int frames = std::stoi(vkfuse::bench::arg(argc, argv, "--frames", "300"));
  const std::string precision = vkfuse::bench::arg(argc, argv, "--precision", "fp32");
  vkfuse::OnnxOptions onnx;
  onnx.float_dtype = precision == "fp16" ? vkfuse::DType::kF16 : vkfuse::DType::kF32;
  onnx.batch = std::stoll(vkfuse::bench::arg(argc, argv, "--batch", "1"));
  auto graph = vkfuse::load_onnx(path, onnx);
  if (!graph.ok()) return fail("load_onnx", graph.status());
  auto context = vkfuse::Context::create({});
  if (!context.ok()) return fail("Context::create", context.status());
  if (const std::string image = vkfuse::bench::arg(argc, argv, "--image", ""); !image.empty()) {
    const auto x = image.find('x');
    return vkfuse::bench::run_image_frames(*context, *graph, path, precision,
                                           static_cast<std::uint32_t>(std::stoul(image.substr(0, x))),
                                           static_cast<std::uint32_t>(std::stoul(image.substr(x + 1))), frames,
                                           vkfuse::bench::arg(argc, argv, "--output-image", "") == "palette");
  }
  vkfuse::SessionOptions options;
  options.profile = false;  // no timestamp after every dispatch: groups overlap as in production
  auto session = vkfuse::Session::create(*context, *graph, options);
  if (!session.ok()) return fail("Session::create", session.status());

  // Inputs: a ramp of each input's shape (the timing does not depend on the values).
  std::map<std::string, vkfuse::HostTensor> inputs;
  std::uint64_t input_bytes = 0, output_bytes = 0;
  for (const vkfuse::TensorDesc& in : graph->inputs()) {
    std::vector<float> values(static_cast<std::size_t>(vkfuse::shape_numel(in.shape)));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 255) / 255.0f;
    inputs[in.name] = vkfuse::HostTensor::from_floats(in.shape, values, in.dtype);
    input_bytes += inputs[in.name].bytes.size();
  }
  for (const vkfuse::TensorDesc& out : graph->outputs())
    output_bytes += static_cast<std::uint64_t>(vkfuse::shape_numel(out.shape)) * vkfuse::dtype_size(out.dtype);

  // 1. Host path: what Session::run costs per frame.
  auto host_ms = per_frame_ms(frames, [&]() -> vkfuse::Status { return session->run(inputs).status(); });
  if (!host_ms.ok()) return fail("host path", host_ms.status());

  // 2. Device path: every input and output in vkfuse's device buffers (written and read by the
  // application's own GPU work), one submit and wait per frame.
  std::vector<vkfuse::Execution> executions;
  for (int i = 0; i < 2; ++i) {
    auto e = session->create_execution();
    if (!e.ok()) return fail("create_execution", e.status());
    for (const vkfuse::TensorDesc& t : graph->inputs())
      if (auto d = e->device_tensor(t.name); !d.ok()) return fail("device_tensor", d.status());
    for (const vkfuse::TensorDesc& t : graph->outputs())
      if (auto d = e->device_tensor(t.name); !d.ok()) return fail("device_tensor", d.status());
    executions.push_back(std::move(e).value());
  }
  auto device_ms = per_frame_ms(frames, [&]() -> vkfuse::Status {
    if (auto t = executions[0].submit(); !t.ok()) return t.status();
    return executions[0].wait();
  });
  if (!device_ms.ok()) return fail("device path", device_ms.status());
  const std::uint64_t device_staging = executions[0].last_staging_bytes();

  // 3. The same with two frames in flight: each frame waits for the one two back, not for itself.
  int frame = 0;
  auto pipelined_ms = per_frame_ms(frames, [&]() -> vkfuse::Status {
    vkfuse::Execution& e = executions[static_cast<std::size_t>(frame++ % 2)];
    if (vkfuse::Status s = e.wait(); !s.ok()) return s;
    return e.submit().status();
  });
  if (!pipelined_ms.ok()) return fail("pipelined device path", pipelined_ms.status());
  for (vkfuse::Execution& e : executions)
    if (vkfuse::Status s = e.wait(); !s.ok()) return fail("wait", s);

  // 4. The dispatches alone, back to back on the GPU (what `vkfuse bench` reports).
  auto gpu_ms = vkfuse::bench::median_gpu_ms(*session, 20.0, 5, 5);
  if (!gpu_ms.ok()) return fail("GPU time", gpu_ms.status());

  std::printf("{\"model\": \"%s\", \"precision\": \"%s\", \"batch\": %lld, \"dispatches\": %zu, \"frames\": %d, "
              "\"input_bytes\": %llu, \"output_bytes\": %llu, \"host_ms\": %.4f, \"device_ms\": %.4f, "
              "\"device_2_in_flight_ms\": %.4f, \"gpu_ms\": %.4f, \"device_staging_bytes\": %llu, "
              "\"weights_bytes\": %llu, \"execution_bytes\": %llu, \"host_over_device\": %.3f}\n",
              path.c_str(), precision.c_str(), static_cast<long long>(*onnx.batch), session->dispatch_count(), frames,
              static_cast<unsigned long long>(input_bytes), static_cast<unsigned long long>(output_bytes), *host_ms,
              *device_ms, *pipelined_ms, *gpu_ms, static_cast<unsigned long long>(device_staging),
              static_cast<unsigned long long>(session->weight_bytes()),
              static_cast<unsigned long long>(executions[0].memory().total()), *host_ms / *device_ms);
  return 0;
}
