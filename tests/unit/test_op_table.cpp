// The op table: every row is well formed, every elementwise row's GLSL function exists in its embedded
// snippet and compiles in a kernel, and a few scalar references give known values.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "codegen/glsl_compiler.h"
#include "codegen/kernel_builder.h"
#include "codegen/shader_library.h"
#include "codegen/spirv_optimizer.h"
#include "host/group_kernel.h"
#include "host/op_registry.h"

namespace vkfuse {
namespace {

const char* const kDtypeNames[] = {"f32", "f16", "i32", "bool"};

// The GLSL names a row may resolve to: "{out}" replaced by each dtype's name, or the name itself.
std::vector<std::string> resolved_functions(const OpDef& op) {
  const std::string name(op.glsl_function);
  const std::size_t at = name.find("{out}");
  if (at == std::string::npos) return {name};
  std::vector<std::string> names;
  for (const char* dtype : kDtypeNames) names.push_back(std::string(name).replace(at, 5, dtype));
  return names;
}

double reference(const char* name, std::vector<double> inputs, std::vector<float> attrs = {}) {
  const OpDef* op = find_op(name);
  REQUIRE_MESSAGE(op != nullptr, name);
  if (attrs.empty())
    for (const AttrDef& a : op->attrs) attrs.push_back(a.default_value);
  return op->reference(inputs, attrs);
}

DType input_dtype(InputClass cls) { return cls == InputClass::kBool ? DType::kBool : DType::kF32; }

// The source of a one-op group: `op` over [7,13] inputs of its input classes, `attrs` given.
std::string one_op_kernel(const OpDef& op, const std::vector<Attr>& attrs) {
  GraphBuilder b;
  std::vector<Tensor> inputs;
  for (int k = 0; k < op.arity; ++k)
    inputs.push_back(b.input("in" + std::to_string(k), {7, 13}, input_dtype(op.input_class[k])));
  b.output(b.op(op.name, inputs, attrs), "y");
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  DevicePlan device;
  device.f16_storage = device.u8_storage = true;  // bool inputs and outputs
  auto plan = plan_fusion(graph_ir(*graph), device, FusionMode::kFused);
  REQUIRE(plan.ok());
  REQUIRE(plan->groups.size() == 1);
  auto kernel = make_group_kernel(graph_ir(*graph), plan->groups[0], device);
  REQUIRE_MESSAGE(kernel.ok(), kernel.status().to_string());
  auto source = build_kernel(kernel->spec);
  REQUIRE_MESSAGE(source.ok(), source.status().to_string());
  return *source;
}

}  // namespace

TEST_CASE("op table rows are well formed") {
  std::size_t total = 0;
  for (auto table : {elementwise_ops(), reduce_ops(), view_ops(), matmul_ops(), nn_ops(), tensor_ops(), composite_ops()})
    total += table.size();
  REQUIRE(all_ops().size() == total);
  std::set<std::string_view> names;
  for (const OpDef& op : all_ops()) {
    CAPTURE(op.name);
    CHECK(names.insert(op.name).second);  // unique
    CHECK(find_op(op.name) == &op);
    CHECK(op.arity >= 1);
    CHECK(op.arity <= (op.kind == OpKind::kElementwise || op.kind == OpKind::kView || op.kind == OpKind::kReduce ? 3 : 16));
    CHECK(op.min_arity <= op.arity);
    CHECK(op.cost >= 0.0f);
    CHECK(op.domain.lo < op.domain.hi);
    for (const AttrDef& a : op.attrs) {
      CAPTURE(a.name);
      CHECK(!a.name.empty());
      if (op.name != "Clip") CHECK(std::isfinite(a.default_value));
    }
    switch (op.kind) {
      case OpKind::kElementwise:
        CHECK(!op.snippet.empty());
        CHECK(!op.glsl_function.empty());
        CHECK((op.reference != nullptr));
        break;
      case OpKind::kReduce: CHECK(op.arity == 1); CHECK((op.reference != nullptr)); break;
      case OpKind::kView: CHECK((op.view != nullptr)); break;
      case OpKind::kKernel:
        CHECK((op.infer != nullptr));
        CHECK((op.launch != nullptr));
        CHECK((op.reference_kernel != nullptr));
        break;
      default: CHECK((op.reference_kernel != nullptr)); break;  // composites: checked against it in tests
    }
  }
  const OpDef* clip = find_op("Clip");
  REQUIRE(clip != nullptr);
  REQUIRE(clip->attrs.size() == 2);
  CHECK(clip->attrs[0].default_value == std::numeric_limits<float>::lowest());  // no bound by default
  CHECK(clip->attrs[1].default_value == std::numeric_limits<float>::max());
  CHECK(find_op("NoSuchOp") == nullptr);
  CHECK(find_op("add") == nullptr);  // ONNX op types are case-sensitive
}

TEST_CASE("every elementwise snippet is embedded and defines the row's function") {
  for (const OpDef& op : elementwise_ops()) {
    CAPTURE(op.name);
    const std::string path = "ops/" + std::string(op.snippet) + ".glsl";
    auto text = find_shader(path);
    REQUIRE_MESSAGE(text.ok(), text.status().to_string());
    CHECK(text->rfind("// ", 0) == 0);  // the first line states the maths
    for (const std::string& function : resolved_functions(op)) {
      CAPTURE(function);
      CHECK(text->find(" " + function + "(") != std::string_view::npos);
    }
  }
  CHECK_FALSE(find_shader("ops/no_such_op.glsl").ok());
  CHECK(find_shader("ops/no_such_op.glsl").status().code() == ErrorCode::kNotFound);
}

TEST_CASE("every elementwise op compiles to a valid kernel") {
  for (const OpDef& op : elementwise_ops()) {
    std::vector<std::vector<Attr>> variants{{}};
    if (op.type_rule == TypeRule::kCastAttr) {
      variants.clear();
      for (int to = 0; to < 4; ++to) variants.push_back({{"to", static_cast<float>(to)}});
    }
    for (const auto& attrs : variants) {
      CAPTURE(op.name);
      CAPTURE(attrs.empty() ? -1.0f : attrs[0].value);
      const std::string source = one_op_kernel(op, attrs);
      auto spirv = compile_glsl_compute(source, op.name);
      REQUIRE_MESSAGE(spirv.ok(), spirv.status().to_string());
      auto optimized = optimize_and_validate(*spirv, op.name);
      CHECK_MESSAGE(optimized.ok(), optimized.status().to_string());
    }
  }
}

TEST_CASE("scalar references on known values") {
  CHECK(reference("Relu", {-1.0}) == 0.0);
  CHECK(reference("Relu", {2.5}) == 2.5);
  CHECK(reference("Sigmoid", {0.0}) == 0.5);
  CHECK(reference("Gelu", {1.0}) == doctest::Approx(0.8413447460685429).epsilon(1e-15));
  CHECK(reference("Gelu", {1.0}, {1.0f}) == doctest::Approx(0.8411919906082768).epsilon(1e-12));  // tanh form
  CHECK(reference("Round", {2.5}) == 2.0);
  CHECK(reference("Round", {3.5}) == 4.0);
  CHECK(reference("Round", {-2.5}) == -2.0);
  CHECK(reference("Round", {2.4}) == 2.0);
  CHECK(reference("Cast", {-1.7}, {static_cast<float>(DType::kI32)}) == -1.0);
  CHECK(reference("Cast", {-0.0}, {static_cast<float>(DType::kBool)}) == 0.0);
  CHECK(reference("Cast", {65520.0}, {static_cast<float>(DType::kF16)}) == std::numeric_limits<double>::infinity());
  CHECK(reference("Cast", {1.0 + std::ldexp(1.0, -11)}, {static_cast<float>(DType::kF16)}) == 1.0);
  CHECK(reference("Cast", {0.1}, {static_cast<float>(DType::kF32)}) == static_cast<double>(0.1f));
  CHECK(reference("Sign", {0.0}) == 0.0);
  CHECK(reference("Sign", {-3.0}) == -1.0);
  CHECK(reference("Where", {1.0, 2.0, 3.0}) == 2.0);
  CHECK(reference("Where", {0.0, 2.0, 3.0}) == 3.0);
  CHECK(reference("HardSigmoid", {1.0}) == doctest::Approx(0.7));
  CHECK(reference("LeakyRelu", {-2.0}) == doctest::Approx(-0.02));
  CHECK(reference("Clip", {1e39}) == static_cast<double>(std::numeric_limits<float>::max()));  // default max
  CHECK(reference("Clip", {5.0}, {-1.0f, 1.0f}) == 1.0);
  CHECK(reference("Selu", {1.0}) == doctest::Approx(1.0507009873554805));
  CHECK(reference("Softplus", {1000.0}) == 1000.0);  // no overflow
  CHECK(reference("Greater", {2.0, 1.0}) == 1.0);
  CHECK(reference("And", {1.0, 0.0}) == 0.0);
  CHECK(reference("Not", {0.0}) == 1.0);
  // Reductions' references fold one element into an accumulator.
  CHECK(reference("ReduceSum", {2.0, 3.0}) == 5.0);
  CHECK(reference("ReduceMax", {2.0, 3.0}) == 3.0);
  CHECK(reference("ReduceMin", {2.0, 3.0}) == 2.0);
}

}  // namespace vkfuse
