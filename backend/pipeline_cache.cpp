#include "backend/pipeline_cache.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "backend/cache_file.h"
#include "backend/debug.h"
#include "backend/device_caps.h"
#include "backend/log.h"

namespace vkfuse {
namespace {

// File layout: FileHeader, then the driver's bytes. Fields little-endian, written byte by byte.
constexpr char kMagic[8] = {'V', 'K', 'F', 'U', 'S', 'E', 'P', '1'};
constexpr std::size_t kFileHeaderBytes = 8 + 8 + 8;  // magic, data size, checksum
// The driver's header (VkPipelineCacheHeaderVersionOne): size, version, vendorID, deviceID, UUID.
constexpr std::size_t kDriverHeaderBytes = 16 + VK_UUID_SIZE;
// Far above what a model's pipelines take (a few MiB on desktop drivers); a larger size is damage.
constexpr std::uint64_t kMaxDataBytes = 1ull << 30;

// FNV-1a 64: catches truncation and flipped bits, which is all a local cache file needs.
std::uint64_t checksum(std::span<const std::byte> bytes) {
  std::uint64_t hash = 14695981039346656037ull;
  for (std::byte b : bytes) hash = (hash ^ static_cast<std::uint64_t>(b)) * 1099511628211ull;
  return hash;
}

std::uint64_t read_le(std::span<const std::byte> bytes, std::size_t offset, std::size_t size) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < size; ++i) value |= static_cast<std::uint64_t>(bytes[offset + i]) << (8 * i);
  return value;
}

void append_le(std::vector<std::byte>& out, std::uint64_t value, std::size_t size) {
  for (std::size_t i = 0; i < size; ++i) out.push_back(static_cast<std::byte>((value >> (8 * i)) & 0xff));
}

std::string hex32(uint32_t value) {
  char text[9];
  std::snprintf(text, sizeof text, "%08x", value);
  return text;
}

}  // namespace

std::vector<std::byte> encode_pipeline_cache_file(std::span<const std::byte> driver_data) {
  std::vector<std::byte> file;
  file.reserve(kFileHeaderBytes + driver_data.size());
  for (char c : kMagic) file.push_back(static_cast<std::byte>(c));
  append_le(file, driver_data.size(), 8);
  append_le(file, checksum(driver_data), 8);
  file.insert(file.end(), driver_data.begin(), driver_data.end());
  return file;
}

Result<std::vector<std::byte>> decode_pipeline_cache_file(std::span<const std::byte> file,
                                                          const PipelineCacheIdentity& device) {
  auto reject = [](const std::string& why) { return make_error(ErrorCode::kInvalidArgument, why); };
  if (file.size() < kFileHeaderBytes) return reject("truncated header");
  if (std::memcmp(file.data(), kMagic, sizeof kMagic) != 0) return reject("not a vkfuse pipeline cache");
  const std::uint64_t data_bytes = read_le(file, 8, 8);
  if (data_bytes != file.size() - kFileHeaderBytes)
    return reject(data_bytes > file.size() - kFileHeaderBytes ? "truncated" : "trailing bytes");
  const std::span<const std::byte> data = file.subspan(kFileHeaderBytes);
  if (checksum(data) != read_le(file, 16, 8)) return reject("checksum mismatch");

  // The driver's own header, as the Vulkan spec lays it out (least significant byte first).
  if (data.size() < kDriverHeaderBytes) return reject("no driver header");
  const std::uint64_t header_size = read_le(data, 0, 4);
  if (header_size < kDriverHeaderBytes || header_size > data.size()) return reject("bad driver header size");
  if (read_le(data, 4, 4) != VK_PIPELINE_CACHE_HEADER_VERSION_ONE) return reject("other driver header version");
  if (read_le(data, 8, 4) != device.vendor_id || read_le(data, 12, 4) != device.device_id)
    return reject("made for another device");
  if (std::memcmp(data.data() + 16, device.uuid.data(), VK_UUID_SIZE) != 0)
    return reject("made for another driver (pipelineCacheUUID differs)");
  return std::vector<std::byte>(data.begin(), data.end());
}

