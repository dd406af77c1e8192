// The ONNX importer without a GPU: models from tests/data/onnx (written by
// tests/data/make_onnx_test_models.py) are imported, inspected through graph_ir, and run through the CPU
// reference evaluator against numpy's outputs. Bad models must fail with exact messages.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <future>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include <vkfuse/onnx.hpp>
#include <vkfuse/tensor_io.hpp>

#include "host/graph.h"
#include "host/onnx/tensor_proto.h"
#include "host/op_registry.h"
#include "host/reference_eval.h"
#include "support/compare.h"
#include "support/onnx_model.h"
#include "support/test_env.h"

namespace vkfuse::testing {
namespace {

namespace fs = std::filesystem;

const std::string kOnnxDir = std::string(VKFUSE_TEST_DATA_DIR) + "/onnx";

std::string model_path(const std::string& name) { return kOnnxDir + "/" + name + "/model.onnx"; }
std::string bad_path(const std::string& name) { return kOnnxDir + "/bad/" + name + ".onnx"; }

struct TestSet {
  std::map<std::string, HostTensor> inputs, outputs;
};

TestSet read_test_set(const std::string& name, int k = 0) {
  TestSet set;
  const fs::path dir = fs::path(kOnnxDir) / name / ("test_data_set_" + std::to_string(k));
  for (const auto& entry : fs::directory_iterator(dir)) {
    auto file = read_tensor_pb_file(entry.path().string());
    REQUIRE_MESSAGE(file.ok(), file.status().to_string());
    const bool input = entry.path().filename().string().rfind("input_", 0) == 0;
    (input ? set.inputs : set.outputs)[file->name] = file->tensor;
  }
  return set;
}

Graph load(const std::string& path, const OnnxOptions& options = {}) {
  auto graph = load_onnx(path, options);
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  return *graph;
}

Status load_error(const std::string& path, const OnnxOptions& options = {}) {
  auto graph = load_onnx(path, options);
  REQUIRE_FALSE(graph.ok());
  return graph.status();
}

// Runs the imported graph through the CPU reference and compares every output with numpy's.
void check_against_numpy(const std::string& name) {
  const Graph graph = load(model_path(name));
  const TestSet set = read_test_set(name);
  auto outputs = evaluate_reference(graph, set.inputs);
  REQUIRE_MESSAGE(outputs.ok(), outputs.status().to_string());
  REQUIRE(outputs->size() == set.outputs.size());
  for (const auto& expected : set.outputs) {
    const std::string& output = expected.first;  // INFO's lambda cannot take a binding (clang)
    const HostTensor& want = expected.second;
    INFO(name << " output " << output);
    REQUIRE(outputs->count(output) == 1);
    const HostTensor& got = outputs->at(output);
    CHECK(got.shape == want.shape);
    const CloseReport report = all_close(got.to_floats(), want.to_floats(), 1e-5, 1e-4);
    CHECK_MESSAGE(report.ok, report.describe());
  }
}

std::multiset<std::string> op_names(const Graph& graph) {
  std::multiset<std::string> ops;
  for (const Node& node : graph_ir(graph).nodes) ops.insert(std::string(node.op->name));
  return ops;
}

const Node* node_named(const Graph& graph, const std::string& name) {
  for (const Node& node : graph_ir(graph).nodes)
    if (node.name == name) return &node;
  return nullptr;
}

// The node, which the test requires to exist.
const Node& node_of(const Graph& graph, const std::string& name) {
  const Node* node = node_named(graph, name);
  REQUIRE_MESSAGE(node, "no node named " << name);
  return *node;
}

bool have_ops(std::initializer_list<const char*> names) {
  return std::all_of(names.begin(), names.end(), [](const char* n) { return find_op(n) != nullptr; });
}

}  // namespace

TEST_CASE("ONNX: an elementwise chain imports with its node names and matches numpy") {
  check_against_numpy("elementwise_chain");
  const Graph graph = load(model_path("elementwise_chain"));
  const GraphIR& ir = graph_ir(graph);
  REQUIRE(ir.inputs.size() == 1);
  CHECK(ir.value(ir.inputs[0]).name == "x");
  CHECK(ir.value(ir.inputs[0]).shape == Shape{2, 3, 5});
  REQUIRE(ir.outputs.size() == 2);
  CHECK(ir.value(ir.outputs[0]).name == "y");
  CHECK(ir.value(ir.outputs[1]).name == "z");
  for (const char* name : {"scale", "shift", "leaky", "hsig", "clip", "tanh", "where"}) CHECK_MESSAGE(node_named(graph, name), name);
  // Identity and Dropout are removed; Max over 3 inputs is a chain of two, Mean a sum and a scale.
  CHECK_FALSE(node_named(graph, "identity"));
  CHECK_FALSE(node_named(graph, "dropout"));
  CHECK(op_names(graph).count("Identity") == 0);
  CHECK(op_names(graph).count("Max") == 2);
  const Node* clip = node_named(graph, "clip");
  REQUIRE(clip);
  CHECK(clip->attrs == std::vector<float>{-0.5f, 0.8f});  // from Clip's min/max inputs
  const Node* leaky = node_named(graph, "leaky");
  REQUIRE(leaky);
  CHECK(leaky->attrs == std::vector<float>{0.2f});
}

TEST_CASE("ONNX: NaN and Inf inputs go through the CPU reference as IEEE arithmetic does") { check_against_numpy("nan_inf"); }

TEST_CASE("ONNX: torch's int64 shape chains fold at import and never reach the graph") {
  if (!have_ops({"Reshape"})) {
    const Status error = load_error(model_path("shape_chain"));
    CHECK(error.code() == ErrorCode::kUnsupported);
    CHECK(error.message().find("Reshape: 'flatten', 'group'") != std::string::npos);
    return;
  }
  check_against_numpy("shape_chain");
  const Graph graph = load(model_path("shape_chain"));
  // Shape, Gather, Unsqueeze, Concat, Slice, Div, ConstantOfShape, Mul, Equal, Where, Squeeze, Range and
  // Cast all folded: two Reshapes (the third is to the same shape) and the Add are left.
  CHECK(op_names(graph) == std::multiset<std::string>{"Reshape", "Reshape", "Add"});
  const Node* flatten = node_named(graph, "flatten");
  REQUIRE(flatten);
  CHECK(flatten->lists.at("shape") == std::vector<std::int64_t>{2, 60});
  const Node* add = node_named(graph, "add_positions");
  REQUIRE(add);
  const Value& positions = graph_ir(graph).value(add->inputs[1]);
  REQUIRE(positions.constant);
  CHECK(positions.shape == Shape{15});
  CHECK(positions.constant->to_floats()[14] == 14.0f);
}

TEST_CASE("ONNX: the CPU folder's integer (Div truncates, Mod takes the divisor's sign, Range counts down) and float paths") {
  check_against_numpy("fold_ops");
  const Graph graph = load(model_path("fold_ops"));
  // Everything but the three uses of x folded: three elementwise nodes are left.
  CHECK(op_names(graph) == std::multiset<std::string>{"Add", "Mul", "Add"});
}

TEST_CASE("ONNX: Slice (INT64 sentinels, negative steps, default axes) and Split become single-axis Slices") {
  check_against_numpy("slice_split");
  const Graph graph = load(model_path("slice_split"));
  // two_axes: 2 Slices; reverse, default_axes: 1 + 2; split_sizes, split_equal: 2 + 2; backward: 1.
  const auto ops = op_names(graph);
  CHECK(ops.count("Slice") == 10);
  const Node* reverse = node_named(graph, "reverse");
  REQUIRE(reverse);
  CHECK(reverse->attrs == std::vector<float>{1.0f, 5.0f, -7.0f, -1.0f});  // axis, start, end = -dim - 1, step
  const Node* part = node_named(graph, "split_sizes/part1");
  REQUIRE(part);
  CHECK(part->attrs == std::vector<float>{2.0f, 3.0f, 8.0f, 1.0f});
}

TEST_CASE("ONNX: opset 11 Split/Squeeze/Unsqueeze attributes and opset 18 num_outputs") {
  check_against_numpy("split_opset18");
  if (!have_ops({"Reshape"})) return;  // Squeeze, Unsqueeze and Flatten lower to Reshape
  check_against_numpy("split_opset11");
}

TEST_CASE("ONNX: MatMul with an initializer, a bias and batched broadcasting") { check_against_numpy("matmul_add"); }

TEST_CASE("ONNX: missing and duplicate node names are made unique") {
  check_against_numpy("node_names");
  const Graph graph = load(model_path("node_names"));
  std::vector<std::string> names;
  for (const Node& node : graph_ir(graph).nodes) names.push_back(node.name);
  CHECK(names == std::vector<std::string>{"Relu_0", "dup", "dup_1", "Exp_3"});
}

TEST_CASE("ONNX: external data is read relative to the model, at its offset") { check_against_numpy("external_data"); }

TEST_CASE("ONNX: external data that is missing, out of range, or outside the model's folder is refused") {
  const std::string dir = kOnnxDir + "/bad";
  const std::string canonical_dir = fs::weakly_canonical(dir).string();
  Status s = load_error(bad_path("external_missing"));
  CHECK(s.code() == ErrorCode::kNotFound);
  CHECK(s.message() == bad_path("external_missing") + ": initializer 'w1': external data file 'missing.bin' (" +
                           canonical_dir + "/missing.bin) does not exist");
  s = load_error(bad_path("external_out_of_range"));
  CHECK(s.message() == bad_path("external_out_of_range") +
                           ": initializer 'w1': external data [offset 72, length 48] is past the end of 'weights.bin' (80 bytes)");
  s = load_error(bad_path("external_escape"));
  CHECK(s.message() == bad_path("external_escape") + ": initializer 'w1': external data location "
                                                     "'../external_data/weights.bin' leaves the model's folder '" +
                           canonical_dir + "'");
  s = load_error(bad_path("external_absolute"));
  CHECK(s.message() == bad_path("external_absolute") + ": initializer 'w1': external data location '/etc/hostname' is an "
                                                       "absolute path; it must be relative to the model's folder");
  s = load_error(bad_path("external_wrong_length"));
  CHECK(s.message() == bad_path("external_wrong_length") + ": initializer 'w1': external data length 12 in 'weights.bin' "
                                                           "does not match the 48 bytes of its shape and type");
}

// A model folder in a scratch directory: model.onnx reads its initializer w1 [3,4] from weights.bin at
// offset 0; each case puts something else at that name.
struct ExternalFolder {
  ScratchDir scratch{"vkfuse_external"};
  fs::path folder = scratch.path() / "model";
  std::string model = (folder / "model.onnx").string();
  std::string weights = (folder / "weights.bin").string();

