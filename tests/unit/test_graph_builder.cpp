// GraphBuilder: shape and dtype inference, and the errors a user gets for a bad graph (which node,
// which op, which shapes).
#include <doctest/doctest.h>

#include <string>

#include "host/graph.h"

namespace vkfuse {
namespace {

// The error build() reports; fails the test if the graph builds.
Status build_error(GraphBuilder& b) {
  auto graph = b.build();
  REQUIRE_FALSE(graph.ok());
  return graph.status();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Output shape of `op_type` on one [10] input with `attrs` (Slice), or of a [2,3,4] input (reductions).
Shape unary_shape(const char* op_type, Shape input, const std::vector<Attr>& attrs) {
  GraphBuilder b;
  const Tensor y = b.op(op_type, {b.input("x", std::move(input))}, attrs);
  REQUIRE_MESSAGE(b.status().ok(), b.status().to_string());
  return b.shape(y);
}

}  // namespace

TEST_CASE("a broadcast mismatch names the node and both shapes") {
  GraphBuilder b;
  const Tensor y = b.op("Add", {b.input("a", {3, 4}), b.input("b", {5})}, {}, "my_add");
  CHECK_FALSE(y.valid());
  const Status s = build_error(b);
  CHECK(s.code() == ErrorCode::kInvalidArgument);
  CHECK(s.message() == "node 'my_add' (Add): shapes [3,4] and [5] (input 1, 'b') do not broadcast");
}

TEST_CASE("an unknown op names the op") {
  GraphBuilder b;
  CHECK_FALSE(b.op("Frobnicate", {b.input("x", {4})}).valid());
  const Status s = build_error(b);
  CHECK(s.code() == ErrorCode::kNotFound);
  CHECK(s.message() == "node 'Frobnicate_0': unknown op 'Frobnicate'");
}

TEST_CASE("an unknown attribute names the attribute, the node and the op") {
  GraphBuilder b;
  b.op("Relu", {b.input("x", {4})}, {{"alpha", 0.1f}});
  const Status s = build_error(b);
  CHECK(s.code() == ErrorCode::kInvalidArgument);
  CHECK(s.message() == "node 'Relu_0' (Relu): unknown attribute 'alpha'");
}

TEST_CASE("the first error is kept and later dependent calls fail quietly") {
  GraphBuilder b;
  const Tensor bad = b.op("Add", {b.input("a", {3}), b.input("b", {4})});
  const Tensor later = b.op("Relu", {bad});
  CHECK_FALSE(later.valid());
  b.output(later, "y");
  CHECK(contains(b.status().message(), "shapes [3] and [4]"));
  CHECK(contains(build_error(b).message(), "node 'Add_0' (Add)"));
}

TEST_CASE("empty and output-less graphs do not build") {
  {
    GraphBuilder b;
    b.input("x", {4});
    CHECK(build_error(b).message() == "the graph has no nodes");
  }
  {
    GraphBuilder b;
    b.op("Relu", {b.input("x", {4})});
    CHECK(build_error(b).message() == "the graph has no outputs");
  }
}

TEST_CASE("zero-size and negative dimensions are rejected") {
  {
    GraphBuilder b;
    CHECK_FALSE(b.input("x", {0, 3}).valid());
    const Status s = build_error(b);
    CHECK(s.code() == ErrorCode::kInvalidArgument);
    CHECK(s.message() == "input 'x' has shape [0,3]: zero-size tensors are not supported");
  }
  {
    GraphBuilder b;
    CHECK_FALSE(b.input("x", {2, -1}).valid());
    CHECK(build_error(b).message() == "input 'x' has shape [2,-1]: dimensions must be positive");
  }
}

TEST_CASE("inputs of different float dtypes need a Cast") {
  GraphBuilder b;
  b.op("Add", {b.input("a", {4}), b.input("h", {4}, DType::kF16)});
  const Status s = build_error(b);
  CHECK(s.code() == ErrorCode::kInvalidArgument);
  CHECK(s.message() == "node 'Add_0' (Add): inputs are f32 and f16; insert a Cast");
}

TEST_CASE("an input of the wrong class names the input and the expected dtypes") {
  GraphBuilder b;
  b.op("Not", {b.input("x", {4})});
  CHECK(build_error(b).message() == "node 'Not_0' (Not): input 0 ('x') is f32, expected bool");
}

TEST_CASE("duplicate node names are rejected") {
  // Node::name is documented as unique (host/graph.h); errors and dumps identify nodes by it.
  GraphBuilder b;
  const Tensor x = b.input("x", {4});
  const Tensor a = b.op("Relu", {x}, {}, "act");
  CHECK_FALSE(b.op("Neg", {a}, {}, "act").valid());
  CHECK(build_error(b).message() == "two nodes are named 'act'");

  // A generated name steps aside for a given one.
  GraphBuilder c;
  const Tensor r = c.op("Relu", {c.input("x", {4})}, {}, "Relu_1");
  c.output(c.op("Relu", {r}), "y");
  auto graph = c.build();
  REQUIRE(graph.ok());
  CHECK(graph_ir(*graph).node(0).name == "Relu_1");
  CHECK(graph_ir(*graph).node(1).name != "Relu_1");
}

TEST_CASE("output dtypes follow the type rules") {
  GraphBuilder b;
  const Tensor h = b.input("h", {2, 3}, DType::kF16);
  const Tensor i = b.input("i", {3}, DType::kI32);
  const Tensor cond = b.op("Greater", {h, h});
  CHECK(b.dtype(cond) == DType::kBool);
  CHECK(b.dtype(b.op("Not", {cond})) == DType::kBool);
  CHECK(b.dtype(b.op("Relu", {h})) == DType::kF16);
  const Tensor w = b.op("Where", {cond, i, i});
  CHECK(b.dtype(w) == DType::kI32);
  CHECK(b.shape(w) == Shape{2, 3});
  CHECK(b.dtype(b.op("Cast", {h}, {{"to", static_cast<float>(DType::kI32)}})) == DType::kI32);
  CHECK(b.dtype(b.op("Cast", {i}, {{"to", static_cast<float>(DType::kF16)}})) == DType::kF16);
  CHECK(b.dtype(b.op("Cast", {i})) == DType::kF32);  // "to" defaults to f32
  CHECK(b.status().ok());

  SUBCASE("Where branches must agree") {
    b.op("Where", {cond, h, i});
    CHECK(contains(b.status().message(), "branches are f16 and i32"));
  }
  SUBCASE("Cast to a value that is not a dtype") {
    b.op("Cast", {h}, {{"to", 7}});
    CHECK(contains(b.status().message(), "'to' = 7 is not a dtype"));
  }
}

TEST_CASE("Slice follows ONNX semantics for one axis") {
  using A = std::vector<Attr>;
  CHECK(unary_shape("Slice", {10}, A{{"start", -3}}) == Shape{3});                    // 7, 8, 9
  CHECK(unary_shape("Slice", {10}, A{{"start", 2}, {"end", 100}}) == Shape{8});       // end clamps
  CHECK(unary_shape("Slice", {10}, A{{"start", -20}, {"end", 4}}) == Shape{4});       // start clamps
  CHECK(unary_shape("Slice", {10}, A{{"start", 1}, {"step", 2}}) == Shape{5});        // 1, 3, 5, 7, 9
  CHECK(unary_shape("Slice", {10}, A{{"start", 0}, {"end", 9}, {"step", 3}}) == Shape{3});  // 0, 3, 6
  CHECK(unary_shape("Slice", {10}, A{{"start", -1}, {"end", -2147483647.0f}, {"step", -1}}) == Shape{10});
  CHECK(unary_shape("Slice", {10}, A{{"start", 8}, {"end", 0}, {"step", -2}}) == Shape{4});  // 8, 6, 4, 2
  CHECK(unary_shape("Slice", {3, 10}, A{{"axis", -1}, {"start", 1}, {"end", -1}}) == Shape{3, 8});
  CHECK(unary_shape("Slice", {3, 10}, A{{"axis", 0}, {"start", 1}}) == Shape{2, 10});

  GraphBuilder b;
  const Tensor x = b.input("x", {10});
  SUBCASE("an empty result is an error") {
    b.op("Slice", {x}, {{"start", 5}, {"end", 5}}, "s");
    CHECK(b.status().message() == "node 's' (Slice): the result [0] would be empty");
  }
  SUBCASE("step 0 is an error") {
    b.op("Slice", {x}, {{"step", 0}}, "s");
    CHECK(b.status().message() == "node 's' (Slice): Slice step is 0");
  }
  SUBCASE("axis out of range") {
    b.op("Slice", {x}, {{"axis", 1}}, "s");
    CHECK(b.status().message() == "node 's' (Slice): Slice axis 1 is out of range for rank 1");
  }
}

TEST_CASE("reductions reduce the trailing axes from 'axis', keeping them as ones with keepdims") {
  using A = std::vector<Attr>;
  const Shape x{2, 3, 4};
  CHECK(unary_shape("ReduceSum", x, A{}) == Shape{1, 1, 1});
  CHECK(unary_shape("ReduceSum", x, A{{"keepdims", 0}}) == Shape{});
  CHECK(unary_shape("ReduceSum", x, A{{"axis", 1}}) == Shape{2, 1, 1});
  CHECK(unary_shape("ReduceMean", x, A{{"axis", 1}, {"keepdims", 0}}) == Shape{2});
  CHECK(unary_shape("ReduceMax", x, A{{"axis", -1}, {"keepdims", 0}}) == Shape{2, 3});
  CHECK(unary_shape("ReduceMin", x, A{{"axis", -1}}) == Shape{2, 3, 1});

  GraphBuilder b;
  b.op("ReduceSum", {b.input("x", x)}, {{"axis", 3}}, "r");
  CHECK(b.status().message() == "node 'r' (ReduceSum): axis 3 is out of range for shape [2,3,4]");
}

TEST_CASE("broadcasting follows numpy rules") {
  CHECK(broadcast_shapes({8, 1, 4}, {3, 1}) == Shape{8, 3, 4});
  CHECK(broadcast_shapes({}, {2, 3}) == Shape{2, 3});
  CHECK(broadcast_shapes({2, 3}, {3, 2}) == std::nullopt);

  GraphBuilder b;
  const Tensor y = b.op("Mul", {b.input("a", {5, 1}), b.input("b", {1, 7})});
  CHECK(b.shape(y) == Shape{5, 7});
  b.output(y, "y");
  auto graph = b.build();
  REQUIRE(graph.ok());
  CHECK(graph->node_count() == 1);
  CHECK(graph->input_count() == 2);
  CHECK(graph->output_count() == 1);
  CHECK(graph_ir(*graph).value(graph_ir(*graph).outputs[0]).name == "y");
}

TEST_CASE("a moved-from GraphBuilder makes no tensors, and status() and build() say it was moved from") {
  GraphBuilder b;
  const Tensor x = b.input("x", {4});
  GraphBuilder moved_to = std::move(b);
  // NOLINTBEGIN(bugprone-use-after-move): what this test is about
  CHECK_FALSE(b.input("y", {4}).valid());
  CHECK_FALSE(b.constant(HostTensor::from_floats({1}, {1.0f})).valid());
  CHECK_FALSE(b.scalar(2.0f).valid());
  CHECK_FALSE(b.op("Relu", {x}).valid());
  b.output(x, "z");
  b.set_source_op_count(3);
  b.set_dim_names("x", {"n"});
  CHECK(b.shape(x).empty());
  CHECK(b.status().code() == ErrorCode::kInvalidArgument);
  CHECK(contains(b.status().message(), "moved from"));
  const Status built = build_error(b);
  CHECK(contains(built.message(), "GraphBuilder::build"));
  CHECK(contains(built.message(), "moved from"));
  // NOLINTEND(bugprone-use-after-move)
  moved_to.output(moved_to.op("Relu", {x}), "y");
  auto graph = moved_to.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  CHECK(graph->node_count() == 1);
  Graph copy = *graph;
  Graph moved_graph = std::move(copy);
  CHECK(copy.node_count() == 0);  // NOLINT(bugprone-use-after-move)
  CHECK(copy.inputs().empty());
  CHECK(moved_graph.node_count() == 1);
}

}  // namespace vkfuse
