// Kernel-op test cases: the op, its input shapes and attributes; run on the GPU and compared with the
// op's CPU reference by normalized mean squared error (f32 <= 1e-10, f16 <= 1e-5).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <vkfuse/vkfuse.hpp>

#include "host/op_def.h"

namespace vkfuse::testing {

struct KernelCase {
  const char* op;
  std::vector<Shape> inputs;
  std::vector<Attr> attrs = {};
  // Inputs that must hold whole numbers in [0, index_bound) (e.g. Gather indices), by position;
  // drawn as f32 values unless `index_dtype` says otherwise.
  int index_input = -1;
  std::int64_t index_bound = 0;
  DType index_dtype = DType::kI32;
};

void check_kernel_case(const KernelCase& c, DType dtype, std::uint32_t seed);

// Define `name` of a launch without its unsigned suffix ("32u" -> "32"); fails the test where it has none.
std::string launch_define(const KernelLaunch& launch, std::string_view name);

// Every case list, one per op table (tests/gpu/test_*_ops.cpp define them).
std::span<const KernelCase> matmul_cases();
std::span<const KernelCase> nn_cases();      // Gemm, Conv, ConvTranspose, pooling
std::span<const KernelCase> tensor_cases();  // Concat, Gather, Pad, Resize, ... (kernel ops of the tensor table)

}  // namespace vkfuse::testing