  ExternalFolder() {
    fs::create_directory(folder);
    OnnxModel m;
    m.input("x", {3, 4}).output("y", {3, 4}).external("w1", {3, 4}, "weights.bin", 0).node("Mul", {"x", "w1"}, {"y"}, "mul");
    m.save(model);
  }
  void write(const fs::path& path, std::size_t floats) const {
    std::vector<float> values(floats);
    for (std::size_t i = 0; i < floats; ++i) values[i] = 0.5f * static_cast<float>(i);
    std::ofstream file(path, std::ios::binary);
    file.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(floats * sizeof(float)));
  }
  std::string prefix() const { return model + ": initializer 'w1': external data file 'weights.bin' "; }
};

TEST_CASE("ONNX: external data is judged by the file opened: regular, one link, inside the folder") {
  SUBCASE("a regular file loads; one too short is past its end") {
    ExternalFolder f;
    f.write(f.weights, 12);
    const Graph graph = load(f.model);
    bool found = false;
    for (const Value& v : graph_ir(graph).values)
      if (v.name == "w1" && v.constant) found = v.constant->to_floats()[11] == 5.5f;
    CHECK(found);
    f.write(f.weights, 10);
    CHECK(load_error(f.model).message() ==
          f.model + ": initializer 'w1': external data [offset 0, length 48] is past the end of 'weights.bin' (40 bytes)");
  }
  SUBCASE("a hard link to a file outside the folder") {
    ExternalFolder f;
    const fs::path outside = f.scratch.path() / "secret.bin";
    f.write(outside, 12);
    fs::create_hard_link(outside, f.weights);
    const Status s = load_error(f.model);
    CHECK(s.code() == ErrorCode::kInvalidArgument);
    CHECK(s.message() == f.prefix() + "has 2 hard links; another name may lie outside the model's folder, so only files "
                                      "with one link are read");
  }
  SUBCASE("a symbolic link, even to a file inside the folder") {
    ExternalFolder f;
    f.write(f.folder / "real.bin", 12);
    fs::create_symlink("real.bin", f.weights);
    CHECK(load_error(f.model).message() ==
          f.prefix() + "is a symbolic link; vkfuse reads only regular files inside the model's folder");
  }
  SUBCASE("a directory") {
    ExternalFolder f;
    fs::create_directory(f.weights);
    CHECK(load_error(f.model).message() == f.prefix() + "is a directory, not a regular file");
  }
  SUBCASE("a character device (where this process may make one)") {
    ExternalFolder f;
    if (::mknod(f.weights.c_str(), S_IFCHR | 0600, makedev(1, 5)) != 0) {  // /dev/zero's numbers
      MESSAGE("mknod: " << std::strerror(errno) << "; the device case is skipped");
      return;
    }
    CHECK(load_error(f.model).message() == f.prefix() + "is a character device, not a regular file");
  }
  SUBCASE("a FIFO is refused at once, without waiting for a writer") {
    ExternalFolder f;
    REQUIRE(::mkfifo(f.weights.c_str(), 0600) == 0);
    auto loading = std::async(std::launch::async, [&] { return load_onnx(f.model); });
    if (loading.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
      // A reader blocked in open(): a writer that comes and goes lets it return, so the test can end.
      const int writer = ::open(f.weights.c_str(), O_WRONLY | O_NONBLOCK);
      if (writer >= 0) ::close(writer);
      FAIL("loading a model whose external data is a FIFO blocked");
    }
    const Result<Graph> graph = loading.get();
    REQUIRE_FALSE(graph.ok());
    CHECK(graph.status().message() == f.prefix() + "is a FIFO, not a regular file");
  }
}