Result<std::unique_ptr<PipelineCache>> PipelineCache::create(const DeviceContext& ctx, const std::string& directory) {
  const auto begin = std::chrono::steady_clock::now();
  std::unique_ptr<PipelineCache> cache(new PipelineCache());
  cache->device_ = ctx.device;
  std::vector<std::byte> initial;
  if (!directory.empty()) {
    VkPhysicalDeviceProperties properties{};
    vkGetPhysicalDeviceProperties(ctx.physical, &properties);
    PipelineCacheIdentity identity{properties.vendorID, properties.deviceID, {}};
    std::memcpy(identity.uuid.data(), properties.pipelineCacheUUID, VK_UUID_SIZE);
    // One file per device and driver build, so that two GPUs (or two drivers) do not take turns
    // overwriting one file.
    cache->path_ = (std::filesystem::path(directory) / ("pipelines-" + hex32(identity.vendor_id) + "-" +
                                                        hex32(identity.device_id) + "-" +
                                                        uuid_to_hex(identity.uuid) + ".vkpc"))
                       .string();
    remove_stale_temp_files(directory, ".vkpc");
    auto file = read_cache_file(cache->path_, kMaxDataBytes + kFileHeaderBytes);
    if (file.ok()) {
      auto data = decode_pipeline_cache_file(*file, identity);
      if (data.ok()) {
        initial = std::move(data).value();
      } else {
        cache->rejected_ = true;
        log_message(LogLevel::kInfo, "pipeline cache: ignoring " + cache->path_ + " (" + data.status().message() + ")");
      }
    } else if (file.status().code() != ErrorCode::kNotFound) {
      cache->rejected_ = true;
      log_message(LogLevel::kInfo, "pipeline cache: ignoring " + cache->path_ + " (" + file.status().message() + ")");
    }
  }

  VkPipelineCacheCreateInfo info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  info.initialDataSize = initial.size();
  info.pInitialData = initial.empty() ? nullptr : initial.data();
  VkPipelineCache handle = VK_NULL_HANDLE;
  VKFUSE_CHECK_VK(vkCreatePipelineCache(ctx.device, &info, nullptr, &handle));
  VkDevice device = ctx.device;
  cache->cache_ = UniqueHandle<VkPipelineCache>(handle, [device](VkPipelineCache c) {
    vkDestroyPipelineCache(device, c, nullptr);
  });
  set_debug_name(ctx, VK_OBJECT_TYPE_PIPELINE_CACHE, debug_handle(handle), "vkfuse pipeline cache");
  cache->loaded_bytes_ = initial.size();
  cache->saved_bytes_ = initial.size();
  cache->create_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin).count();
  if (!initial.empty())
    log_message(LogLevel::kInfo, "pipeline cache: loaded " + std::to_string(initial.size()) + " bytes from " + cache->path_);
  return cache;
}

Status PipelineCache::save() {
  if (path_.empty()) return {};
  std::lock_guard lock(save_mutex_);
  size_t size = 0;
  VKFUSE_CHECK_VK(vkGetPipelineCacheData(device_, cache_.get(), &size, nullptr));
  if (size <= saved_bytes_) return {};
  std::vector<std::byte> data(size);
  // VK_INCOMPLETE if the cache grew between the two calls (another thread creating a pipeline): what
  // fits is still a valid cache, and the next save writes the rest.
  const VkResult result = vkGetPipelineCacheData(device_, cache_.get(), &size, data.data());
  if (result != VK_SUCCESS && result != VK_INCOMPLETE) VKFUSE_CHECK_VK(result);
  data.resize(size);
  const std::vector<std::byte> file = encode_pipeline_cache_file(data);

  if (Status written = write_cache_file(path_, file); !written.ok())
    return make_error(ErrorCode::kIo, "pipeline cache: saving " + path_ + " FAILED (" + written.message() + ")");
  saved_bytes_ = size;
  log_message(LogLevel::kInfo, "pipeline cache: saved " + std::to_string(size) + " bytes to " + path_);
  return {};
}

}  // namespace vkfuse
