// vkfuse inside an application's Vulkan: its device and queue, its buffers, its command buffers and
// semaphores. Include this (it includes <vulkan/vulkan.h>) where the application owns the GPU; plain
// host-tensor use needs only <vkfuse/vkfuse.hpp>.
//
//   vkfuse::ExternalDevice app{instance, physical, device, family, queue};
//   app.device_create_info = &the_info_the_device_was_created_with;   // what the app enabled
//   auto context = vkfuse::Context::wrap(app, {});    // fails listing every missing feature
//   auto session = vkfuse::Session::create(*context, graph, {});      // per model: pipelines, weights
//   auto frame = session->create_execution();         // per frame in flight: arena, bindings, commands
//   frame->bind("input", {my_buffer, 0, bytes});       // the app's VkBuffer, read where it lies
//   frame->bind("output", {out_buffer, 0, out_bytes});
//   frame->record(cmd, sync);                          // into the app's command buffer, with barriers
//
// Ownership: vkfuse never destroys a borrowed object (instance, device, queue, buffers, command
// buffers, semaphores). The application keeps them alive for as long as a Context, Session or
// Execution that uses them exists, and destroys its device only after every vkfuse object made on it.
// Destroying a bound buffer while an execution may still run on the GPU is undefined (Vulkan's rule);
// vkfuse cannot detect it.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <vkfuse/vkfuse.hpp>

