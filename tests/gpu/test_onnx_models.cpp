// ONNX models end to end on the device: import from tests/data/onnx (written by
// tests/data/make_onnx_test_models.py), run fused and unfused, compare every output with numpy's.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <vkfuse/onnx.hpp>
#include <vkfuse/tensor_io.hpp>

#include "host/onnx/tensor_proto.h"
#include "host/op_registry.h"
#include "support/compare.h"
#include "support/gpu_context.h"

namespace vkfuse::testing {
namespace {

namespace fs = std::filesystem;

const std::string kOnnxDir = std::string(VKFUSE_TEST_DATA_DIR) + "/onnx";

struct TestSet {
  std::map<std::string, HostTensor> inputs, outputs;
};

std::vector<TestSet> read_test_sets(const std::string& name) {
  std::vector<TestSet> sets;
  for (int k = 0; fs::is_directory(fs::path(kOnnxDir) / name / ("test_data_set_" + std::to_string(k))); ++k) {
    TestSet set;
    for (const auto& entry : fs::directory_iterator(fs::path(kOnnxDir) / name / ("test_data_set_" + std::to_string(k)))) {
      auto file = read_tensor_pb_file(entry.path().string());
      REQUIRE_MESSAGE(file.ok(), file.status().to_string());
      const bool input = entry.path().filename().string().rfind("input_", 0) == 0;
      (input ? set.inputs : set.outputs)[file->name] = file->tensor;
    }
    sets.push_back(std::move(set));
  }
  REQUIRE_FALSE(sets.empty());
  return sets;
}

// Imports <name>/model.onnx, runs every test data set fused and unfused, and checks each output:
// all-close (atol 1e-5, rtol 1e-4; NaN matches NaN, an infinity itself), and for matmul-like
// outputs also a normalized mean squared error of at most 1e-7.
void run_model(const std::string& name, bool check_nmse = false) {
  auto graph = load_onnx(kOnnxDir + "/" + name + "/model.onnx");
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  for (const TestSet& set : read_test_sets(name)) {
    for (bool fusion : {true, false}) {
      const auto outputs = run_graph(*graph, fusion, set.inputs);
      REQUIRE(outputs.size() == set.outputs.size());
      for (const auto& entry : set.outputs) {
        const auto& output = entry.first;  // a variable, not a binding: INFO's lambda takes it (clang)
        const auto& want = entry.second;
        INFO(name << " output '" << output << "', fusion " << fusion);
        REQUIRE(outputs.count(output) == 1);
        const HostTensor& got = outputs.at(output);
        CHECK(got.shape == want.shape);
        const CloseReport report = all_close(got.to_floats(), want.to_floats(), 1e-5, 1e-4);
        CHECK_MESSAGE(report.ok, report.describe());
        if (check_nmse) CHECK(nmse(got.to_floats(), want.to_floats()) <= 1e-7);
      }
    }
  }
  CHECK(validation_errors() == 0);
}

}  // namespace

// A model whose ops come from other op tables: run it once they are all there (the unit tests check the
// unsupported-op error until then).
bool have_ops(std::initializer_list<const char*> ops) {
  for (const char* op : ops)
    if (!find_op(op)) {
      MESSAGE("not run yet: the op table has no " << op);
      return false;
    }
  return true;
}

TEST_CASE("ONNX on the GPU: an elementwise chain with Clip, variadic Max/Sum/Mean and Where") { run_model("elementwise_chain"); }

TEST_CASE("ONNX on the GPU: NaN and Inf inputs propagate as IEEE arithmetic does") { run_model("nan_inf"); }

TEST_CASE("ONNX on the GPU: constants folded on the CPU feed the GPU ops") { run_model("fold_ops"); }

TEST_CASE("ONNX on the GPU: a folded torch shape chain around Reshape views") {
  if (have_ops({"Reshape"})) run_model("shape_chain");
}

TEST_CASE("ONNX on the GPU: Slice and Split as views") {
  run_model("slice_split");
  run_model("split_opset18");
  if (have_ops({"Reshape"})) run_model("split_opset11");
}

TEST_CASE("ONNX on the GPU: MatMul + Add + Relu, and batched broadcast MatMul") { run_model("matmul_add", true); }

TEST_CASE("ONNX on the GPU: weights from external data") { run_model("external_data"); }

TEST_CASE("ONNX on the GPU: renamed nodes") { run_model("node_names"); }

TEST_CASE("ONNX on the GPU: a CNN with BatchNormalization folded into Conv and Gemm") {
  if (have_ops({"Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Reshape", "Gemm", "Softmax"}))
    run_model("cnn", true);
}

TEST_CASE("ONNX on the GPU: a BatchNormalization that cannot fold (shared conv output)") {
  if (have_ops({"Conv"})) run_model("bn_shared", true);
}

TEST_CASE("ONNX on the GPU: ConvTranspose with output_shape and auto_pad") {
  if (have_ops({"ConvTranspose"})) run_model("conv_transpose", true);
}

TEST_CASE("ONNX on the GPU: layout and tensor ops at opset 13") {
  if (have_ops({"Transpose", "Concat", "Gather", "Pad", "Resize", "DepthToSpace", "Tile", "Expand", "ArgMax", "ReduceSum",
                "ReduceMean", "ReduceMax", "Softmax", "LogSoftmax"}))
    run_model("layout_ops");
}

TEST_CASE("ONNX on the GPU: Concats of more than 16 inputs, each leading with the one before") {
  if (have_ops({"Concat", "Relu"})) run_model("long_concats");
}

TEST_CASE("ONNX on the GPU: opset 11 and opset 18+ forms") {
  if (have_ops({"Softmax", "LogSoftmax", "Reshape", "ReduceSum", "ReduceMean", "Resize"})) run_model("ops_opset11");
  if (have_ops({"ReduceMean", "ReduceMax", "Pad", "Resize", "Gelu", "LayerNormalization"})) run_model("ops_opset20");
}

}  // namespace vkfuse::testing

