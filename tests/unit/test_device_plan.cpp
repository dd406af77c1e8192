// DeviceCaps -> DevicePlan with fake caps (no GPU): workgroup sizes, binding limits, alignment.
#include <doctest/doctest.h>

#include "backend/device_plan.h"
#include "host/ops/kernel_support.h"

namespace vkfuse {
namespace {

// Caps of a plain Vulkan 1.1 device at the spec minimums, with the given workgroup limit.
DeviceCaps fake_caps(std::uint32_t max_invocations) {
  DeviceCaps caps;
  caps.max_workgroup_invocations = max_invocations;
  caps.max_workgroup_size = {max_invocations, max_invocations, 64};
  caps.max_workgroup_count = {65535, 65535, 65535};
  caps.max_push_constants_bytes = 128;
  caps.max_storage_buffers_per_stage = 4;
  caps.max_storage_buffer_range = 1u << 27;
  caps.min_storage_buffer_offset_alignment = 64;
  return caps;
}

bool is_power_of_two(std::uint32_t x) { return x != 0 && (x & (x - 1)) == 0; }

}  // namespace

TEST_CASE("device plan from minimal caps") {
  const DevicePlan plan = make_device_plan(fake_caps(128));
  CHECK(plan.elementwise_workgroup == 128);
  CHECK(plan.reduce_workgroup == 128);
  CHECK(plan.max_bindings == 4);
  CHECK(plan.max_groups_x == 65535);
  CHECK(plan.binding_alignment == 256);  // at least 256, for vec4 loads at any bound offset
  CHECK(plan.max_binding_bytes == (1u << 27));
  CHECK_FALSE(plan.f16_storage);
  CHECK(plan.shared_memory_bytes == 16384);  // caps of 0 (unknown) fall back to the Vulkan minimums
  CHECK(plan.max_workgroup_invocations == 128);
  CHECK(plan.subgroup_size == 1);
  CHECK_FALSE(plan.subgroup_arithmetic);
}

TEST_CASE("device plan from large caps keeps its own caps") {
  DeviceCaps caps = fake_caps(1024);
  caps.max_storage_buffers_per_stage = 1u << 20;
  caps.min_storage_buffer_offset_alignment = 1024;
  caps.storage_buffer_16bit = true;
  caps.max_shared_memory_bytes = 49152;
  caps.subgroup_size = 32;
  const DevicePlan plan = make_device_plan(caps);
  CHECK(plan.elementwise_workgroup == 256);
  CHECK(plan.max_bindings == 32);
  CHECK(plan.binding_alignment == 1024);
  CHECK(plan.f16_storage);
  CHECK(plan.shared_memory_bytes == 49152);
  CHECK(plan.max_workgroup_invocations == 1024);
  CHECK(plan.subgroup_size == 32);
  CHECK(plan.chunk_bytes() == (1u << 27));  // 128 MiB is a whole number of 1024-byte alignments
  DevicePlan odd = plan;
  odd.max_binding_bytes = 5000;
  CHECK(odd.chunk_bytes() == 4096);  // chunks start at aligned offsets
}

TEST_CASE("subgroup arithmetic and shuffles in compute shaders: basic and that operation, in the compute stage") {
  struct Feature {
    VkSubgroupFeatureFlags bit;
    bool DevicePlan::*flag;
  };
  for (const Feature f : {Feature{VK_SUBGROUP_FEATURE_ARITHMETIC_BIT, &DevicePlan::subgroup_arithmetic},
                          Feature{VK_SUBGROUP_FEATURE_SHUFFLE_BIT, &DevicePlan::subgroup_shuffle}}) {
    DeviceCaps caps = fake_caps(256);
    caps.subgroup_size = 32;
    caps.subgroup_operations = VK_SUBGROUP_FEATURE_BASIC_BIT | f.bit;
    CHECK_FALSE(make_device_plan(caps).*f.flag);  // not in the compute stage
    caps.subgroup_in_compute = true;
    CHECK(make_device_plan(caps).*f.flag);
    caps.subgroup_operations = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_BALLOT_BIT;
    CHECK_FALSE(make_device_plan(caps).*f.flag);
  }
}

TEST_CASE("the reduce workgroup is a power of two") {
  // The reduce root's shared-memory tree (s = size/2, size/4, ... 1) drops partial sums unless the
  // workgroup size is a power of two: with 192 invocations, s goes 96, 48, 24, 12, 6, 3, 1 and the
  // partial at index 2 is never folded into index 0.
  for (std::uint32_t invocations : {128u, 192u, 200u, 256u, 1024u}) {
    CAPTURE(invocations);
    const DevicePlan plan = make_device_plan(fake_caps(invocations));
    CHECK(is_power_of_two(plan.reduce_workgroup));
    CHECK(plan.reduce_workgroup <= invocations);
    CHECK(plan.elementwise_workgroup <= invocations);
  }
}

}  // namespace vkfuse

namespace vkfuse {

TEST_CASE("compute units: the device's count where it reports one, else the documented default; splits follow it") {
  DeviceCaps caps = fake_caps(256);
  CHECK(make_device_plan(caps).compute_units == kDefaultComputeUnits);
  caps.compute_units = 40;  // a mid-size GPU that reports its count
  const DevicePlan small = make_device_plan(caps);
  CHECK(small.compute_units == 40);
  CHECK(fill_invocations(small) == 40 * 256);
  CHECK(fill_workgroups(small) == 40);
  // 100 workgroups of 2 steps each fill a 132-unit GPU without crowding it, but crowd a 40-unit one.
  const DevicePlan large = make_device_plan(fake_caps(256));
  CHECK(split_fills_gpu(100, kMinSplitSteps, large));
  CHECK_FALSE(split_fills_gpu(100, kMinSplitSteps, small));
}

}  // namespace vkfuse