namespace vkfuse {

// Vulkan requires that one thread at a time submits to a VkQueue. When the application submits to the
// queue it lends vkfuse from other threads too, it passes a lock that vkfuse takes around each of its
// vkQueueSubmit calls (and nothing else): lock, submit, unlock on one thread, never nested. That thread
// may be one of vkfuse's own (Session::create uploads the weights from a worker thread): a lock tied to
// the caller's thread, or one the caller holds while calling vkfuse, deadlocks. Without one (both null) the application promises that no other thread
// submits to that queue while a vkfuse call that submits runs (Execution::submit, Session::run, and
// Session::create, which uploads the weights).
struct QueueLock {
  void* user = nullptr;
  void (*lock)(void* user) = nullptr;
  void (*unlock)(void* user) = nullptr;
};

// The application's Vulkan objects for Context::wrap. Borrowed, never destroyed by vkfuse.
struct ExternalDevice {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  uint32_t queue_family_index = 0;  // must support compute
  VkQueue queue = VK_NULL_HANDLE;   // of that family
  // The apiVersion of the application's VkInstance (VkApplicationInfo::apiVersion; 1.0 is refused).
  uint32_t instance_api_version = VK_API_VERSION_1_1;
  // The VkDeviceCreateInfo the device was created with (read during wrap only): its enabled extensions
  // and its feature structs (VkPhysicalDeviceFeatures2, Vulkan11/12Features, 16/8-bit storage, float16,
  // cooperative matrix, memory model) tell vkfuse what it may use. Null means Vulkan 1.1 core with no
  // optional feature: fp32 only, no bool tensors.
  const VkDeviceCreateInfo* device_create_info = nullptr;
  // The application's loader entry point (volk, a custom loader): vkfuse checks that it resolves the
  // same vkGetDeviceProcAddr as the system loader it is linked to, and refuses the device otherwise.
  PFN_vkGetInstanceProcAddr get_instance_proc_addr = nullptr;
  bool debug_utils = false;  // VK_EXT_debug_utils is enabled on the instance: vkfuse names its objects
  QueueLock queue_lock;
  // What the application will ask of vkfuse: wrap fails, listing each missing feature and how to
  // enable it, when the device cannot do one of these. (Asked for later without being required here,
  // Session::create fails then, naming the group and the feature.)
  bool require_fp16 = false;       // f16 tensors: storageBuffer16BitAccess
  bool require_bool = false;       // bool tensors (comparisons, masks): storageBuffer8BitAccess
  bool require_timeline = false;   // timeline semaphores in Execution::submit: timelineSemaphore
};

// A byte range of a VkBuffer, as a graph input or output. The buffer needs
// VK_BUFFER_USAGE_STORAGE_BUFFER_BIT (vkfuse's kernels read and write it as a storage buffer), an
// offset that is a multiple of minStorageBufferOffsetAlignment (and of 16), and `size` of at least the
// tensor's bytes (dtype size x elements, row-major, as HostTensor). vkfuse checks size against the
// buffer's memory requirements, which may be a little larger than the buffer: `size` must be true.
struct DeviceTensor {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;
  // The buffer's usage flags where the application knows them: vkfuse then checks STORAGE_BUFFER is
  // among them (0: not checked; the validation layer reports a wrong buffer).
  VkBufferUsageFlags usage = 0;
};

// An image as an image input (SessionOptions::image_inputs) or output (image_outputs).
// An input is a view vkfuse samples (the view's format decides how: UNORM and SRGB read 0..1, SRGB
// decoded to linear). It needs VK_IMAGE_USAGE_SAMPLED_BIT and is in `layout` when the work starts (its
// last writer is in RecordSync::before); record() moves it to SHADER_READ_ONLY_OPTIMAL first where
// `layout` is another one (GENERAL stays), and to `final_layout` after, ordered before any later use on
// the queue. `format` and `extent`, where given (not UNDEFINED / 0), are checked: linear filtering must
// be supported for the format, and the extent must be the ImageInput's.
// An output is a storage image vkfuse writes whole: it needs VK_IMAGE_USAGE_STORAGE_BIT, the format of
// ImageOutput::format and the output's W x H. record() moves it from `layout` (UNDEFINED allowed: its
// contents are dropped) to GENERAL, and after the kernels to `final_layout` (SHADER_READ_ONLY_OPTIMAL
// for a draw that samples it), made visible to RecordSync::after. `format` and `extent`, where given,
// are checked against the session's.
// submit() does no transitions: an input's `layout` and `final_layout` must then be the same, and one a
// shader reads; an output's both GENERAL.
struct ImageBinding {
  VkImage image = VK_NULL_HANDLE;
  VkImageView view = VK_NULL_HANDLE;  // a 2D view of mip level 0, layer 0
  VkImageLayout layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
  VkImageLayout final_layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
  VkImageAspectFlags aspect = VK_IMAGE_ASPECT_COLOR_BIT;
  VkFormat format = VK_FORMAT_UNDEFINED;  // the view's format
  VkExtent2D extent{0, 0};
};

// One side of a dependency: a pipeline stage and the memory accesses made there.
struct Access {
  VkPipelineStageFlags stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
  VkAccessFlags access = VK_ACCESS_SHADER_WRITE_BIT;
};

// Execution::record's dependencies on the application's work in the same queue. vkfuse records one
// barrier before its dispatches (from `before`: whatever last wrote its inputs or read its outputs)
// and one after them (to `after`: whatever reads its outputs next, or writes its inputs next).
struct RecordSync {
  Access before{VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
  Access after{VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
               VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT};
};

// A semaphore an Execution::submit waits on (at `stage`) or signals. `value` is for timeline
// semaphores (VK_SEMAPHORE_TYPE_TIMELINE) and ignored for binary ones.
struct SemaphoreWait {
  VkSemaphore semaphore = VK_NULL_HANDLE;
  uint64_t value = 0;
  VkPipelineStageFlags stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
};
struct SemaphoreSignal {
  VkSemaphore semaphore = VK_NULL_HANDLE;
  uint64_t value = 0;
};
struct SubmitSync {
  std::vector<SemaphoreWait> waits;
  std::vector<SemaphoreSignal> signals;
};

// What Execution::submit returns to wait on later: on the host (Execution::wait), or on the GPU in the
// application's own next submit (the timeline semaphore reaches `value` when the work is done; null
// when the device has no timeline semaphores). The semaphore is the execution's: destroy the
// execution only once no pending work of the application's waits on it.
struct SubmitTicket {
  VkSemaphore timeline = VK_NULL_HANDLE;
  uint64_t value = 0;
};

// The Vulkan objects a context runs on: its own (Context::create) or the application's (wrap). For an
// application that lets vkfuse pick the device and then allocates, records and submits beside it.
// Valid while the context lives; never destroy the ones vkfuse created. Submit to `queue` only with
// `queue_lock` held (vkfuse takes it around its own submits).
struct VulkanHandles {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical_device = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  uint32_t queue_family_index = 0;
  VkQueue queue = VK_NULL_HANDLE;
  QueueLock queue_lock;
};
VKFUSE_API VulkanHandles vulkan_handles(const Context& context);

// Device memory one Execution holds, by part, in allocated bytes (Session::weight_bytes is the shared
// part; Context::device_memory_bytes counts the same allocations).
struct ExecutionMemory {
  std::uint64_t arena_bytes = 0;    // intermediates
  std::uint64_t io_bytes = 0;       // vkfuse's own buffers of inputs and outputs (none for bound ones)
  std::uint64_t staging_bytes = 0;  // host-visible buffers of host-resident inputs and outputs
  std::uint64_t scratch_bytes = 0;  // split-K counters and partial sums
  std::uint64_t total() const { return arena_bytes + io_bytes + staging_bytes + scratch_bytes; }
};

// One execution of a compiled model: its intermediates, the buffers its inputs and outputs live in,
// its descriptor sets and its command buffer. Make one per frame in flight (Session::create_execution);
// they share the session's pipelines and weights.
//
// Each graph input and output lives in one of three places, host-resident until told otherwise:
// - host: vkfuse's device buffer, filled from (or read back into) a staging buffer by each submit();
//   upload() and download() move the data, run() does both;
// - device: vkfuse's device buffer, which the application reads or writes itself (device_tensor());
// - bound: the application's buffer (bind()), read or written where it lies.
// A run whose inputs and outputs are all device or bound copies nothing through the host:
// last_staging_bytes() is 0.
//
// Thread-safety: calls on one execution are serialized (a call from another thread waits for the one
// running, wait() included), so it is never corrupted; interleaving upload/submit/download from several
// threads is still the application's to order. Executions of one session, and sessions of one
// context, may be used on different threads at once. Misuse fails with kInvalidArgument and changes nothing: an unknown name, a buffer too small or
// misaligned, anything but wait() while a submit() is in flight, record() with host-resident tensors.
// Not detectable, so documented: binding again, or destroying the execution, while a command buffer
// holding its record() is pending on the GPU.
class VKFUSE_API Execution {
 public:
  ~Execution();  // waits for its own submission in flight, if any
  Execution(Execution&&) noexcept;
  Execution& operator=(Execution&&) noexcept;

