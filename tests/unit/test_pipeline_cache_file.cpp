// The pipeline cache file: the driver's bytes come back exactly, and a file that is damaged, truncated,
// not ours, or made for another device or driver is refused with the reason (never handed to a driver).
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "backend/pipeline_cache.h"

namespace vkfuse {
namespace {

PipelineCacheIdentity identity() {
  PipelineCacheIdentity id;
  id.vendor_id = 0x10de;
  id.device_id = 0x2330;
  for (std::size_t i = 0; i < id.uuid.size(); ++i) id.uuid[i] = static_cast<uint8_t>(0xa0 + i);
  return id;
}

// What a driver's vkGetPipelineCacheData returns: VkPipelineCacheHeaderVersionOne (little-endian) and
// `body` bytes of the driver's own.
std::vector<std::byte> driver_data(const PipelineCacheIdentity& id, std::size_t body) {
  std::vector<std::byte> data;
  auto put32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) data.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
  };
  put32(32);
  put32(VK_PIPELINE_CACHE_HEADER_VERSION_ONE);
  put32(id.vendor_id);
  put32(id.device_id);
  for (uint8_t b : id.uuid) data.push_back(static_cast<std::byte>(b));
  for (std::size_t i = 0; i < body; ++i) data.push_back(static_cast<std::byte>(i * 7 + 1));
  return data;
}

std::string refusal(const std::vector<std::byte>& file) {
  auto decoded = decode_pipeline_cache_file(file, identity());
  return decoded.ok() ? "accepted" : decoded.status().message();
}

}  // namespace

TEST_CASE("a pipeline cache file gives back the driver's bytes") {
  for (std::size_t body : {0, 1, 1000}) {
    const std::vector<std::byte> data = driver_data(identity(), body);
    const std::vector<std::byte> file = encode_pipeline_cache_file(data);
    CHECK(file.size() == data.size() + 24);
    auto decoded = decode_pipeline_cache_file(file, identity());
    REQUIRE_MESSAGE(decoded.ok(), decoded.status().to_string());
    CHECK(*decoded == data);
  }
}

TEST_CASE("a damaged or foreign pipeline cache file is refused with the reason") {
  const std::vector<std::byte> data = driver_data(identity(), 100);
  std::vector<std::byte> file = encode_pipeline_cache_file(data);
  auto flip = [](std::vector<std::byte> bytes, std::size_t at) {
    bytes.at(at) ^= std::byte{0x10};
    return bytes;
  };
  CHECK(refusal(flip(file, file.size() - 1)) == "checksum mismatch");  // the driver's body
  CHECK(refusal(flip(file, 24 + 9)) == "checksum mismatch");           // the driver's header
  CHECK(refusal(flip(file, 3)) == "not a vkfuse pipeline cache");
  CHECK(refusal(std::vector<std::byte>(file.begin(), file.end() - 1)) == "truncated");
  CHECK(refusal(std::vector<std::byte>(file.begin(), file.begin() + 10)) == "truncated header");
  std::vector<std::byte> longer = file;
  longer.push_back(std::byte{0});
  CHECK(refusal(longer) == "trailing bytes");
  CHECK(refusal({}) == "truncated header");

  // Intact files (checksums right) whose driver header does not fit this device.
  PipelineCacheIdentity other = identity();
  other.vendor_id = 0x1002;
  CHECK(refusal(encode_pipeline_cache_file(driver_data(other, 100))) == "made for another device");
  other = identity();
  other.device_id += 1;
  CHECK(refusal(encode_pipeline_cache_file(driver_data(other, 100))) == "made for another device");
  other = identity();
  other.uuid[15] ^= 1;
  CHECK(refusal(encode_pipeline_cache_file(driver_data(other, 100))) ==
        "made for another driver (pipelineCacheUUID differs)");
  std::vector<std::byte> bad_version = data;
  bad_version[4] = std::byte{2};
  CHECK(refusal(encode_pipeline_cache_file(bad_version)) == "other driver header version");
  std::vector<std::byte> bad_size = data;
  bad_size[0] = std::byte{16};
  CHECK(refusal(encode_pipeline_cache_file(bad_size)) == "bad driver header size");
  CHECK(refusal(encode_pipeline_cache_file(std::vector<std::byte>(data.begin(), data.begin() + 20))) ==
        "no driver header");
}

}  // namespace vkfuse
