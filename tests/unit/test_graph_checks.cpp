// Hostile graphs through both front ends: values defined twice or never (ONNX single assignment),
// input and output names that clash (GraphBuilder), and shape arithmetic that overflows int64. Each is
// one clear error naming the node(s), the op and the value.
#include <doctest/doctest.h>

#include <limits>

#include <vkfuse/onnx.hpp>

#include "host/graph.h"
#include "support/onnx_model.h"

namespace vkfuse::testing {
namespace {

constexpr const char* kName = "m.onnx";
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

std::string import_error(const OnnxModel& model) {
  const std::string bytes = model.bytes();
  auto graph = load_onnx_from_memory(bytes.data(), bytes.size(), {}, kName);
  REQUIRE_FALSE(graph.ok());
  CHECK(graph.status().code() == ErrorCode::kInvalidArgument);
  return graph.status().message();
}

std::string build_error(GraphBuilder& b) {
  auto graph = b.build();
  REQUIRE_FALSE(graph.ok());
  return graph.status().message();
}

OnnxModel relu_model() {
  OnnxModel m;
  m.input("x", {2, 3}).output("y", {2, 3});
  return m;
}

const std::string kContext = std::string(kName) + " (opset 13): ";

TEST_CASE("ONNX: a value written by two nodes names both nodes and the value") {
  OnnxModel m = relu_model();
  m.node("Relu", {"x"}, {"y"}, "first").node("Neg", {"x"}, {"y"}, "second");
  CHECK(import_error(m) == kContext + "node 'second' (Neg): output 'y' is already defined by node 'first' (Relu)");
}

TEST_CASE("ONNX: a node output that redefines a graph input or an initializer is refused") {
  OnnxModel input = relu_model();
  input.node("Relu", {"x"}, {"x"}, "again").node("Neg", {"x"}, {"y"}, "neg");
  CHECK(import_error(input) == kContext + "node 'again' (Relu): output 'x' is already defined by the graph input 'x'");

  OnnxModel init = relu_model();
  init.floats("w", {2, 3}, std::vector<float>(6, 1.0f)).node("Relu", {"x"}, {"w"}, "shadow").node("Add", {"x", "w"}, {"y"}, "add");
  CHECK(import_error(init) == kContext + "node 'shadow' (Relu): output 'w' is already defined by the initializer 'w'");

  OnnxModel twice = relu_model();  // an unnamed node goes by <op>_<index>
  twice.floats("w", {2, 3}, std::vector<float>(6, 1.0f)).floats("w", {2, 3}, std::vector<float>(6, 2.0f));
  twice.node("Add", {"x", "w"}, {"y"});
  CHECK(import_error(twice) == kContext + "two initializers are named 'w'");

  OnnxModel split = relu_model();
  split.node("Split", {"x"}, {"y", "y"}, "split");
  CHECK(import_error(split) == kContext + "node 'split' (Split) lists output 'y' twice");
}

TEST_CASE("ONNX: an undefined input is refused in dead nodes too, and a graph output needs a name") {
  OnnxModel dead = relu_model();
  dead.node("Relu", {"x"}, {"y"}, "relu").node("Neg", {"nowhere"}, {"unused"}, "dead");
  CHECK(import_error(dead) ==
        kContext + "node 'dead' (Neg): input 'nowhere' is not an initializer, a graph input or the output of an earlier node");

  OnnxModel unnamed = relu_model();
  unnamed.output("", {2, 3}).node("Relu", {"x"}, {"y"}, "relu");
  CHECK(import_error(unnamed) == kContext + "graph output 1 has no name");
}

TEST_CASE("ONNX: a model whose node names repeat its value names still imports (they are separate names)") {
  OnnxModel m = relu_model();
  m.node("Relu", {"x"}, {"r"}, "r").node("Neg", {"r"}, {"y"}, "x");
  const std::string bytes = m.bytes();
  auto graph = load_onnx_from_memory(bytes.data(), bytes.size(), {}, kName);
  CHECK_MESSAGE(graph.ok(), graph.status().to_string());
}

TEST_CASE("GraphBuilder: inputs and outputs need names of their own") {
  {
    GraphBuilder b;
    const Tensor x = b.input("x", {4});
    b.output(b.op("Relu", {x}), "x");
    CHECK(build_error(b) == "output 'x' has the name of a graph input");
  }
  {
    GraphBuilder b;
    b.output(b.op("Relu", {b.input("x", {4})}), "");
    CHECK(build_error(b) == "a graph output has an empty name; executions find it by name");
  }
  {
    GraphBuilder b;
    b.output(b.op("Relu", {b.input("x", {4})}), "y");
    b.input("y", {4});
    CHECK(build_error(b) == "input 'y' has the name of a graph output");
  }
  {
    GraphBuilder b;
    b.input("", {4});
    CHECK(build_error(b) == "a graph input has an empty name; executions find it by name");
  }
}

TEST_CASE("ONNX: a Tile whose output overflows int64 names the node, the op and the values") {
  auto tile = [](std::vector<std::int64_t> repeats) {
    OnnxModel m = relu_model();
    m.int64s("repeats", repeats).node("Tile", {"x", "repeats"}, {"y"}, "tile0");
    return import_error(m);
  };
  CHECK(tile({1, std::int64_t{1} << 62}) == kContext + "node 'tile0' (Tile): output dim 1 = 3 * 4611686018427387904 overflows int64");
  CHECK(tile({std::int64_t{1} << 40, std::int64_t{1} << 40}) ==
        kContext + "node 'tile0' (Tile): the output [2199023255552,3298534883328]: the element count overflows int64");
  // Past the kernels' 2^31 elements without overflowing: the limit error, as before.
  const std::string bytes = [] {
    OnnxModel m = relu_model();
    m.int64s("repeats", {1, std::int64_t{1} << 30}).node("Tile", {"x", "repeats"}, {"y"}, "tile0");
    return m.bytes();
  }();
  auto graph = load_onnx_from_memory(bytes.data(), bytes.size(), {}, kName);
  REQUIRE_FALSE(graph.ok());
  CHECK(graph.status().code() == ErrorCode::kUnsupported);
  CHECK(graph.status().message() ==
        kContext + "node 'tile0' (Tile): the output [2,3221225472] has 6442450944 elements; kernel ops index below 2^31");
}

TEST_CASE("GraphBuilder: Pad and ConvTranspose sizes from huge attributes are overflow errors, not wrapped sizes") {
  {
    GraphBuilder b;
    b.op("Pad", {b.input("x", {2, 3})}, {Attr{"pads", {0, kMax, 0, 1}}}, "pad0");
    CHECK(build_error(b) == "node 'pad0' (Pad): output dim 1 = 3 + 9223372036854775807 overflows int64");
  }
  {
    GraphBuilder b;
    const Tensor w = b.constant(HostTensor::from_floats({1, 1, 1, 1}, {1.0f}), "w");
    b.op("ConvTranspose", {b.input("x", {1, 1, 3, 3}), w}, {Attr{"strides", {std::int64_t{1} << 62, 1}}}, "up");
    CHECK(build_error(b) == "node 'up' (ConvTranspose): the output height = 4611686018427387904 * 2 overflows int64");
  }
}

}  // namespace
}  // namespace vkfuse::testing