namespace vkfuse::testing {

namespace {

// The two torch exports committed for CI (scripts/export_models.py), fused and unfused, against torch's
// fp32 output: max error at most `tolerance` of the output's largest magnitude. With f16 storage the
// fused and unfused runs must also agree with each other to the same bound.
void check_torch_export(const std::string& name, DType float_dtype, double tolerance) {
  const std::string dir = std::string(VKFUSE_TEST_DATA_DIR) + "/models/" + name;
  OnnxOptions options;
  options.float_dtype = float_dtype;
  auto graph = load_onnx(dir + "/model.onnx", options);
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  auto input = read_tensor_file(dir + "/input.npy");
  auto want = read_tensor_file(dir + "/output.npy");
  REQUIRE(input.ok());
  REQUIRE(want.ok());
  const std::vector<float> w = want->to_floats();
  double largest = 0.0;
  for (float v : w) largest = std::max(largest, std::fabs(static_cast<double>(v)));
  std::vector<float> fused_values;
  for (bool fusion : {true, false}) {
    INFO(name << ", " << std::string(dtype_name(float_dtype)) << " storage, fusion " << fusion);
    std::size_t dispatches = 0;
    const auto outputs = run_graph(*graph, fusion, {{"input", *input}}, &dispatches);
    const HostTensor& got = outputs.at("output");
    CHECK(got.shape == want->shape);
    CHECK(got.dtype == DType::kF32);  // the interface keeps the model's dtype
    const CloseReport report = all_close(got.to_floats(), w, tolerance * largest, 0.0);
    CHECK_MESSAGE(report.ok, report.describe());
    if (fusion) {
      fused_values = got.to_floats();
      double worst = 0.0;
      for (std::size_t i = 0; i < w.size() && i < fused_values.size(); ++i)
        worst = std::max(worst, std::fabs(static_cast<double>(fused_values[i]) - w[i]));
      MESSAGE(name << " (" << std::string(dtype_name(float_dtype)) << "): " << graph->node_count() << " nodes, "
                   << dispatches << " dispatches fused, max error " << worst / largest << " of the largest magnitude");
    } else {
      const CloseReport agree = all_close(got.to_floats(), fused_values, tolerance * largest, 0.0);
      CHECK_MESSAGE(agree.ok, "unfused vs fused: " << agree.describe());
    }
  }
  CHECK(validation_errors() == 0);
}

}  // namespace

TEST_CASE("ONNX on the GPU: torch-exported tiny_cnn and tiny_transformer match torch") {
  for (const std::string name : {"tiny_cnn", "tiny_transformer"}) check_torch_export(name, DType::kF32, 1e-4);
}

// --precision fp16: f16 weights and intermediates, fp32 arithmetic in the kernels, against torch's fp32
// output with an fp16 tolerance (f16 keeps 11 significant bits: 4.9e-4 relative rounding per store).
TEST_CASE("ONNX on the GPU: tiny_cnn and tiny_transformer with f16 storage match torch's fp32 output") {
  for (const std::string name : {"tiny_cnn", "tiny_transformer"}) check_torch_export(name, DType::kF16, 5e-3);
}

}  // namespace vkfuse::testing
