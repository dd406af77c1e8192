// Buffer: one VkBuffer with its own VkDeviceMemory. An arena for planned intermediates is simply one large
// device-local Buffer; the host memory planner hands out offsets into it.
#pragma once

#include <vulkan/vulkan.h>

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "backend/device.h"
#include "backend/handle.h"
#include "backend/status.h"

namespace vkfuse {

enum class MemoryUsage {
  kDeviceLocal,  // read and written by shaders and copies only
  kUpload,       // host writes, device reads: host-visible and coherent (write-combined is fine)
  kDownload,     // device writes, host reads: host-visible, HOST_CACHED preferred (fast CPU reads)
};

const char* memory_usage_name(MemoryUsage usage);  // "device-local", "upload", "download"

// The message of an allocation that ran out of memory: what asked (`what`), the bytes it asked and with
// the driver's padding, each memory type tried with its heap (index, kind, size), what vkfuse already
// holds on the device, and the VkResult.
std::string describe_allocation_failure(std::string_view what, VkDeviceSize asked, VkDeviceSize allocation,
                                        VkResult result, const VkPhysicalDeviceMemoryProperties& properties,
                                        std::span<const uint32_t> tried, uint64_t held_bytes);

// Move-only. Usage flags are always STORAGE_BUFFER | TRANSFER_SRC | TRANSFER_DST. Host-visible buffers stay
// mapped for their whole life. Must be destroyed before the device, and only after the last submission that uses
// it has completed. Not thread-safe; distinct buffers may be used from distinct threads.
class Buffer {
 public:
  // kInvalidArgument: size 0. kUnsupported: size above maxMemoryAllocationSize. kOutOfMemory: no memory type
  // of the usage could hold it. The messages name the buffer, the size and the limit.
  static Result<Buffer> create(const DeviceContext& ctx, VkDeviceSize size, MemoryUsage usage,
                               std::string_view debug_name = "");

  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;  // releases this one's buffer, then its memory
  ~Buffer();

  VkBuffer handle() const { return buffer_.get(); }
  VkDeviceSize size() const { return size_; }  // the size asked for (the allocation may be larger)
  VkDeviceSize allocated_bytes() const { return allocated_; }  // the allocation's size
  MemoryUsage usage() const { return usage_; }
  // The start of the buffer in host memory; nullptr for device-local buffers.
  void* mapped() const { return mapped_; }
  bool host_coherent() const { return coherent_; }

  // Make host writes visible to the device (flush) / device writes visible to the host (invalidate). Needed
  // only when the memory is not HOST_COHERENT (possible for kDownload); no-ops otherwise. invalidate() goes after
  // the submission that wrote the buffer has completed, flush() before the one that reads it.
  Status flush();
  Status invalidate();

 private:
  Buffer() = default;

  VkDevice device_ = VK_NULL_HANDLE;
  std::shared_ptr<DeviceMemoryCounter> counter_;  // the device's count of vkfuse's memory
  VkDeviceSize allocated_ = 0;                    // what this buffer adds to it
  UniqueHandle<VkDeviceMemory> memory_;  // declared before the buffer: freed after it
  UniqueHandle<VkBuffer> buffer_;
  VkDeviceSize size_ = 0;
  MemoryUsage usage_ = MemoryUsage::kDeviceLocal;
  void* mapped_ = nullptr;
  bool coherent_ = true;
};

}  // namespace vkfuse
