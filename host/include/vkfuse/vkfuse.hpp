// vkfuse: neural networks on any Vulkan GPU, made fast by operator fusion.
//
//   vkfuse::GraphBuilder b;
//   auto x = b.input("x", {1024});
//   b.output(b.op("Relu", {b.op("Add", {x, b.scalar(1.0f)})}), "y");
//   auto graph = b.build();                         // Result<Graph>: shape errors name the node
//   auto context = vkfuse::Context::create({});      // picks a device (VKFUSE_DEVICE to choose)
//   auto session = vkfuse::Session::create(*context, *graph, {});  // plans, compiles, records once
//   auto outputs = session->run({{"x", vkfuse::HostTensor::from_floats({1024}, data)}});
//
// Errors: no exceptions; every fallible call returns Status or Result<T>.
// Thread-safety: a Context may be shared by sessions created and run on any threads at once (its
// caches are locked; submissions to its queue take its queue lock, <vkfuse/interop.hpp>: QueueLock).
// A Session or Execution serializes its calls: run() from two threads at once runs one after the other
// (each caller gets its own outputs). A GraphBuilder is one thread's at a time.
// Moved-from objects: every call on one returns kInvalidArgument saying so (accessors return empty
// values, a GraphBuilder's build() reports it); only destruction and assignment are meaningful.
//
// A Session is one compiled model (plan, pipelines, weights on the device) with one built-in
// Execution that run() uses; create_execution() makes more (<vkfuse/interop.hpp>), each with its own
// intermediates, bindings and command buffer, so that several can be in flight at once sharing one
// copy of the weights.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <vkfuse/status.hpp>
#include <vkfuse/types.hpp>

namespace vkfuse {

// A tensor in host memory: shape, dtype and the bytes in row-major order (bool: one byte, 0 or 1;
// f16: IEEE half).
struct VKFUSE_API HostTensor {
  Shape shape;
  DType dtype = DType::kF32;
  std::vector<std::byte> bytes;

  std::int64_t numel() const { return shape_numel(shape); }
  // Converts `values` to `dtype` (f16 rounds to nearest even, i32 truncates toward zero and saturates,
  // NaN -> 0; bool is value != 0).
  static HostTensor from_floats(Shape shape, const std::vector<float>& values, DType dtype = DType::kF32);
  // Every element as float (bool as 0/1).
  std::vector<float> to_floats() const;
};

// A value in a graph under construction.
struct Tensor {
  int id = -1;
  bool valid() const { return id >= 0; }
};

// An attribute: a number (integers and enums too) or a list of integers (pads, perm, shape, axes).
struct Attr {
  Attr(std::string attr_name, float number) : name(std::move(attr_name)), value(number) {}
  Attr(std::string attr_name, std::vector<std::int64_t> list)
      : name(std::move(attr_name)), ints(std::move(list)), is_list(true) {}
  std::string name;
  float value = 0.0f;
  std::vector<std::int64_t> ints;
  bool is_list = false;
};

struct GraphIR;

// A graph input or output as a caller feeds or reads it.
struct TensorDesc {
  std::string name;
  Shape shape;  // -1 for a symbolic dimension (only from inspect_onnx: a Graph's are all fixed)
  DType dtype = DType::kF32;
  // Per dimension, the symbolic name the model declares for it ("batch"; "?" when it has none), "" for
  // a fixed one; empty when no dimension is symbolic (and for graphs built in C++ without names).
  std::vector<std::string> dim_names;
};
struct ExternalDevice;  // <vkfuse/interop.hpp>
class Execution;        // <vkfuse/interop.hpp>

// An immutable, validated graph. Cheap to copy.
class VKFUSE_API Graph {
 public:
  std::size_t node_count() const;
  std::size_t input_count() const;
  std::size_t output_count() const;
  // Ops in the model the graph came from (ONNX nodes, before folding); 0 for graphs built in C++.
  std::size_t source_op_count() const;
  // The inputs a run takes and the outputs it gives, in graph order, with their static shapes.
  std::vector<TensorDesc> inputs() const;
  std::vector<TensorDesc> outputs() const;

