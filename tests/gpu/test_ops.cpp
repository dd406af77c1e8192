// Every elementwise op of the table against its scalar CPU reference, over odd shapes, vector tails and
// broadcasts, in f32 and f16. The test loops the op table: a new op is covered without new test code.
#include <doctest/doctest.h>

#include <random>

#include "host/op_registry.h"
#include "host/reference_eval.h"
#include "support/compare.h"
#include "support/gpu_context.h"
#include "support/random_inputs.h"

namespace vkfuse::testing {
namespace {

// Input shapes per case; ops take the first `arity` of each row (missing ones repeat the first).
const std::vector<std::vector<Shape>> kShapeCases = {
    {{1}},
    {{3}},
    {{127}},
    {{1031}},  // 257 vectors and a 3-element tail
    {{7, 13}},
    {{2, 3, 13}},
    {{7, 13}, {13}, {7, 1}},          // row broadcast, column broadcast
    {{7, 1}, {1, 13}, {13}},          // both sides broadcast
    {{3, 1, 5}, {4, 1}, {1}},         // rank mismatch, non-constant scalar
    {{1}, {2, 3, 13}, {3, 1}},        // scalar against a tensor
};

// Non-default attributes worth their own run.
const std::vector<std::pair<std::string, std::vector<Attr>>> kAttrVariants = {
    {"Gelu", {{"approximate", 1.0f}}},
    {"Clip", {{"min", -1.0f}, {"max", 2.0f}}},
    {"LeakyRelu", {{"alpha", 0.2f}}},
    {"Elu", {{"alpha", 0.5f}}},
    {"Celu", {{"alpha", 2.0f}}},
    {"HardSigmoid", {{"alpha", 0.3f}, {"beta", 0.4f}}},
    {"Cast", {{"to", 1.0f}}},
    {"Cast", {{"to", 2.0f}}},
    {"Cast", {{"to", 3.0f}}},
};

DType input_dtype(InputClass cls, DType float_type) {
  return cls == InputClass::kBool ? DType::kBool : float_type;
}

void check_op(const OpDef& op, const std::vector<Attr>& attrs, const std::vector<Shape>& shapes, DType float_type,
              std::uint32_t seed) {
  std::mt19937 rng(seed);
  GraphBuilder b;
  std::vector<Tensor> inputs;
  std::map<std::string, HostTensor> feeds;
  for (int k = 0; k < op.arity; ++k) {
    const Shape& shape = shapes[std::min<std::size_t>(static_cast<std::size_t>(k), shapes.size() - 1)];
    const DType dtype = input_dtype(op.input_class[k], float_type);
    const std::string name = "in" + std::to_string(k);
    inputs.push_back(b.input(name, shape, dtype));
    feeds.emplace(name, random_tensor(shape, dtype, op.domain, rng));
  }
  b.output(b.op(op.name, inputs, attrs), "out");
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());

  const auto got = run_graph(*graph, true, feeds);
  auto want = evaluate_reference(*graph, feeds);
  REQUIRE(want.ok());
  const HostTensor& g = got.at("out");
  const HostTensor& w = want->at("out");
  REQUIRE(g.shape == w.shape);
  double atol = 0.0, rtol = 0.0;
  if (g.dtype == DType::kF32) {
    atol = op.tolerance == Tolerance::kExact ? 1e-6 : 1e-5;
    rtol = op.tolerance == Tolerance::kExact ? 1e-6 : 1e-4;
  } else if (g.dtype == DType::kF16) {
    atol = 1e-3;
    rtol = 1e-2;
  }
  const CloseReport report = all_close(g.to_floats(), w.to_floats(), atol, rtol);
  CHECK_MESSAGE(report.ok, std::string(op.name) << " " << dtype_name(float_type) << " shapes " << shape_to_string(shapes[0])
                                   << (shapes.size() > 1 ? " " + shape_to_string(shapes[1]) : "") << ": "
                                   << report.describe());
}

}  // namespace

TEST_CASE("every elementwise op matches its reference in f32 over odd shapes and broadcasts") {
  std::uint32_t seed = 1;
  for (const OpDef& op : elementwise_ops()) {
    const std::string op_name(op.name);
    CAPTURE(op_name);
    for (const auto& shapes : kShapeCases) check_op(op, {}, shapes, DType::kF32, seed++);
  }
  CHECK(validation_errors() == 0);
}

TEST_CASE("every elementwise op matches its reference in f16") {
  std::uint32_t seed = 1000;
  for (const OpDef& op : elementwise_ops()) {
    const std::string op_name(op.name);
    CAPTURE(op_name);
    bool has_float_input = false;
    for (int k = 0; k < op.arity; ++k) has_float_input |= op.input_class[k] != InputClass::kBool;
    if (!has_float_input) continue;
    check_op(op, {}, {{7, 13}, {13}, {7, 1}}, DType::kF16, seed++);
    check_op(op, {}, {{1031}}, DType::kF16, seed++);
  }
  CHECK(validation_errors() == 0);
}

TEST_CASE("ops with non-default attributes match their reference") {
  std::uint32_t seed = 2000;
  for (const auto& entry : kAttrVariants) {
    const auto& name = entry.first;  // a variable, not a binding: CAPTURE's lambda takes it (clang)
    const auto& attrs = entry.second;
    CAPTURE(name);
    const OpDef* op = find_op(name);
    REQUIRE(op != nullptr);
    check_op(*op, attrs, {{7, 13}}, DType::kF32, seed++);
    check_op(*op, attrs, {{1031}}, DType::kF32, seed++);
  }
  CHECK(validation_errors() == 0);
}

