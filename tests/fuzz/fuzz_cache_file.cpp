// libFuzzer target: the caches' files as a damaged or hostile disk may hold them: a kernel-cache entry
// (decode_kernel_entry, whose SPIR-V must come out well-formed) and a pipeline-cache file
// (decode_pipeline_cache_file). Any input must end in a Status; a crash, a sanitizer report or a hang
// is a finding, and so is an entry that decodes to SPIR-V the structure check refuses.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <algorithm>
#include <span>

#include "backend/pipeline_cache.h"
#include "codegen/kernel_entry.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> file(reinterpret_cast<const std::byte*>(data), size);
  if (auto entry = vkfuse::decode_kernel_entry(file); entry.ok()) {
    if (!vkfuse::check_spirv_structure(entry->spirv).ok()) std::abort();
    // What decodes must encode back to the same bytes: the format has one spelling.
    const std::vector<std::byte> again = vkfuse::encode_kernel_entry(entry->key, entry->spirv);
    if (again.size() != size || !std::equal(again.begin(), again.end(), file.begin())) std::abort();
  }
  // lavapipe's vendor id; the fuzzer's comparison tracing learns to match the rest of the header.
  vkfuse::PipelineCacheIdentity device;
  device.vendor_id = 0x10005;
  (void)vkfuse::decode_pipeline_cache_file(file, device);
  return 0;
}
