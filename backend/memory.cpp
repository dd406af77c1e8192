#include "backend/memory.h"

#include <memory>
#include <utility>
#include <vector>

#include "backend/debug.h"
#include "backend/log.h"
#include "backend/units.h"

namespace vkfuse {
namespace {

// Flag sets tried in order: the first is the ideal, the last the minimum the usage needs.
std::vector<VkMemoryPropertyFlags> wanted_flags(MemoryUsage usage) {
  constexpr VkMemoryPropertyFlags kVisible = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
  constexpr VkMemoryPropertyFlags kCoherent = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  constexpr VkMemoryPropertyFlags kCached = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  switch (usage) {
    case MemoryUsage::kDeviceLocal:
      // Anything is correct; device-local is what is fast.
      return {VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0};
    case MemoryUsage::kUpload:
      // Coherent so that writes need no flush; uncached (write-combined) memory is ideal for streaming writes,
      // and drivers list their preferred type first, so no further preference.
      return {kVisible | kCoherent};
    case MemoryUsage::kDownload:
      // CPU reads from uncached memory are an order of magnitude slower, hence CACHED first; non-coherent cached
      // memory is handled by invalidate().
      return {kVisible | kCached | kCoherent, kVisible | kCached, kVisible | kCoherent, kVisible};
  }
  return {0};
}

// Memory types vkfuse must never pick: protected memory needs a protected queue, lazily allocated memory is for
// transient attachments, and the AMD coherent/uncached types need a device feature we do not enable.
constexpr VkMemoryPropertyFlags kExcluded = VK_MEMORY_PROPERTY_PROTECTED_BIT | VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT |
                                            VK_MEMORY_PROPERTY_DEVICE_COHERENT_BIT_AMD |
                                            VK_MEMORY_PROPERTY_DEVICE_UNCACHED_BIT_AMD;

// Candidate memory type indices, best first, without duplicates.
std::vector<uint32_t> candidate_types(const VkPhysicalDeviceMemoryProperties& properties, uint32_t type_bits,
                                      VkDeviceSize size, MemoryUsage usage) {
  std::vector<uint32_t> candidates;
  for (VkMemoryPropertyFlags flags : wanted_flags(usage)) {
    for (uint32_t i = 0; i < properties.memoryTypeCount; ++i) {
      const VkMemoryType& type = properties.memoryTypes[i];
      if (!(type_bits & (1u << i)) || (type.propertyFlags & kExcluded) || (type.propertyFlags & flags) != flags)
        continue;
      if (properties.memoryHeaps[type.heapIndex].size < size) continue;  // could never fit
      bool seen = false;
      for (uint32_t c : candidates) seen = seen || c == i;
      if (!seen) candidates.push_back(i);
    }
  }
  return candidates;
}

}  // namespace

std::string describe_allocation_failure(std::string_view what, VkDeviceSize asked, VkDeviceSize allocation,
                                        VkResult result, const VkPhysicalDeviceMemoryProperties& properties,
                                        std::span<const uint32_t> tried, uint64_t held_bytes) {
  std::string text = std::string(result == VK_ERROR_OUT_OF_HOST_MEMORY ? "out of host memory" : "out of device memory") +
                     " for " + std::string(what) + ": it asked for " + describe_bytes(asked);
  if (allocation != asked) text += ", " + std::to_string(allocation) + " bytes with the driver's padding";
  text += "; tried ";
  for (std::size_t i = 0; i < tried.size(); ++i) {
    const uint32_t type = tried[i];
    if (type >= properties.memoryTypeCount) continue;
    const uint32_t heap = properties.memoryTypes[type].heapIndex;
    const bool local = properties.memoryHeaps[heap].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT;
    text += std::string(i == 0 ? "" : ", ") + "memory type " + std::to_string(type) + " in heap " + std::to_string(heap) +
            " (" + (local ? "device-local, " : "host, ") + describe_bytes(properties.memoryHeaps[heap].size) + ")";
  }
  if (tried.empty()) text += "no memory type";
  text += "; vkfuse holds " + describe_bytes(held_bytes) + " on this device (vkAllocateMemory returned " +
          vk_result_text(result) + ")";
  return text;
}

const char* memory_usage_name(MemoryUsage usage) {
  switch (usage) {
    case MemoryUsage::kDeviceLocal: return "device-local";
    case MemoryUsage::kUpload: return "upload";
    case MemoryUsage::kDownload: return "download";
  }
  return "unknown";
}

Result<Buffer> Buffer::create(const DeviceContext& ctx, VkDeviceSize size, MemoryUsage usage,
                              std::string_view debug_name) {
  const std::string what = std::string(memory_usage_name(usage)) + " buffer" +
                           (debug_name.empty() ? std::string() : " '" + std::string(debug_name) + "'");
  if (size == 0) return make_error(ErrorCode::kInvalidArgument, what + ": size is 0");
  const uint64_t limit = ctx.caps.max_memory_allocation_size;
  if (limit != 0 && size > limit) {
    return make_error(ErrorCode::kUnsupported, what + " needs " + describe_bytes(size) +
                                                   ", more than this device allows in one allocation: " +
                                                   describe_bytes(limit) + " (maxMemoryAllocationSize)");
  }

  Buffer buffer;
  buffer.device_ = ctx.device;
  buffer.size_ = size;
  buffer.usage_ = usage;

  VkBufferCreateInfo info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  info.size = size;
  info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;  // one queue uses it
  VkBuffer handle = VK_NULL_HANDLE;
  VKFUSE_CHECK_VK(vkCreateBuffer(ctx.device, &info, nullptr, &handle));
  VkDevice device = ctx.device;
  buffer.buffer_ = UniqueHandle<VkBuffer>(handle, [device](VkBuffer b) { vkDestroyBuffer(device, b, nullptr); });

  VkMemoryRequirements requirements{};
  vkGetBufferMemoryRequirements(ctx.device, handle, &requirements);
  if (limit != 0 && requirements.size > limit) {
    return make_error(ErrorCode::kUnsupported, what + " needs an allocation of " + describe_bytes(requirements.size) +
                                                   " (with the driver's padding), more than maxMemoryAllocationSize (" +
                                                   describe_bytes(limit) + ")");
  }

  VkPhysicalDeviceMemoryProperties properties{};
  vkGetPhysicalDeviceMemoryProperties(ctx.physical, &properties);
  const std::vector<uint32_t> candidates =
      candidate_types(properties, requirements.memoryTypeBits, requirements.size, usage);
  if (candidates.empty()) {
    return make_error(ErrorCode::kOutOfMemory, what + " of " + describe_bytes(size) +
                                                   ": no memory type of this device suits the usage and has a heap "
                                                   "that large");
  }

  // Out of memory in one type (a full heap) is not the end: the next candidate may live in another heap.
  VkDeviceMemory memory = VK_NULL_HANDLE;
  uint32_t chosen = 0;
  VkResult allocated = VK_ERROR_OUT_OF_DEVICE_MEMORY;
  for (uint32_t type : candidates) {
    VkMemoryAllocateInfo allocate{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    allocate.allocationSize = requirements.size;
    allocate.memoryTypeIndex = type;
    allocated = vkAllocateMemory(ctx.device, &allocate, nullptr, &memory);
    if (allocated == VK_SUCCESS) {
      chosen = type;
      break;
    }
    if (allocated != VK_ERROR_OUT_OF_DEVICE_MEMORY && allocated != VK_ERROR_OUT_OF_HOST_MEMORY) break;
  }
  if (allocated == VK_ERROR_OUT_OF_DEVICE_MEMORY || allocated == VK_ERROR_OUT_OF_HOST_MEMORY) {
    return make_error(ErrorCode::kOutOfMemory,
                      describe_allocation_failure(what, size, requirements.size, allocated, properties, candidates,
                                                  ctx.memory ? ctx.memory->bytes.load() : 0));
  }
  VKFUSE_CHECK_VK(allocated);
  buffer.memory_ =
      UniqueHandle<VkDeviceMemory>(memory, [device](VkDeviceMemory m) { vkFreeMemory(device, m, nullptr); });
  VKFUSE_CHECK_VK(vkBindBufferMemory(ctx.device, handle, memory, 0));
  if (ctx.memory) {
    buffer.counter_ = ctx.memory;
    buffer.allocated_ = requirements.size;
    ctx.memory->bytes += requirements.size;
  }

  const VkMemoryPropertyFlags flags = properties.memoryTypes[chosen].propertyFlags;
  buffer.coherent_ = (flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) != 0;
  if (usage != MemoryUsage::kDeviceLocal) {
    // Mapped once for the buffer's life; vkFreeMemory unmaps implicitly.
    VKFUSE_CHECK_VK(vkMapMemory(ctx.device, memory, 0, VK_WHOLE_SIZE, 0, &buffer.mapped_));
  }
  if (!debug_name.empty()) {
    set_debug_name(ctx, VK_OBJECT_TYPE_BUFFER, debug_handle(handle), debug_name);
    set_debug_name(ctx, VK_OBJECT_TYPE_DEVICE_MEMORY, debug_handle(memory), debug_name);
  }
  if (log_enabled(LogLevel::kDebug)) {
    log_message(LogLevel::kDebug, what + ": " + describe_bytes(size) + " in memory type " + std::to_string(chosen));
  }
  return buffer;
}

Buffer::Buffer(Buffer&& other) noexcept
    : device_(std::exchange(other.device_, VK_NULL_HANDLE)),
      counter_(std::move(other.counter_)),
      allocated_(std::exchange(other.allocated_, 0)),
      memory_(std::move(other.memory_)),
      buffer_(std::move(other.buffer_)),
      size_(std::exchange(other.size_, 0)),
      usage_(other.usage_),
      mapped_(std::exchange(other.mapped_, nullptr)),
      coherent_(other.coherent_) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    // A member-wise assignment would free the memory before destroying the buffer bound to it.
    std::destroy_at(this);
    std::construct_at(this, std::move(other));
  }
  return *this;
}

Buffer::~Buffer() {
  if (counter_) counter_->bytes -= allocated_;
}

Status Buffer::flush() {
  if (mapped_ == nullptr || coherent_) return {};
  // Offset 0 and VK_WHOLE_SIZE satisfy the nonCoherentAtomSize alignment rules without knowing the atom.
  VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
  range.memory = memory_.get();
  range.offset = 0;
  range.size = VK_WHOLE_SIZE;
  VKFUSE_CHECK_VK(vkFlushMappedMemoryRanges(device_, 1, &range));
  return {};
}

Status Buffer::invalidate() {
  if (mapped_ == nullptr || coherent_) return {};
  VkMappedMemoryRange range{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
  range.memory = memory_.get();
  range.offset = 0;
  range.size = VK_WHOLE_SIZE;
  VKFUSE_CHECK_VK(vkInvalidateMappedMemoryRanges(device_, 1, &range));
  return {};
}

}  // namespace vkfuse
