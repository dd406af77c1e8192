// Kernel ops (their own root templates) against their CPU references, and a check that every kernel
// op of the table has test cases. The cases live beside each table's tests (test_*_ops.cpp).
#include <doctest/doctest.h>

#include "host/op_registry.h"
#include "support/gpu_context.h"
#include "support/kernel_case.h"

namespace vkfuse::testing {

namespace {

const std::vector<KernelCase> kMatMulCases = {
    {"MatMul", {{7, 13}, {13, 5}}},
    {"MatMul", {{1, 1}, {1, 1}}},
    {"MatMul", {{3, 1, 4, 6}, {2, 6, 5}}},  // batch broadcast
    {"MatMul", {{13}, {13, 7}}},            // 1-D left operand
    {"MatMul", {{4, 13}, {13}}},            // 1-D right operand
    {"MatMul", {{2, 33, 130}, {130, 31}}},
};

}  // namespace

std::span<const KernelCase> matmul_cases() { return kMatMulCases; }

TEST_CASE("MatMul matches its CPU reference in f32 and f16") {
  std::uint32_t seed = 1;
  for (const KernelCase& c : matmul_cases()) {
    CAPTURE(shape_to_string(c.inputs[0]));
    check_kernel_case(c, DType::kF32, seed++);
    check_kernel_case(c, DType::kF16, seed++);
  }
  CHECK(validation_errors() == 0);
}

TEST_CASE("every kernel op in the table has at least one test case") {
  for (const OpDef& op : all_ops()) {
    if (op.kind != OpKind::kKernel) continue;
    bool covered = false;
    for (auto cases : {matmul_cases(), nn_cases(), tensor_cases()})
      for (const KernelCase& c : cases) covered |= op.name == c.op;
    CHECK_MESSAGE(covered, std::string(op.name) << " has no test case");
  }
}

}  // namespace vkfuse::testing
