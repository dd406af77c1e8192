#include "support/kernel_case.h"

#include <doctest/doctest.h>

#include <random>

#include "host/op_registry.h"
#include "host/reference_eval.h"
#include "support/compare.h"
#include "support/gpu_context.h"
#include "support/random_inputs.h"

namespace vkfuse::testing {

void check_kernel_case(const KernelCase& c, DType dtype, std::uint32_t seed) {
  const OpDef* op = find_op(c.op);
  REQUIRE_MESSAGE(op != nullptr, "no op " << c.op);
  std::mt19937 rng(seed);
  GraphBuilder b;
  std::vector<Tensor> inputs;
  std::map<std::string, HostTensor> feeds;
  for (std::size_t k = 0; k < c.inputs.size(); ++k) {
    const std::string name = "in" + std::to_string(k);
    const bool index = static_cast<int>(k) == c.index_input;
    const DType type = index ? c.index_dtype : dtype;
    TestDomain domain = op->domain;
    if (index) domain = {0.0f, static_cast<float>(c.index_bound) - 0.51f, 0.0f, true};
    inputs.push_back(b.input(name, c.inputs[k], type));
    feeds.emplace(name, random_tensor(c.inputs[k], type, domain, rng));
  }
  b.output(b.op(c.op, inputs, c.attrs), "out");
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  const auto got = run_graph(*graph, true, feeds);
  auto want = evaluate_reference(*graph, feeds);
  REQUIRE_MESSAGE(want.ok(), want.status().to_string());
  REQUIRE(got.at("out").shape == want->at("out").shape);
  const double error = nmse(got.at("out").to_floats(), want->at("out").to_floats());
  CHECK_MESSAGE(error <= (dtype == DType::kF32 ? 1e-10 : 1e-5),
                std::string(c.op) << " " << dtype_name(dtype) << " " << shape_to_string(c.inputs[0]) << ": NMSE " << error);
}

std::string launch_define(const KernelLaunch& launch, std::string_view name) {
  for (const auto& [key, value] : launch.defines)
    if (key == name) return value.back() == 'u' ? value.substr(0, value.size() - 1) : value;
  FAIL("no define " << name);
  return {};
}

}  // namespace vkfuse::testing
