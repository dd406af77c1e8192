// Fault messages: sizes and timeouts in units a reader takes in, every VkResult under its own name and
// the error code it stands for, an out-of-memory error that gives the bytes and the heaps, a failing
// device enumeration that says so, and a graph too large for a device refused before any work.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "backend/device.h"
#include "backend/memory.h"
#include "backend/status.h"
#include "backend/units.h"
#include "host/device_fit.h"

namespace vkfuse {

TEST_CASE("sizes keep their exact bytes and gain a unit") {
  CHECK(describe_bytes(0) == "0 bytes");
  CHECK(describe_bytes(1) == "1 byte");
  CHECK(describe_bytes(4) == "4 bytes");
  CHECK(describe_bytes(1023) == "1023 bytes");
  CHECK(describe_bytes(1536) == "1536 bytes (1.5 KiB)");
  CHECK(describe_bytes(52428) == "52428 bytes (51.2 KiB)");  // once "0.0 MiB"
  CHECK(describe_bytes(std::uint64_t{3} << 20) == "3145728 bytes (3.0 MiB)");
  CHECK(describe_bytes(std::uint64_t{4} << 30) == "4294967296 bytes (4.0 GiB)");
  CHECK(describe_bytes(std::numeric_limits<std::uint64_t>::max()) == "18446744073709551615 bytes (16.0 EiB)");
}

TEST_CASE("timeouts are given in a readable unit, and UINT64_MAX as no timeout") {
  CHECK(describe_timeout_ns(std::numeric_limits<std::uint64_t>::max()) == "no timeout");
  CHECK(describe_timeout_ns(0) == "0 ns");
  CHECK(describe_timeout_ns(999) == "999 ns");
  CHECK(describe_timeout_ns(1500) == "1.5 us");
  CHECK(describe_timeout_ns(20'000'000) == "20.0 ms");
  CHECK(describe_timeout_ns(2'500'000'000) == "2.50 s");
  CHECK(describe_timeout_ns(86'400'000'000'000) == "86400 s");
}

TEST_CASE("each VkResult has its own name and the error code it stands for") {
  struct Case {
    VkResult result;
    const char* name;
    ErrorCode code;
  };
  const std::vector<Case> cases = {
      {VK_SUCCESS, "VK_SUCCESS", ErrorCode::kOk},
      {VK_INCOMPLETE, "VK_INCOMPLETE", ErrorCode::kOk},
      {VK_NOT_READY, "VK_NOT_READY", ErrorCode::kNotReady},
      {VK_TIMEOUT, "VK_TIMEOUT", ErrorCode::kNotReady},
      {VK_ERROR_DEVICE_LOST, "VK_ERROR_DEVICE_LOST", ErrorCode::kDeviceLost},
      {VK_ERROR_OUT_OF_HOST_MEMORY, "VK_ERROR_OUT_OF_HOST_MEMORY", ErrorCode::kOutOfMemory},
      {VK_ERROR_OUT_OF_DEVICE_MEMORY, "VK_ERROR_OUT_OF_DEVICE_MEMORY", ErrorCode::kOutOfMemory},
      {VK_ERROR_OUT_OF_POOL_MEMORY, "VK_ERROR_OUT_OF_POOL_MEMORY", ErrorCode::kOutOfMemory},
      {VK_ERROR_FRAGMENTED_POOL, "VK_ERROR_FRAGMENTED_POOL", ErrorCode::kOutOfMemory},
      {VK_ERROR_FRAGMENTATION, "VK_ERROR_FRAGMENTATION", ErrorCode::kOutOfMemory},
      {VK_ERROR_MEMORY_MAP_FAILED, "VK_ERROR_MEMORY_MAP_FAILED", ErrorCode::kOutOfMemory},
      {VK_ERROR_TOO_MANY_OBJECTS, "VK_ERROR_TOO_MANY_OBJECTS", ErrorCode::kOutOfMemory},
      {VK_ERROR_EXTENSION_NOT_PRESENT, "VK_ERROR_EXTENSION_NOT_PRESENT", ErrorCode::kUnsupported},
      {VK_ERROR_FEATURE_NOT_PRESENT, "VK_ERROR_FEATURE_NOT_PRESENT", ErrorCode::kUnsupported},
      {VK_ERROR_LAYER_NOT_PRESENT, "VK_ERROR_LAYER_NOT_PRESENT", ErrorCode::kUnsupported},
      {VK_ERROR_INCOMPATIBLE_DRIVER, "VK_ERROR_INCOMPATIBLE_DRIVER", ErrorCode::kUnsupported},
      {VK_ERROR_FORMAT_NOT_SUPPORTED, "VK_ERROR_FORMAT_NOT_SUPPORTED", ErrorCode::kUnsupported},
      {VK_ERROR_INVALID_SHADER_NV, "VK_ERROR_INVALID_SHADER_NV", ErrorCode::kCompile},
      {VK_ERROR_INVALID_EXTERNAL_HANDLE, "VK_ERROR_INVALID_EXTERNAL_HANDLE", ErrorCode::kInvalidArgument},
      {VK_ERROR_INITIALIZATION_FAILED, "VK_ERROR_INITIALIZATION_FAILED", ErrorCode::kVulkan},
      {VK_ERROR_UNKNOWN, "VK_ERROR_UNKNOWN", ErrorCode::kVulkan},
      {VK_ERROR_OUT_OF_DATE_KHR, "VK_ERROR_OUT_OF_DATE_KHR", ErrorCode::kVulkan},
      {VK_ERROR_SURFACE_LOST_KHR, "VK_ERROR_SURFACE_LOST_KHR", ErrorCode::kVulkan},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    REQUIRE(vk_result_name(c.result) != nullptr);
    CHECK(std::string(vk_result_name(c.result)) == c.name);
    CHECK(vk_result_code(c.result) == c.code);
    const Status error = vk_error(c.result, "vkSomething(device)", "/src/backend/thing.cpp", 42);
    CHECK(error.code() == (c.code == ErrorCode::kOk ? ErrorCode::kVulkan : c.code));
    CHECK(error.message() == std::string("vkSomething(device) returned ") + c.name + " (thing.cpp:42)");
  }
  CHECK(vk_result_name(static_cast<VkResult>(-123456)) == nullptr);
  CHECK(vk_result_text(static_cast<VkResult>(-123456)) == "VkResult -123456");
  CHECK(vk_error(static_cast<VkResult>(-123456), "vkX()", "x.cpp", 1).code() == ErrorCode::kVulkan);
}

TEST_CASE("a failing device enumeration says so with its VkResult, not how to install a driver") {
  for (VkResult result : {VK_ERROR_INITIALIZATION_FAILED, VK_ERROR_OUT_OF_HOST_MEMORY}) {
    const Status error = enumeration_failure(result);
    const std::string name = vk_result_text(result);
    CAPTURE(name);
    CHECK(error.message().rfind("listing the Vulkan devices failed: vkEnumeratePhysicalDevices returned " + name, 0) == 0);
    CHECK(error.message().find("mesa-vulkan-drivers") == std::string::npos);
    CHECK(error.code() != ErrorCode::kNotFound);
  }
  CHECK(enumeration_failure(VK_ERROR_OUT_OF_HOST_MEMORY).code() == ErrorCode::kOutOfMemory);
  CHECK(enumeration_failure(VK_ERROR_INITIALIZATION_FAILED).message().find("VK_LOADER_DEBUG") != std::string::npos);
}

TEST_CASE("an out-of-memory error gives the bytes asked, the heaps tried and what vkfuse holds") {
  VkPhysicalDeviceMemoryProperties properties{};
  properties.memoryTypeCount = 2;
  properties.memoryTypes[0] = {VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0};
  properties.memoryTypes[1] = {VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT, 1};
  properties.memoryHeapCount = 2;
  properties.memoryHeaps[0] = {std::uint64_t{8} << 30, VK_MEMORY_HEAP_DEVICE_LOCAL_BIT};
  properties.memoryHeaps[1] = {std::uint64_t{16} << 30, 0};
  const std::vector<uint32_t> tried = {0, 1};
  const std::string message = describe_allocation_failure("device-local buffer 'x'", 4096, 4352,
                                                          VK_ERROR_OUT_OF_DEVICE_MEMORY, properties, tried,
                                                          std::uint64_t{3} << 20);
  CHECK(message ==
        "out of device memory for device-local buffer 'x': it asked for 4096 bytes (4.0 KiB), 4352 bytes with the "
        "driver's padding; tried memory type 0 in heap 0 (device-local, 8589934592 bytes (8.0 GiB)), memory type 1 "
        "in heap 1 (host, 17179869184 bytes (16.0 GiB)); vkfuse holds 3145728 bytes (3.0 MiB) on this device "
        "(vkAllocateMemory returned VK_ERROR_OUT_OF_DEVICE_MEMORY)");
  const std::string host = describe_allocation_failure("upload buffer", 100, 100, VK_ERROR_OUT_OF_HOST_MEMORY,
                                                       properties, std::vector<uint32_t>{1}, 0);
  CHECK(host.rfind("out of host memory for upload buffer: it asked for 100 bytes; tried memory type 1 in heap 1", 0) == 0);
}

TEST_CASE("a graph whose inputs or outputs a device cannot hold is refused with the tensor and the limit") {
  GraphBuilder b;
  const Tensor x = b.input("x", {1024, 1024});  // 4 MiB of f32
  b.output(b.op("Relu", {x}), "y");
  auto graph = b.build();
  REQUIRE(graph.ok());
  DeviceSummary device;
  device.name = "Tiny GPU";
  device.max_allocation_bytes = std::uint64_t{8} << 20;
  device.device_local_bytes = std::uint64_t{16} << 20;
  CHECK(check_graph_fits(graph_ir(*graph), device).ok());

  device.max_allocation_bytes = std::uint64_t{2} << 20;
  Status refused = check_graph_fits(graph_ir(*graph), device);
  CHECK(refused.code() == ErrorCode::kUnsupported);
  CHECK(refused.message() ==
        "input 'x' f32[1024,1024] takes 4194304 bytes (4.0 MiB); Tiny GPU allows at most 2097152 bytes (2.0 MiB) in "
        "one allocation (maxMemoryAllocationSize)");

  device.max_allocation_bytes = 0;  // unknown: not checked
  device.device_local_bytes = std::uint64_t{6} << 20;
  refused = check_graph_fits(graph_ir(*graph), device);
  CHECK(refused.message() ==
        "the graph's inputs and outputs take 8388608 bytes (8.0 MiB) together; Tiny GPU has 6291456 bytes (6.0 MiB) "
        "of device memory");
}

}  // namespace vkfuse