TEST_CASE("ONNX: a model from memory imports as from its file; external data and bad bytes are refused by name") {
  auto read_bytes = [](const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  };
  const std::string bytes = read_bytes(model_path("elementwise_chain"));
  REQUIRE(!bytes.empty());
  auto graph = load_onnx_from_memory(bytes.data(), bytes.size(), {}, "chain bytes");
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  CHECK(op_names(*graph) == op_names(load(model_path("elementwise_chain"))));
  const TestSet set = read_test_set("elementwise_chain");
  auto outputs = evaluate_reference(*graph, set.inputs);
  REQUIRE_MESSAGE(outputs.ok(), outputs.status().to_string());
  for (const auto& expected : set.outputs) {
    const std::string& output = expected.first;  // CHECK_MESSAGE's lambda cannot take a binding (clang)
    const CloseReport report = all_close(outputs->at(output).to_floats(), expected.second.to_floats(), 1e-5, 1e-4);
    CHECK_MESSAGE(report.ok, output << ": " << report.describe());
  }
  auto info = inspect_onnx_from_memory(bytes.data(), bytes.size());
  REQUIRE(info.ok());
  CHECK(info->inputs.size() == 1);
  CHECK(info->inputs[0].name == "x");

  const std::string external = read_bytes(model_path("external_data"));
  auto refused = load_onnx_from_memory(external.data(), external.size(), {}, "embedded");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().message().find("embedded") == 0);
  CHECK(refused.status().message().find("has external data, which needs the model's folder (none given)") != std::string::npos);
  auto truncated = load_onnx_from_memory(bytes.data(), bytes.size() / 2, {}, "half");
  REQUIRE_FALSE(truncated.ok());
  CHECK(truncated.status().message() == "half: cannot be parsed as an ONNX ModelProto; the file is truncated or is not an ONNX model");
  auto empty = load_onnx_from_memory(nullptr, 0);
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.status().message() == "<memory>: the file is empty; the file is truncated or is not an ONNX model");
}

