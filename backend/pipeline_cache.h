// PipelineCache: one VkPipelineCache for a device, kept in a file so that a later process skips the
// driver's SPIR-V -> machine code step. The file wraps the driver's blob in vkfuse's own header (magic,
// size, checksum): drivers check their header but need not survive a damaged body, so a file is handed
// to the driver only when the checksum holds and the driver's header names this device (vendorID,
// deviceID, pipelineCacheUUID). Anything else is ignored (logged at info level), never an error.
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "backend/device.h"
#include "backend/handle.h"
#include "backend/status.h"

namespace vkfuse {

// What a driver's pipeline cache header (VkPipelineCacheHeaderVersionOne) must say to be used here.
struct PipelineCacheIdentity {
  uint32_t vendor_id = 0, device_id = 0;
  std::array<uint8_t, VK_UUID_SIZE> uuid{};  // VkPhysicalDeviceProperties::pipelineCacheUUID
};

// The file's bytes around `driver_data` (from vkGetPipelineCacheData).
std::vector<std::byte> encode_pipeline_cache_file(std::span<const std::byte> driver_data);
// The driver data inside `file`, when it is intact and made for `device`; otherwise kInvalidArgument
// saying why (truncated, not a vkfuse pipeline cache, checksum mismatch, other device, ...).
Result<std::vector<std::byte>> decode_pipeline_cache_file(std::span<const std::byte> file,
                                                          const PipelineCacheIdentity& device);

// Thread-safety: handle() may be passed to vkCreateComputePipelines from many threads at once (Vulkan
// pipeline caches are internally synchronized); save() may be called from any thread. Must be
// destroyed before the device.
class PipelineCache {
 public:
  // `directory` "": memory only (save() does nothing). Otherwise the file is
  // <directory>/pipelines-<vendor>-<device>-<pipelineCacheUUID>.vkpc, read now if it is there (only a
  // regular file, never waited on); temporary files that crashed runs left are removed.
  // Fails only when vkCreatePipelineCache does.
  static Result<std::unique_ptr<PipelineCache>> create(const DeviceContext& ctx, const std::string& directory);

  VkPipelineCache handle() const { return cache_.get(); }

  // Writes the cache to its file (backend/cache_file.h: a temporary file renamed over the old one, so a
  // reader never sees half a file) when the driver's data is larger than what was loaded or last saved;
  // logs "saved" at info level only once the file is in place. kIo saying the save FAILED and why (a full
  // disk, say) when it is not, and no temporary file is left: callers log it as a warning, since a cache
  // that is not saved costs time, not correctness. A later save tries again.
  Status save();

  const std::string& path() const { return path_; }  // "" when memory only
  std::uint64_t loaded_bytes() const { return loaded_bytes_; }  // driver data taken from the file (0: none)
  bool rejected() const { return rejected_; }  // a file was there but was not trusted
  double create_ms() const { return create_ms_; }  // reading the file and creating the driver's cache

 private:
  PipelineCache() = default;

  VkDevice device_ = VK_NULL_HANDLE;
  UniqueHandle<VkPipelineCache> cache_;
  std::string path_;
  std::uint64_t loaded_bytes_ = 0;
  bool rejected_ = false;
  double create_ms_ = 0.0;
  std::mutex save_mutex_;
  std::uint64_t saved_bytes_ = 0;  // size of the data in the file as far as this process knows
};

}  // namespace vkfuse