 private:
  friend class GraphBuilder;
  friend const GraphIR& graph_ir(const Graph& graph);
  std::shared_ptr<const GraphIR> ir_;
};

// Builds a graph op by op, checking shapes and dtypes as it goes. The first error is kept (and later
// calls that depend on it return invalid tensors); build() reports it, naming the node and shapes.
// Every value's shape has positive dims and fewer than 2^32 elements (an op whose output dims or
// element count would overflow int64 is an error naming the node, the op and the values). Inputs and
// outputs are found by name: each needs a non-empty name shared with no other input or output.
class VKFUSE_API GraphBuilder {
 public:
  GraphBuilder();
  ~GraphBuilder();
  GraphBuilder(GraphBuilder&&) noexcept;
  GraphBuilder& operator=(GraphBuilder&&) noexcept;

  Tensor input(std::string name, Shape shape, DType dtype = DType::kF32);
  Tensor constant(HostTensor value, std::string name = "");
  Tensor scalar(float value, DType dtype = DType::kF32);
  // `op_type` is an ONNX op type from the op table ("Add", "HardSigmoid", ...). Attributes not given
  // take their defaults; an unknown op or attribute is an error.
  Tensor op(std::string_view op_type, const std::vector<Tensor>& inputs, const std::vector<Attr>& attrs = {},
            std::string node_name = "");
  void output(Tensor tensor, std::string name);

  // For reports: how many ops the source model had (an importer sets the ONNX node count).
  void set_source_op_count(std::size_t count);
  // Names the dimensions of a graph input or output (TensorDesc::dim_names): the symbolic names its
  // model declared, "" for fixed dims.
  void set_dim_names(const std::string& io_name, std::vector<std::string> names);

  Shape shape(Tensor tensor) const;
  DType dtype(Tensor tensor) const;
  const Status& status() const;  // the first error so far, or Ok
  Result<Graph> build();         // consumes the builder's graph

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// "0.1.0": the library's version (the shared library's SONAME carries the major one).
VKFUSE_API const char* version();

struct ContextOptions {
  std::string device;              // index or name substring; "" = VKFUSE_DEVICE, else the best device
  bool validation = false;         // Khronos validation layer (VKFUSE_VALIDATION=1 also turns it on)
  // "default" = VKFUSE_CACHE_DIR or the user cache dir; "" = memory only. A folder that cannot be
  // created or written is not an error: the context caches in memory and logs one warning.
  std::string cache_dir = "default";
};

struct DeviceSummary {
  std::string name;
  std::string type;    // "discrete", "integrated", "virtual", "cpu", "other"
  std::string driver;  // driver name and info
  std::string api_version;
  std::uint32_t index = 0;  // the Vulkan enumeration index (ContextOptions::device accepts it)
  std::uint64_t device_local_bytes = 0;
  std::uint64_t max_allocation_bytes = 0;  // maxMemoryAllocationSize: the largest one buffer can be (0: unknown)
  bool default_choice = false;  // list_devices: the one Context::create picks with no device named
};

// Every Vulkan device vkfuse can run on (list_devices()[i].index selects it). kNotFound, naming the
// package to install, when there is no Vulkan driver.
VKFUSE_API Result<std::vector<DeviceSummary>> list_devices();

// The context's caches since it was created: kernels (source -> SPIR-V) and the driver's pipeline cache.
struct CacheStats {
  std::uint32_t compiles = 0;
  std::uint32_t memory_hits = 0;
  std::uint32_t disk_hits = 0;
  std::uint32_t disk_rejected = 0;  // entries not trusted (damaged, not a regular file) or refused by the driver
  // The pipeline cache file (next to the kernel cache; none when the cache is memory only): bytes of
  // driver data taken from it at creation (0 when there was none, or it was not trusted), and whether
  // one was there but not trusted (damaged, or made for another device or driver).
  std::uint64_t pipeline_cache_loaded_bytes = 0;
  bool pipeline_cache_rejected = false;
  // Of Context::create's time, the part spent reading that file and creating the driver's cache from it
  // (the rest is mostly the Vulkan instance and device).
  double pipeline_cache_create_ms = 0.0;
};

// A device, its queue, the kernel cache and a pipeline cache. Sessions keep their Context's internals
// alive. The pipeline cache is written back to its file when it grew: after each Session::create and
// when the context's internals are destroyed.
class VKFUSE_API Context {
 public:
  // vkfuse's own instance, device and compute queue.
  static Result<Context> create(const ContextOptions& options);
  // Over the application's instance, device and queue (<vkfuse/interop.hpp>), which vkfuse borrows and
  // never destroys. options.device and options.validation are ignored (the application chose the device
  // and its layers; validation_errors() is then 0: the application's own messenger sees the messages).
  // kUnsupported lists everything the device misses for what `device` requires.
  static Result<Context> wrap(const ExternalDevice& device, const ContextOptions& options = {});
  ~Context();
  Context(Context&&) noexcept;
  Context& operator=(Context&&) noexcept;