TEST_CASE("ONNX: truncated and non-protobuf files are errors that name the file") {
  Status s = load_error(bad_path("truncated"));
  CHECK(s.code() == ErrorCode::kInvalidArgument);
  CHECK(s.message() == bad_path("truncated") +
                           ": cannot be parsed as an ONNX ModelProto; the file is truncated or is not an ONNX model");
  s = load_error(bad_path("not_protobuf"));
  CHECK(s.message() == bad_path("not_protobuf") +
                           ": cannot be parsed as an ONNX ModelProto; the file is truncated or is not an ONNX model");
  s = load_error(kOnnxDir + "/tensors/float_raw.pb");  // a TensorProto
  CHECK(s.message() == kOnnxDir + "/tensors/float_raw.pb: cannot be parsed as an ONNX ModelProto; the file is truncated or is "
                                  "not an ONNX model");
  // Many byte strings parse as some ModelProto: what every model has is checked.
  s = load_error(bad_path("no_graph"));
  CHECK(s.message() == bad_path("no_graph") + ": not an ONNX model (no graph); the file is truncated or is not an ONNX model");
  s = load_error(kOnnxDir + "/bad/no_such_model.onnx");
  CHECK(s.code() == ErrorCode::kNotFound);
  CHECK(s.message() == kOnnxDir + "/bad/no_such_model.onnx: no such file");
}

TEST_CASE("ONNX: a node input that nothing defines is an error naming node and input") {
  const Status s = load_error(bad_path("missing_initializer"));
  CHECK(s.message() == bad_path("missing_initializer") +
                           " (opset 13): node 'add' (Add): input 'w' is not an initializer, a graph input or the output of "
                           "an earlier node");
}

TEST_CASE("ONNX: negative, zero and overflowing dimensions are errors") {
  CHECK(load_error(bad_path("negative_dim")).message() ==
        bad_path("negative_dim") + ": input 'x' has a negative dimension in [2,-3]");
  CHECK(load_error(bad_path("zero_dim")).message() ==
        bad_path("zero_dim") + ": input 'x' has shape [0,3]: zero-size tensors are not supported");
  CHECK(load_error(bad_path("overflow_dim")).message() ==
        bad_path("overflow_dim") + ": input 'x': dimensions [1099511627776,1099511627776] overflow the element count");
  CHECK(load_error(bad_path("overflow_initializer")).message() ==
        bad_path("overflow_initializer") + ": initializer 'w': dimensions [4611686018427387904,4] overflow the element count");
  CHECK(load_error(bad_path("short_raw_data")).message() ==
        bad_path("short_raw_data") + ": initializer 'w': raw_data has 16 bytes; its shape and type need 24");
}

