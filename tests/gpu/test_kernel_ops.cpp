// Kernel ops (their own root templates) against their CPU references. Each row is one case: the op,
// its input shapes, its attributes. Adding a case is adding a row.
#include <doctest/doctest.h>

#include <random>

#include "host/op_registry.h"
#include "host/reference_eval.h"
#include "support/compare.h"
#include "support/gpu_context.h"
#include "support/random_inputs.h"

namespace vkfuse::testing {
namespace {

struct KernelCase {
  const char* op;
  std::vector<Shape> inputs;
  std::vector<Attr> attrs = {};
};

const std::vector<KernelCase> kCases = {
    {"MatMul", {{7, 13}, {13, 5}}},
    {"MatMul", {{1, 1}, {1, 1}}},
    {"MatMul", {{3, 1, 4, 6}, {2, 6, 5}}},  // batch broadcast
    {"MatMul", {{13}, {13, 7}}},            // 1-D left operand
    {"MatMul", {{4, 13}, {13}}},            // 1-D right operand
    {"MatMul", {{2, 33, 130}, {130, 31}}},
};

void check_case(const KernelCase& c, DType dtype, std::uint32_t seed) {
  const OpDef* op = find_op(c.op);
  REQUIRE(op != nullptr);
  std::mt19937 rng(seed);
  GraphBuilder b;
  std::vector<Tensor> inputs;
  std::map<std::string, HostTensor> feeds;
  for (std::size_t k = 0; k < c.inputs.size(); ++k) {
    const std::string name = "in" + std::to_string(k);
    inputs.push_back(b.input(name, c.inputs[k], dtype));
    feeds.emplace(name, random_tensor(c.inputs[k], dtype, op->domain, rng));
  }
  b.output(b.op(c.op, inputs, c.attrs), "out");
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  const auto got = run_graph(*graph, true, feeds);
  auto want = evaluate_reference(*graph, feeds);
  REQUIRE_MESSAGE(want.ok(), want.status().to_string());
  const std::vector<float> g = got.at("out").to_floats(), w = want->at("out").to_floats();
  REQUIRE(got.at("out").shape == want->at("out").shape);
  const double error = nmse(g, w);
  CHECK_MESSAGE(error <= (dtype == DType::kF32 ? 1e-10 : 1e-5),
                c.op << " " << dtype_name(dtype) << " " << shape_to_string(c.inputs[0]) << ": NMSE " << error);
}

}  // namespace

TEST_CASE("every kernel-op case matches its CPU reference in f32 and f16") {
  std::uint32_t seed = 1;
  for (const KernelCase& c : kCases) {
    CAPTURE(std::string(c.op));
    CAPTURE(shape_to_string(c.inputs[0]));
    check_case(c, DType::kF32, seed++);
    check_case(c, DType::kF16, seed++);
  }
  CHECK(validation_errors() == 0);
}

TEST_CASE("every kernel op in the table has at least one test case") {
  for (const OpDef& op : all_ops()) {
    if (op.kind != OpKind::kKernel) continue;
    bool covered = false;
    for (const KernelCase& c : kCases) covered |= op.name == c.op;
    CHECK_MESSAGE(covered, std::string(op.name) << " has no row in kCases");
  }
}

}  // namespace vkfuse::testing