  // The graph's inputs and outputs by name, in graph order.
  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;

  // Makes the input or output `name` read or write the application's buffer (see DeviceTensor).
  Status bind(std::string_view name, const DeviceTensor& tensor);
  // Feeds the image input `name` (SessionOptions::image_inputs) from `image`, or makes the image output
  // `name` (SessionOptions::image_outputs) write into it.
  Status bind_image(std::string_view name, const ImageBinding& image);
  // Makes `name` device-resident in vkfuse's own buffer and returns it (valid for the execution's life,
  // until bind() gives the name another buffer).
  Result<DeviceTensor> device_tensor(std::string_view name);

  // Host-resident tensors: stage an input for the next submit(); read an output of the last completed
  // submit() (kNotReady while it runs).
  Status upload(std::string_view name, const HostTensor& tensor);
  Result<HostTensor> download(std::string_view name);

  // Records the model into the application's command buffer (begun, outside a render pass, of the
  // context's queue family) between `sync.before` and `sync.after`: one barrier each, bound images'
  // layout transitions, vkfuse's dispatches and their barriers, and (profile on) a query-pool reset and
  // two timestamps; no wait of any kind. It leaves vkfuse's compute pipeline and descriptor set bound:
  // the application binds its own again. Every input and output must be device, bound or an image.
  // The application submits the buffer; the execution must not be recorded or submitted again until
  // that work is done. On failure the buffer may hold part of the recording: reset it.
  Status record(VkCommandBuffer command_buffer, const RecordSync& sync = {});

  // Submits the model on the context's queue without waiting: host inputs are copied in, host outputs
  // copied out. The returned ticket (and wait()) say when it is done.
  Result<SubmitTicket> submit(const SubmitSync& sync = {});
  // Waits for this execution's submit() (at once if none); kNotReady on timeout, work still in flight.
  Status wait(std::uint64_t timeout_ns = UINT64_MAX);
  // Whether this execution's submit() is still running (asks the fence).
  bool in_flight();

  // The blocking path: upload every host-resident input from `inputs`, submit, wait, download every
  // host-resident output. Device and bound tensors must not be in `inputs`.
  Result<std::map<std::string, HostTensor>> run(const std::map<std::string, HostTensor>& inputs);

  // GPU milliseconds of the last submit() (kNotReady while it runs) or record() (timestamps around its
  // dispatches; valid once the application has waited for that command buffer: before it has run, the
  // queries may still hold the previous run's times). kUnsupported without timestamps.
  Result<double> last_gpu_ms();
  // Bytes the last submit() or run() moved through staging (0 when every tensor is device or bound,
  // and after record()).
  std::uint64_t last_staging_bytes() const;
  ExecutionMemory memory() const;
  std::size_t dispatch_count() const;

  struct Impl;

 private:
  friend class Session;
  explicit Execution(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vkfuse