TEST_CASE("ONNX: rank mismatches are errors naming the tensor") {
  CHECK(load_error(bad_path("rank_mismatch")).message() ==
        bad_path("rank_mismatch") + ": graph output 'y' is declared as [2,3,1] (rank 3) but computes [2,3] (rank 2)");
  OnnxOptions options;
  options.input_shapes["x"] = {2, 3, 5, 1};
  CHECK(load_error(model_path("elementwise_chain"), options).message() ==
        model_path("elementwise_chain") + ": input 'x': the given shape [2,3,5,1] has rank 4, the model's has rank 3");
  if (have_ops({"Reshape"}))
    CHECK(load_error(bad_path("reshape_mismatch")).message() ==
          bad_path("reshape_mismatch") + " (opset 13): node 'reshape' (Reshape): Reshape of [2,3] (6 elements) to [4,2] (8 elements)");
  // A constant Gather index (imported as a view) is checked against its axis on import.
  CHECK(load_error(bad_path("gather_out_of_range")).message() ==
        bad_path("gather_out_of_range") + " (opset 13): node 'pick' (Gather): Gather index -4 is out of range for axis 1 of [2,3]");
}

TEST_CASE("ONNX: symbolic dimensions need OnnxOptions::input_shapes or batch") {
  CHECK(load_error(bad_path("symbolic_dim")).message() ==
        bad_path("symbolic_dim") + ": input 'x': dimension 0 ('batch') is symbolic; fix it with OnnxOptions::input_shapes "
                                   "or OnnxOptions::batch (vkfuse run --shape x=...)");
  {
    OnnxOptions batched;
    batched.batch = 5;  // the symbolic dimension 0
    const Graph graph = load(bad_path("symbolic_dim"), batched);
    CHECK(graph_ir(graph).value(graph_ir(graph).inputs[0]).shape == Shape{5, 3});
    batched.input_shapes["x"] = {2, 3};  // a named input keeps its given shape
    const Graph named = load(bad_path("symbolic_dim"), batched);
    CHECK(graph_ir(named).value(graph_ir(named).inputs[0]).shape == Shape{2, 3});
    batched.input_shapes.clear();
    batched.batch = 0;
    CHECK(load_error(bad_path("symbolic_dim"), batched).message() ==
          bad_path("symbolic_dim") + ": OnnxOptions::batch is 0, not positive");
  }
  OnnxOptions options;
  options.input_shapes["x"] = {4, 3};
  const Graph graph = load(bad_path("symbolic_dim"), options);
  CHECK(graph_ir(graph).value(graph_ir(graph).inputs[0]).shape == Shape{4, 3});
  options.input_shapes["nope"] = {1};
  CHECK(load_error(bad_path("symbolic_dim"), options).message() ==
        bad_path("symbolic_dim") + ": OnnxOptions::input_shapes names 'nope', which is not a graph input");
}

TEST_CASE("ONNX: opsets outside 11 to 21 are refused") {
  CHECK(load_error(bad_path("opset_10")).message() == bad_path("opset_10") + ": ai.onnx opset 10 is not supported (opsets 11 to 21)");
}

TEST_CASE("ONNX: one error lists every unsupported op with its nodes and the opset") {
  const Status s = load_error(bad_path("unsupported_ops"));
  CHECK(s.code() == ErrorCode::kUnsupported);
  CHECK(s.message() == bad_path("unsupported_ops") +
                           " (ai.onnx opset 13): 4 nodes use ops vkfuse cannot run:\n"
                           "  TopK: 'topk_a', 'topk_b' (no vkfuse mapping)\n"
                           "  Einsum: 'einsum' (no vkfuse mapping)\n"
                           "  com.example.FusedGelu: 'custom' (operator domain 'com.example' is not supported)");
}

// Models whose ops other tables provide: until every op they use is in the op table, the import must
// fail with the one unsupported-ops error (which names the missing op); after, they must match numpy.
// True when the model ran (the caller's further checks apply).
bool check_model_needing(const std::string& name, std::initializer_list<const char*> ops) {
  for (const char* op : ops)
    if (!find_op(op)) {
      const Status error = load_error(model_path(name));
      CHECK(error.code() == ErrorCode::kUnsupported);
      CHECK_MESSAGE(error.message().find("needs vkfuse op '" + std::string(op) + "'") != std::string::npos, error.message());
      return false;
    }
  check_against_numpy(name);
  return true;
}