  DeviceSummary device() const;
  CacheStats cache_stats() const;
  std::uint32_t validation_errors() const;  // 0 unless validation is on and the driver reported errors
  bool borrowed() const;                    // made by wrap() over the application's device
  // Device memory vkfuse holds on this device now, over every session and execution made from it.
  std::uint64_t device_memory_bytes() const;

  struct Impl;
  const std::shared_ptr<Impl>& impl() const { return impl_; }

 private:
  explicit Context(std::shared_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

// A graph input fed from an image (Execution::bind_image, <vkfuse/interop.hpp>) instead of a tensor:
// its pre-processing runs in the loads of the kernels that read the input, with no dispatch of its own.
// The input must be float, [1, C, H, W] (or [1, H, W, C] with nhwc), C at most 4. The image is sampled
// bilinearly at the centre of each of the input's pixels mapped into it (any image size, any format
// the device samples as floats: RGBA8/BGRA8 UNORM or SRGB, R8, RGBA16F), then
// value = (sample[channel] * scale - mean[c]) / std[c].
struct ImageInput {
  std::uint32_t width = 0, height = 0;  // the image's size (the kernels are compiled for it)
  enum class Fit {
    kStretch,     // the whole image onto the input
    kCenterCrop,  // the largest centred part with the input's aspect ratio
    kLetterbox,   // the whole image, centred, aspect kept; the border reads `pad`
  };
  Fit fit = Fit::kStretch;
  // Image component read by model channel c: {0, 1, 2, 3} reads RGBA as RGB; {2, 1, 0, 3} swaps red
  // and blue (a BGR model, or a BGRA image viewed as RGBA).
  std::array<int, 4> channels{0, 1, 2, 3};
  float scale = 1.0f;  // UNORM samples are 0..1: scale 255 gives 0..255
  std::array<float, 4> mean{0.0f, 0.0f, 0.0f, 0.0f}, std{1.0f, 1.0f, 1.0f, 1.0f};
  float pad = 0.0f;    // the letterbox border's value, as the model sees it
  bool nhwc = false;
};

// A graph output written into an image (Execution::bind_image, <vkfuse/interop.hpp>) instead of a
// tensor: its post-processing runs in one kernel that reads the output [1, C, H, W] (or [1, H, W, C]
// with nhwc) and stores a W x H image; the elementwise chain the model ends with is computed in that
// kernel's loads, so where the model ends that way it adds no dispatch (`vkfuse plan` and
// Session::groups() show the store's group: "... -> ImageColor" or "... -> ImagePalette").
struct ImageOutput {
  enum class Mode {
    // Image-to-image (style transfer, super-resolution, a filter): C at most 4; texel component i is
    // value[channels[i]] * scale[i] + bias[i] (channels[i] = -1: bias[i] alone, e.g. an opaque alpha),
    // clamped to 0..1 for UNORM formats.
    kColor,
    // Segmentation: texel = palette[argmax over the C channels % palette size] (ties: the first).
    kPalette,
  };
  Mode mode = Mode::kColor;
  enum class Format { kRGBA8, kRGBA16F, kRGBA32F };  // the image's format: R8G8B8A8_UNORM, R16G16B16A16_SFLOAT, R32G32B32A32_SFLOAT
  Format format = Format::kRGBA8;
  std::array<int, 4> channels{0, 1, 2, -1};
  std::array<float, 4> scale{1.0f, 1.0f, 1.0f, 0.0f}, bias{0.0f, 0.0f, 0.0f, 1.0f};
  std::vector<std::array<float, 4>> palette;  // kPalette: RGBA in 0..1, 1 to 256 entries
  bool nhwc = false;
};

struct SessionOptions {
  bool fusion = true;     // VKFUSE_DISABLE_FUSION=1 turns it off whatever this says
  bool profile = true;    // timestamps around every dispatch, when the device has them
  // Graph inputs fed from images, by name. A kernel that reads one through a path that cannot sample
  // (a vector chain's stage) fails Session::create naming the group.
  std::map<std::string, ImageInput> image_inputs;
  // Graph outputs written into images, by name (bound with Execution::bind_image as well).
  std::map<std::string, ImageOutput> image_outputs;
  // Progress of Session::create, for a progress display: ("kernels", done, total) once per fused
  // group as its kernel is built, compiled and made a pipeline (done counts 1..total). Called from
  // the worker threads, one call at a time; keep it short.
  std::function<void(std::string_view stage, std::size_t done, std::size_t total)> progress;
};

// One fused group as compiled: what it runs and how long it took on the last run.
struct GroupInfo {
  std::string label;          // "Sub -> Mul -> Add"
  std::size_t op_count = 0;
  std::size_t inputs = 0;     // tensors read from memory
  std::size_t outputs = 0;    // tensors written to memory
  double gpu_ms = 0.0;        // last run; 0 without timestamps
};

// Where Session::create spent its time, in wall-clock milliseconds. The groups' kernels are built,
// compiled and made into pipelines on `compile_threads` threads (VKFUSE_COMPILE_THREADS, else one per
// core), one group per task: that stage has a wall time (kernels_ms) and, per step, the time summed
// over the threads (build, compile, pipelines), which exceeds the wall time when threads overlap.
struct SessionCreateStats {
  double plan_ms = 0.0;         // fusion planning
  double kernels_ms = 0.0;      // wall: the parallel stage (build + compile + pipelines)
  double build_ms = 0.0;        // summed: group kernels and their GLSL
  double compile_ms = 0.0;      // summed: kernel cache lookups, and glslang + spirv-opt + spirv-val on misses
  double pipelines_ms = 0.0;    // summed: vkCreateComputePipelines, through the context's pipeline cache
  double cache_save_ms = 0.0;   // writing the pipeline cache file (only when it grew)
  double constants_ms = 0.0;    // the constants' buffers and upload, on a thread beside the parallel stage
  double memory_ms = 0.0;       // after it: the wait for the constants, inputs' and outputs' buffers, the arena
  double record_ms = 0.0;       // descriptor sets and the command buffer
  double total_ms = 0.0;        // all of Session::create
  unsigned compile_threads = 1; // threads the parallel stage ran on
};

// A compiled graph: groups planned, kernels compiled, memory planned, one command buffer recorded.
class VKFUSE_API Session {
 public:
  // Plans, compiles and records. The kernels are built, compiled and made into pipelines on worker
  // threads of its own (see SessionCreateStats), all joined before it returns; an error names the first
  // failing group in execution order. A graph of more than 65536 nodes is refused (kInvalidArgument), and a
  // fused group holds at most 256 ops: a longer chain runs as several (kMaxGraphNodes, kMaxGroupNodes).
  static Result<Session> create(const Context& context, const Graph& graph, const SessionOptions& options);
  ~Session();
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;

  // Uploads the named inputs, submits the recorded command buffer, waits, downloads every output.
  // Each graph input must be given with its exact shape and dtype. A session with image inputs or
  // outputs runs through executions only (kInvalidArgument here).
  Result<std::map<std::string, HostTensor>> run(const std::map<std::string, HostTensor>& inputs);

  // Another execution of this compiled model (<vkfuse/interop.hpp>): its own intermediates, bindings,
  // staging and command buffer; the pipelines and weights are this session's. It keeps what it needs of
  // the session alive, so it may outlive it.
  Result<Execution> create_execution() const;

  // Benchmarking (sessions without image inputs or outputs): replays the recorded dispatches `iterations` times in one submission (no transfers)
  // and returns the mean GPU milliseconds per iteration, timed from before the first dispatch to after
  // the last (no per-group timestamps in between, so groups overlap as in run()). Needs timestamp
  // support. Uses whatever the buffers hold (the last run's inputs).
  Result<double> measure_gpu_ms(int iterations);

  // A copy: run() on another thread updates the times.
  std::vector<GroupInfo> groups() const;
  std::size_t dispatch_count() const;
  std::size_t barrier_count() const;   // pipeline barriers between the recorded dispatches (each waits for all before it)
  double last_gpu_ms() const;          // sum over groups of the last run
  bool fusion_enabled() const;
  std::uint64_t arena_bytes() const;   // device memory planned for intermediates (each execution's)
  std::uint64_t weight_bytes() const;  // device memory of the constants, shared by every execution
  const SessionCreateStats& create_stats() const;  // how long create() took, by phase

 private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vkfuse