TEST_CASE("Cast from bool and from f16 converts exactly") {
  std::uint32_t seed = 3000;
  const OpDef* cast = find_op("Cast");
  REQUIRE(cast != nullptr);
  // Cast's input is kAny: feed bool and f16 tensors through a tiny graph of its own.
  for (DType from : {DType::kBool, DType::kF16}) {
    for (float to : {0.0f, 1.0f, 2.0f, 3.0f}) {
      std::mt19937 rng(seed++);
      GraphBuilder b;
      const Tensor x = b.input("x", {7, 13}, from);
      b.output(b.op("Cast", {x}, {{"to", to}}), "out");
      auto graph = b.build();
      REQUIRE(graph.ok());
      const std::map<std::string, HostTensor> feeds{{"x", random_tensor({7, 13}, from, cast->domain, rng)}};
      const auto got = run_graph(*graph, true, feeds);
      auto want = evaluate_reference(*graph, feeds);
      REQUIRE(want.ok());
      const CloseReport report = all_close(got.at("out").to_floats(), want->at("out").to_floats(), 0.0, 0.0);
      CHECK_MESSAGE(report.ok, "Cast " << dtype_name(from) << " -> " << to << ": " << report.describe());
    }
  }
  CHECK(validation_errors() == 0);
}

}  // namespace vkfuse::testing

namespace vkfuse::testing {

TEST_CASE("u8 tensors stay bytes: Cast to and from u8 saturates and truncates, views and Identity carry them") {
  const std::vector<float> floats{-3.7f, -0.5f, 0.0f, 0.9f, 1.5f, 127.5f, 254.9f, 255.0f, 256.0f, 1000.0f, 3.0f};
  const std::vector<float> want_u8{0, 0, 0, 0, 1, 127, 254, 255, 255, 255, 3};
  for (DType from : {DType::kF32, DType::kF16, DType::kI32, DType::kBool, DType::kU8}) {
    CAPTURE(dtype_name(from));
    GraphBuilder b;
    const Tensor x = b.input("x", {11}, from);
    b.output(b.op("Cast", {x}, {{"to", 4.0f}}), "bytes");
    auto graph = b.build();
    REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
    const HostTensor in = HostTensor::from_floats({11}, floats, from);
    const std::map<std::string, HostTensor> feeds{{"x", in}};
    auto want = evaluate_reference(*graph, feeds);
    REQUIRE(want.ok());
    for (bool fusion : {true, false}) {
      const HostTensor got = run_graph(*graph, fusion, feeds).at("bytes");
      CHECK(got.dtype == DType::kU8);
      CHECK(got.bytes == want->at("bytes").bytes);
      if (from == DType::kF32) CHECK(got.to_floats() == want_u8);
    }
  }
  // Bytes through a view, a Cast to each dtype, and back: fused into one group and unfused.
  std::vector<float> pixels(3 * 5 * 7);
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<float>((i * 37) % 256);
  for (float to : {0.0f, 1.0f, 2.0f, 3.0f, 4.0f}) {
    CAPTURE(to);
    GraphBuilder b;
    const Tensor x = b.input("x", {3, 5, 7}, DType::kU8);
    const Tensor hwc = b.op("Transpose", {x}, {{"perm", std::vector<std::int64_t>{1, 2, 0}}});
    const Tensor cast = b.op("Cast", {b.op("Identity", {hwc})}, {{"to", to}});
    b.output(cast, "cast");
    if (to == 0.0f) b.output(b.op("Cast", {b.op("Mul", {cast, b.scalar(2.0f)})}, {{"to", 4.0f}}), "doubled");
    auto graph = b.build();
    REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
    const std::map<std::string, HostTensor> feeds{{"x", HostTensor::from_floats({3, 5, 7}, pixels, DType::kU8)}};
    auto want = evaluate_reference(*graph, feeds);
    REQUIRE(want.ok());
    for (bool fusion : {true, false}) {
      const auto got = run_graph(*graph, fusion, feeds);
      for (const auto& entry : *want) {
        const std::string& name = entry.first;  // a variable, not a binding: CHECK_MESSAGE's lambda takes it (clang)
        CHECK_MESSAGE(got.at(name).bytes == entry.second.bytes, name << " fusion " << fusion);
      }
    }
  }
  // No byte arithmetic: a float op names the dtype it wants, and an any-dtype op (Where's branches)
  // says that only Cast and Identity take bytes.
  GraphBuilder b;
  const Tensor x = b.input("x", {4}, DType::kU8);
  b.output(b.op("Add", {x, x}, {}, "add_bytes"), "y");
  auto refused = b.build();
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("node 'add_bytes' (Add): input 0 ('x') is u8, expected f32 or f16") !=
        std::string::npos);
  GraphBuilder w;
  const Tensor bytes = w.input("x", {4}, DType::kU8);
  w.output(w.op("Where", {w.input("c", {4}, DType::kBool), bytes, bytes}, {}, "pick_bytes"), "y");
  auto where = w.build();
  REQUIRE_FALSE(where.ok());
  CHECK(where.status().message().find("node 'pick_bytes' (Where): input 'x' is u8, which only Cast and Identity take") !=
        std::string::npos);
  CHECK(validation_errors() == 0);
}

}  // namespace vkfuse::testing