TEST_CASE("ONNX: a CNN with BatchNormalization folded into Conv and Gemm") {
  if (!check_model_needing("cnn", {"Conv", "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Reshape", "Gemm",
                                   "Softmax"}))
    return;
  const Graph graph = load(model_path("cnn"));
  // bn1, bn3 and bn4 folded into conv1, depthwise and fc; bn2 follows a Relu: a multiply-add.
  for (const char* folded : {"bn1", "bn3", "bn4"}) CHECK_FALSE(node_named(graph, folded));
  const Node* bn2 = node_named(graph, "bn2");
  REQUIRE(bn2);
  CHECK(bn2->op->name == "Add");
  REQUIRE(node_named(graph, "bn2/scale"));
  CHECK(node_of(graph, "bn2/scale").op->name == "Mul");
  const Node* conv1 = node_named(graph, "conv1");
  REQUIRE(conv1);
  CHECK(graph_ir(graph).value(conv1->inputs[1]).name == "w1/bn_folded");
  const Node* depthwise = node_named(graph, "depthwise");
  REQUIRE(depthwise);
  CHECK(depthwise->lists.at("pads") == std::vector<std::int64_t>{2, 2, 2, 2});  // SAME_UPPER, dilation 2
  const Node* fc = node_named(graph, "fc");
  REQUIRE(fc);
  CHECK(fc->attrs == std::vector<float>{0.5f, 1.0f, 0.0f, 1.0f});  // beta folded into the bias
}

TEST_CASE("ONNX: a BatchNormalization whose conv output has another reader is not folded") {
  if (!check_model_needing("bn_shared", {"Conv"})) return;
  const Graph graph = load(model_path("bn_shared"));
  CHECK(graph_ir(graph).value(node_of(graph, "conv").inputs[1]).name == "w");
  CHECK(node_of(graph, "bn").op->name == "Add");
  CHECK(node_of(graph, "bn/scale").op->name == "Mul");
}

TEST_CASE("ONNX: ConvTranspose output_shape and auto_pad become pads") {
  if (!check_model_needing("conv_transpose", {"ConvTranspose"})) return;
  const Graph graph = load(model_path("conv_transpose"));
  CHECK(node_of(graph, "up_output_shape").lists.at("pads") == std::vector<std::int64_t>{1, 1, 0, 0});
  CHECK(node_of(graph, "up_same").lists.at("pads") == std::vector<std::int64_t>{0, 0, 1, 1});
  CHECK_FALSE(node_named(graph, "bn"));
}

TEST_CASE("ONNX: layout and tensor ops at opset 13") {
  if (!check_model_needing("layout_ops", {"Transpose", "Concat", "Gather", "Pad", "Resize", "DepthToSpace", "Tile", "Expand",
                                          "ArgMax", "ReduceSum", "ReduceMean", "ReduceMax", "Softmax", "LogSoftmax"}))
    return;
  const Graph graph = load(model_path("layout_ops"));
  // Gather's int64 constant indices become an i32 constant; Resize's scales a full size list.
  const Value& indices = graph_ir(graph).value(node_of(graph, "gather").inputs[1]);
  REQUIRE(indices.constant);
  CHECK(indices.dtype == DType::kI32);
  CHECK(indices.constant->to_floats() == std::vector<float>{0, -1, 3, 2});
  // One constant index selects a view: Slice (and Squeeze for a scalar index), no Gather dispatch.
  const Node& scalar = node_of(graph, "gather_scalar");
  CHECK(scalar.op->name == "Squeeze");
  CHECK(scalar.lists.at("axes") == std::vector<std::int64_t>{1});
  CHECK(node_of(graph, "gather_scalar/slice").attrs == std::vector<float>{1.0f, 1.0f, 2.0f, 1.0f});  // axis, start, end, step
  CHECK(node_of(graph, "gather_one").op->name == "Slice");
  CHECK(node_of(graph, "gather_one").attrs == std::vector<float>{2.0f, 2.0f, 3.0f, 1.0f});
  CHECK(node_of(graph, "resize_nearest").lists.at("sizes") == std::vector<std::int64_t>{1, 8, 6, 8});
  CHECK(node_of(graph, "resize_linear").attrs == std::vector<float>{1.0f, 2.0f, 0.0f});  // linear, align_corners
  CHECK(node_of(graph, "pad_edge").lists.at("pads") == std::vector<std::int64_t>{0, 0, 1, 2, 0, 0, 2, 1});
}

TEST_CASE("ONNX: a Concat of more than 16 inputs leads with an earlier Concat of its first 16, else goes in chunks") {
  if (!check_model_needing("long_concats", {"Concat", "Relu"})) return;
  const Graph graph = load(model_path("long_concats"));
  const GraphIR& ir = graph_ir(graph);
  std::size_t concats = 0;
  for (const Node& node : ir.nodes)
    if (node.op->name == "Concat") {
      ++concats;
      CHECK(node.inputs.size() <= 16);
    }
  // concat1 .. concat19; concat_twice's 40 inputs lead with concat15 ([concat15, f16 .. f19, f0 .. f19]),
  // and as no earlier Concat holds the next 16 of those, they go in chunks of 16 side by side:
  // [[concat15, f16 .. f19, f0 .. f10], [f11 .. f19]]. Each Concat of a layer starts with the one before.
  CHECK(concats == 22);
  for (const char* name : {"concat16", "concat19"}) {
    CAPTURE(name);
    CHECK(node_of(graph, name).inputs[0] == node_of(graph, "concat15").output);
  }
  const Node& twice = node_of(graph, "concat_twice");
  REQUIRE(twice.inputs.size() == 2);
  const Node& first = node_of(graph, "concat_twice/chunk1_0");
  const Node& second = node_of(graph, "concat_twice/chunk1_1");
  CHECK(twice.inputs[0] == first.output);
  CHECK(twice.inputs[1] == second.output);
  CHECK(first.inputs.size() == 16);
  CHECK(first.inputs[0] == node_of(graph, "concat15").output);
  CHECK(second.inputs.size() == 9);
}

TEST_CASE("ONNX: opset 11 forms (Softmax over a 2-D coercion, Reduce axes attributes)") {
  check_model_needing("ops_opset11", {"Softmax", "LogSoftmax", "Reshape", "ReduceSum", "ReduceMean", "Resize"});
}

TEST_CASE("ONNX: opset 18+ forms (axes inputs, Pad and Resize axes), Gelu of opset 20, Cast and CastLike") {
  if (!check_model_needing("ops_opset20", {"ReduceMean", "ReduceMax", "Pad", "Resize", "Gelu", "LayerNormalization"})) return;
  const Graph graph = load(model_path("ops_opset20"));
  CHECK(node_of(graph, "to_int64").attrs == std::vector<float>{static_cast<float>(DType::kI32)});  // INT64 -> i32
  CHECK(node_of(graph, "back_to_float").attrs == std::vector<float>{static_cast<float>(DType::kF32)});
  CHECK(node_of(graph, "gelu_tanh").attrs == std::vector<float>{1.0f});
  CHECK(node_of(graph, "pad").lists.at("pads") == std::vector<std::int64_t>{0, 0, 1, 0, 0, 2});
}

namespace {

// The CPU reference of `graph` on <dir>/input.npy against torch's <dir>/output.npy: max error at most
// `tolerance` of the output's largest magnitude.
void check_reference_against_torch(const Graph& graph, const std::string& dir, double tolerance) {
  auto input = read_tensor_file(dir + "/input.npy");
  auto want = read_tensor_file(dir + "/output.npy");
  REQUIRE(input.ok());
  REQUIRE(want.ok());
  auto outputs = evaluate_reference(graph, {{"input", *input}});
  REQUIRE_MESSAGE(outputs.ok(), outputs.status().to_string());
  const HostTensor& got = outputs->at("output");
  CHECK(got.shape == want->shape);
  const std::vector<float> w = want->to_floats();
  double largest = 0.0;
  for (float v : w) largest = std::max(largest, std::fabs(static_cast<double>(v)));
  const CloseReport report = all_close(got.to_floats(), w, tolerance * largest, 0.0);
  CHECK_MESSAGE(report.ok, report.describe());
}

}  // namespace

// The two torch exports committed for CI (scripts/export_models.py): real shape chains, padding, attention.
TEST_CASE("ONNX: torch-exported tiny_cnn and tiny_transformer import and match torch on the CPU reference") {
  for (const std::string name : {"tiny_cnn", "tiny_transformer"}) {
    INFO(name);
    const std::string dir = std::string(VKFUSE_TEST_DATA_DIR) + "/models/" + name;
    const Graph graph = load(dir + "/model.onnx");
    check_reference_against_torch(graph, dir, 1e-4);
    // The shape chains folded: nothing of Shape/Gather/ConstantOfShape/Equal/Where reaches the graph.
    for (const Node& node : graph_ir(graph).nodes) CHECK(node.op->name != "Where");
    MESSAGE(name << ": " << graph.node_count() << " vkfuse nodes");
  }
}

// --precision fp16: every float weight and every float tensor between the boundary Casts is f16 (the
// composites' own fp32 accumulation excepted), the interface stays f32, and the CPU reference of the f16
// graph still matches torch's fp32 output within an fp16 tolerance.
TEST_CASE("ONNX: OnnxOptions::float_dtype f16 stores float tensors as f16 behind f32 inputs and outputs") {
  for (const std::string name : {"tiny_cnn", "tiny_transformer"}) {
    INFO(name);
    const std::string dir = std::string(VKFUSE_TEST_DATA_DIR) + "/models/" + name;
    OnnxOptions options;
    options.float_dtype = DType::kF16;
    const Graph graph = load(dir + "/model.onnx", options);
    const GraphIR& ir = graph_ir(graph);
    for (ValueId v : ir.inputs) CHECK(ir.value(v).dtype == DType::kF32);
    for (ValueId v : ir.outputs) CHECK(ir.value(v).dtype == DType::kF32);
    std::size_t f16_weights = 0, f32_weights = 0, f16_values = 0;
    for (const Value& value : ir.values) {
      if (value.constant) (value.dtype == DType::kF16 ? f16_weights : f32_weights) += 1;
      if (!value.constant && value.dtype == DType::kF16) ++f16_values;
    }
    CHECK(f16_weights > 0);
    CHECK(f16_values > ir.nodes.size() / 2);
    // f32 constants are only the composites' own (LayerNorm's epsilon after its cast to f32).
    for (const Value& value : ir.values)
      if (value.constant && value.dtype == DType::kF32) CHECK_MESSAGE(shape_numel(value.shape) == 1, value.name);
    check_reference_against_torch(graph, dir, 5e-3);
  }
  OnnxOptions integer;
  integer.float_dtype = DType::kI32;
  const Status error = load_error(std::string(VKFUSE_TEST_DATA_DIR) + "/models/tiny_cnn/model.onnx", integer);
  CHECK(error.message().find("float_dtype is i32; float tensors can run as f32 or f16") != std::string::npos);
}

TEST_CASE("TensorProto files: every storage form decodes to vkfuse dtypes") {
  auto read = [](const std::string& name) {
    auto file = read_tensor_pb_file(kOnnxDir + "/tensors/" + name + ".pb");
    REQUIRE_MESSAGE(file.ok(), file.status().to_string());
    CHECK(file->name == name);
    return file->tensor;
  };
  auto expect = [&](const std::string& name, DType dtype, Shape shape, std::vector<float> values) {
    INFO(name);
    const HostTensor t = read(name);
    CHECK(t.dtype == dtype);
    CHECK(t.shape == shape);
    CHECK(t.to_floats() == values);
  };
  expect("float_raw", DType::kF32, {2, 2}, {1.5f, -2.0f, 0.25f, 3.0f});
  expect("float_typed", DType::kF32, {3}, {1.5f, -2.0f, 0.25f});
  expect("double_typed", DType::kF32, {2}, {0.1f, -1000.0f});
  expect("float16_raw", DType::kF16, {3}, {1.0f, -0.5f, 65504.0f});
  expect("float16_typed", DType::kF16, {2}, {1.0f, -2.0f});
  expect("int64_raw", DType::kI32, {3}, {3.0f, -4.0f, 2147483647.0f});
  expect("int64_typed", DType::kI32, {2}, {7.0f, -8.0f});
  expect("int8_raw", DType::kI32, {2}, {-128.0f, 127.0f});
  expect("uint8_typed", DType::kI32, {3}, {0.0f, 200.0f, 255.0f});
  expect("int16_raw", DType::kI32, {2}, {-300.0f, 300.0f});
  expect("int32_typed", DType::kI32, {2, 1}, {-5.0f, 6.0f});
  expect("bool_raw", DType::kBool, {3}, {1.0f, 0.0f, 1.0f});
  expect("bool_typed", DType::kBool, {2}, {0.0f, 1.0f});
  expect("scalar", DType::kF32, {}, {4.5f});
  expect("external", DType::kF32, {2}, {7.0f, 6.0f});

  auto error = [](const std::string& name) {
    auto file = read_tensor_pb_file(kOnnxDir + "/tensors/" + name + ".pb");
    REQUIRE_FALSE(file.ok());
    return file.status().message();
  };
  const std::string dir = kOnnxDir + "/tensors/";
  CHECK(error("int64_too_big") == "tensor file '" + dir + "int64_too_big.pb' ('int64_too_big'): element 1 (1099511627776) "
                                  "does not fit in int32, which vkfuse uses for INT64");
  CHECK(error("string") == "tensor file '" + dir + "string.pb' ('string') is STRING; vkfuse reads float, integer and bool tensors");
  CHECK(error("typed_count_mismatch") ==
        "tensor file '" + dir + "typed_count_mismatch.pb' ('typed_count_mismatch'): holds 2 values for 3 elements");
  CHECK(error("negative_dims") == "tensor file '" + dir + "negative_dims.pb' ('negative_dims'): has a negative dimension in [2,-1]");
  CHECK(read_tensor_pb_file(kOnnxDir + "/bad/not_protobuf.onnx").status().code() == ErrorCode::kInvalidArgument);
}

}  // namespace vkfuse::testing
