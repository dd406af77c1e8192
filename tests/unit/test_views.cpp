// Views (Reshape, Transpose, Squeeze, Unsqueeze, Flatten) as strided-layout transforms, the builder's
// copy where a view cannot be expressed over a strided input, the lowering of ONNX reduction axes,
// and composite expansion: shapes, strides, node structure, planned group counts and error messages.
// No GPU: tests/gpu/test_composite_ops.cpp runs the same ops on the device.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "backend/device_plan.h"
#include "host/copy_placement.h"
#include "host/fusion_planner.h"
#include "host/graph.h"
#include "host/group_kernel.h"
#include "host/op_registry.h"
#include "host/shape_inference.h"
#include "host/view_reorder.h"

namespace vkfuse {
namespace {

using Ints = std::vector<std::int64_t>;

// `op` applied to `layout` with the given lists and scalars (the rest at the row's defaults).
Result<StridedLayout> apply(const char* op, StridedLayout layout, const AttrLists& lists = {},
                            const std::vector<std::pair<std::string, float>>& scalars = {}) {
  const OpDef* def = find_op(op);
  REQUIRE_MESSAGE(def != nullptr, op);
  REQUIRE(def->kind == OpKind::kView);
  std::vector<float> values;
  for (const AttrDef& a : def->attrs) {
    values.push_back(a.default_value);
    for (const auto& [name, value] : scalars)
      if (a.name == name) values.back() = value;
  }
  const OpAttrs attrs{values, lists};
  if (Status s = def->view(layout, attrs); !s.ok()) return s;
  return layout;
}

StridedLayout contiguous(const Shape& shape) { return contiguous_layout(shape); }

// The layout `op` gives over a contiguous tensor of `shape` (REQUIREs success).
StridedLayout view_of(const char* op, const Shape& shape, const AttrLists& lists = {},
                      const std::vector<std::pair<std::string, float>>& scalars = {}) {
  auto out = apply(op, contiguous(shape), lists, scalars);
  REQUIRE_MESSAGE(out.ok(), out.status().to_string());
  return *out;
}

// The error message of `op` over `layout`; fails the test if it succeeds.
std::string error_of(const char* op, const StridedLayout& layout, const AttrLists& lists = {},
                     const std::vector<std::pair<std::string, float>>& scalars = {},
                     ErrorCode code = ErrorCode::kInvalidArgument) {
  auto out = apply(op, layout, lists, scalars);
  REQUIRE_FALSE(out.ok());
  CHECK(out.status().code() == code);
  return out.status().message();
}

Graph build_graph(GraphBuilder& b) {
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  return std::move(graph).value();
}

// "Transpose Identity Reshape": the op of every node, in order.
std::string ops_of(const Graph& graph) {
  std::string out;
  for (const Node& node : graph_ir(graph).nodes) out += (out.empty() ? "" : " ") + std::string(node.op->name);
  return out;
}

std::string labels_of(const Graph& graph) {
  auto plan = plan_fusion(graph_ir(graph), DevicePlan{}, FusionMode::kFused);
  REQUIRE_MESSAGE(plan.ok(), plan.status().to_string());
  std::string out;
  for (const FusionGroup& g : plan->groups) out += (out.empty() ? "" : " | ") + g.label;
  return out;
}

std::size_t group_count(const Graph& graph) {
  auto plan = plan_fusion(graph_ir(graph), DevicePlan{}, FusionMode::kFused);
  REQUIRE_MESSAGE(plan.ok(), plan.status().to_string());
  return plan->groups.size();
}

}  // namespace

TEST_CASE("Reshape: ONNX targets with 0 and -1 over a contiguous tensor") {
  const Shape x{2, 3, 4};
  StridedLayout v = view_of("Reshape", x, {{"shape", {4, -1}}});
  CHECK(v.shape == Shape{4, 6});
  CHECK(v.strides == Ints{6, 1});
  v = view_of("Reshape", x, {{"shape", {0, -1}}});  // 0 copies the input's dim 0
  CHECK(v.shape == Shape{2, 12});
  v = view_of("Reshape", x, {{"shape", {2, 0, 2, 2}}});
  CHECK(v.shape == Shape{2, 3, 2, 2});
  CHECK(v.strides == Ints{12, 4, 2, 1});
  v = view_of("Reshape", x, {{"shape", {-1}}});
  CHECK(v.shape == Shape{24});
  CHECK(v.strides == Ints{1});
  v = view_of("Reshape", x, {{"shape", {1, 24, 1}}});
  CHECK(v.strides == Ints{24, 1, 1});  // size-1 dims get contiguous strides
  v = view_of("Reshape", {1}, {{"shape", Ints{}}});  // to a scalar
  CHECK(v.shape == Shape{});
}

TEST_CASE("Reshape merges and splits strided dims where they form one block, and says which do not") {
  // [3,4] transposed: shape [4,3], strides [1,4].
  const StridedLayout transposed{{4, 3}, {1, 4}, 0};
  auto split = apply("Reshape", transposed, {{"shape", {2, 2, 3}}});
  REQUIRE(split.ok());
  CHECK(split->strides == Ints{2, 1, 4});
  CHECK(error_of("Reshape", transposed, {{"shape", {12}}}, {}, ErrorCode::kUnsupported) ==
        "Reshape to [12]: dims 0 and 1 of the strided input [4,3] (strides [1,4]) are not one block in memory");
  // Columns 2..4 of a [4,6] tensor: rows stay apart, each row's three elements are one block.
  const StridedLayout columns{{4, 3}, {6, 1}, 2};
  auto rows = apply("Reshape", columns, {{"shape", {2, 2, 3}}});
  REQUIRE(rows.ok());
  CHECK(rows->strides == Ints{12, 6, 1});
  CHECK(rows->offset == 2);
  auto with_ones = apply("Reshape", columns, {{"shape", {4, 1, 3, 1}}});
  REQUIRE(with_ones.ok());
  CHECK(with_ones->strides == Ints{6, 3, 1, 1});
  CHECK(error_of("Reshape", columns, {{"shape", {3, 4}}}, {}, ErrorCode::kUnsupported) ==
        "Reshape to [3,4]: dims 0 and 1 of the strided input [4,3] (strides [6,1]) are not one block in memory");
  // Reversed rows ([3,4] with step -1 on axis 0): a split of the reversed axis still works.
  const StridedLayout reversed{{4, 3}, {-3, 1}, 9};
  auto halves = apply("Reshape", reversed, {{"shape", {2, 2, 3}}});
  REQUIRE(halves.ok());
  CHECK(halves->strides == Ints{-6, -3, 1});
}

TEST_CASE("Reshape errors name the target, the input and the element counts") {
  const StridedLayout x = contiguous({2, 3, 4});
  CHECK(error_of("Reshape", x) == "Reshape needs the list attribute 'shape'");
  CHECK(error_of("Reshape", x, {{"shape", {5, 5}}}) == "shape [5,5] has 25 elements, the input [2,3,4] has 24");
  CHECK(error_of("Reshape", x, {{"shape", {-1, 2, -1}}}) == "shape [-1,2,-1] has more than one -1 (entries 0 and 2)");
  CHECK(error_of("Reshape", x, {{"shape", {5, -1}}}) ==
        "shape [5,-1]: the input [2,3,4] has 24 elements, which the other entries' product 5 does not divide");
  CHECK(error_of("Reshape", x, {{"shape", {2, -2, 6}}}) == "shape [2,-2,6]: entry 1 is -2 (only -1 may be negative)");
  CHECK(error_of("Reshape", x, {{"shape", {2, 3, 2, 0}}}) ==
        "shape [2,3,2,0]: entry 3 is 0 (copy the input's dim), but the input [2,3,4] has rank 3");
}

TEST_CASE("Transpose permutes shape and strides; the default reverses the axes") {
  StridedLayout v = view_of("Transpose", {2, 3, 4});
  CHECK(v.shape == Shape{4, 3, 2});
  CHECK(v.strides == Ints{1, 4, 12});
  v = view_of("Transpose", {2, 3, 4}, {{"perm", {1, 0, 2}}});
  CHECK(v.shape == Shape{3, 2, 4});
  CHECK(v.strides == Ints{4, 12, 1});
  // Moving a size-1 dim keeps a contiguous tensor contiguous.
  v = view_of("Transpose", {2, 1, 3}, {{"perm", {1, 0, 2}}});
  CHECK(v.shape == Shape{1, 2, 3});
  CHECK(v.strides == contiguous({1, 2, 3}).strides);
  // Over a strided view, offsets stay.
  auto sliced = apply("Transpose", StridedLayout{{4, 3}, {6, 1}, 2});
  REQUIRE(sliced.ok());
  CHECK(sliced->strides == Ints{1, 6});
  CHECK(sliced->offset == 2);

  const StridedLayout x = contiguous({2, 3, 4});
  CHECK(error_of("Transpose", x, {{"perm", {1, 0}}}) == "Transpose perm [1,0] has 2 entries, the input [2,3,4] has rank 3");
  CHECK(error_of("Transpose", x, {{"perm", {0, 0, 1}}}) == "Transpose perm [0,0,1] names axis 0 twice");
  CHECK(error_of("Transpose", x, {{"perm", {0, 3, 1}}}) == "Transpose perm [0,3,1]: 3 is not an axis of rank 3");
  CHECK(error_of("Transpose", x, {{"perm", {0, -1, 1}}}) == "Transpose perm [0,-1,1]: -1 is not an axis of rank 3");
}

TEST_CASE("Squeeze drops size-1 axes (all by default, negative axes from the end)") {
  StridedLayout v = view_of("Squeeze", {1, 3, 1, 2});
  CHECK(v.shape == Shape{3, 2});
  CHECK(v.strides == Ints{2, 1});
  v = view_of("Squeeze", {1, 3, 1, 2}, {{"axes", {-2}}});
  CHECK(v.shape == Shape{1, 3, 2});
  v = view_of("Squeeze", {1, 1}, {});
  CHECK(v.shape == Shape{});
  auto strided = apply("Squeeze", StridedLayout{{4, 1, 3}, {6, 3, 1}, 2}, {{"axes", {1}}});
  REQUIRE(strided.ok());
  CHECK(strided->strides == Ints{6, 1});
  CHECK(strided->offset == 2);

  const StridedLayout x = contiguous({1, 3, 1, 2});
  CHECK(error_of("Squeeze", x, {{"axes", {1}}}) == "Squeeze axis 1 of [1,3,1,2] has size 3, not 1");
  CHECK(error_of("Squeeze", x, {{"axes", {0, -4}}}) == "Squeeze axes [0,-4] name axis 0 twice");
  CHECK(error_of("Squeeze", x, {{"axes", {4}}}) == "Squeeze axis 4 is out of range for rank 4");
}

TEST_CASE("Unsqueeze inserts size-1 axes; negative axes count from the end of the output") {
  StridedLayout v = view_of("Unsqueeze", {3, 4}, {{"axes", {0, -1}}});
  CHECK(v.shape == Shape{1, 3, 4, 1});
  CHECK(v.strides == Ints{12, 4, 1, 1});
  v = view_of("Unsqueeze", {3, 4}, {{"axes", {1}}});
  CHECK(v.shape == Shape{3, 1, 4});
  CHECK(v.strides == Ints{4, 4, 1});
  v = view_of("Unsqueeze", {}, {{"axes", {0}}});  // a scalar becomes [1]
  CHECK(v.shape == Shape{1});
  v = view_of("Unsqueeze", {3, 4}, {{"axes", {-2, 0}}});  // output rank 4: -2 is axis 2
  CHECK(v.shape == Shape{1, 3, 1, 4});

  const StridedLayout x = contiguous({3, 4});
  CHECK(error_of("Unsqueeze", x) == "Unsqueeze needs the list attribute 'axes'");
  CHECK(error_of("Unsqueeze", x, {{"axes", {3}}}) == "Unsqueeze axis 3 is out of range for rank 3");
  CHECK(error_of("Unsqueeze", x, {{"axes", {1, -3}}}) == "Unsqueeze axes [1,-3] name axis 1 twice");
}

TEST_CASE("Flatten makes two dims around 'axis' (0 to rank, negative from the end)") {
  const Shape x{2, 3, 4};
  CHECK(view_of("Flatten", x).shape == Shape{2, 12});  // axis 1 by default
  CHECK(view_of("Flatten", x, {}, {{"axis", 0}}).shape == Shape{1, 24});
  CHECK(view_of("Flatten", x, {}, {{"axis", 3}}).shape == Shape{24, 1});
  CHECK(view_of("Flatten", x, {}, {{"axis", -1}}).shape == Shape{6, 4});
  CHECK(view_of("Flatten", x, {}, {{"axis", -1}}).strides == Ints{4, 1});
  CHECK(error_of("Flatten", contiguous(x), {}, {{"axis", 4}}) ==
        "Flatten axis 4 is out of range for rank 3 (allowed: -rank to rank)");
  // A transposed [3,4] ([4,3], strides [1,4]) flattened at axis 1 merges nothing: the same view.
  auto same = apply("Flatten", StridedLayout{{4, 3}, {1, 4}, 0});
  REQUIRE(same.ok());
  CHECK(same->strides == Ints{1, 4});
  // A transposed [3,4,5] ([5,4,3], strides [1,5,20]): axis 1 merges dims 1 and 2, axis 2 dims 0 and
  // 1; neither pair is one block.
  CHECK(error_of("Flatten", StridedLayout{{5, 4, 3}, {1, 5, 20}, 0}, {}, {}, ErrorCode::kUnsupported) ==
        "Flatten to [5,12]: dims 1 and 2 of the strided input [5,4,3] (strides [1,5,20]) are not one block in memory");
  CHECK(error_of("Flatten", StridedLayout{{5, 4, 3}, {1, 5, 20}, 0}, {}, {{"axis", 2}}, ErrorCode::kUnsupported) ==
        "Flatten to [20,3]: dims 0 and 1 of the strided input [5,4,3] (strides [1,5,20]) are not one block in memory");
  // Rows 1..5 of a [10,4,3] tensor: every row is one block.
  auto rows = apply("Flatten", StridedLayout{{5, 4, 3}, {12, 3, 1}, 12});
  REQUIRE(rows.ok());
  CHECK(rows->shape == Shape{5, 12});
  CHECK(rows->strides == Ints{12, 1});
  CHECK(rows->offset == 12);
}

TEST_CASE("the builder copies a strided input for a view that cannot express itself over it") {
  GraphBuilder b;
  const Tensor x = b.input("x", {3, 4});
  const Tensor t = b.op("Transpose", {x}, {}, "t");
  const Tensor r = b.op("Reshape", {t}, {{"shape", Ints{12}}}, "r");
  const Tensor s = b.op("Reshape", {t}, {{"shape", Ints{2, 2, 3}}}, "s");  // a split: no copy
  b.output(b.op("Neg", {r}), "y");
  b.output(b.op("Neg", {s}), "z");
  const Graph graph = build_graph(b);
  CHECK(ops_of(graph) == "Transpose Identity Reshape Reshape Neg Neg");
  CHECK(graph_ir(graph).node(1).name == "r_contiguous");
  CHECK(graph_ir(graph).node(2).inputs[0] == graph_ir(graph).node(1).output);
  CHECK(graph_ir(graph).node(3).inputs[0] == graph_ir(graph).node(0).output);
  auto view = resolve_view(graph_ir(graph), graph_ir(graph).node(3).output);
  REQUIRE(view.ok());
  CHECK(view->layout.strides == Ints{2, 1, 4});
}

TEST_CASE("view errors in the builder name the node") {
  GraphBuilder b;
  const Tensor x = b.input("x", {2, 3, 4});
  b.op("Reshape", {x}, {{"shape", Ints{5, 5}}}, "r");
  CHECK(b.status().message() == "node 'r' (Reshape): shape [5,5] has 25 elements, the input [2,3,4] has 24");
  GraphBuilder c;
  c.op("Transpose", {c.input("x", {2, 3})}, {{"perm", 1.0f}}, "t");
  CHECK(c.status().message() == "node 't' (Transpose): unknown attribute 'perm'");  // a list, not a number
}

TEST_CASE("kernel ops read views: contiguous ones directly, strided ones through a copy or in place") {
  GraphBuilder b;
  const Tensor a = b.input("a", {3, 4});
  const Tensor w = b.input("w", {3, 5});
  const Tensor flat = b.input("flat", {20});
  // a^T [4,3] is strided: MatMul reads it in place (OpDef::strided_inputs), Gemm through a copy. flat as
  // [1,5,4] (Reshape, then Unsqueeze) is contiguous: read as is.
  const Tensor at = b.op("Transpose", {a}, {}, "at");
  const Tensor m1 = b.op("MatMul", {at, w}, {}, "m1");
  const Tensor w2 = b.op("Unsqueeze", {b.op("Reshape", {flat}, {{"shape", Ints{5, 4}}}, "r")}, {{"axes", Ints{0}}}, "u");
  const Tensor m2 = b.op("MatMul", {m1, w2}, {}, "m2");
  b.output(m2, "y");
  b.output(b.op("Gemm", {at, w}, {}, "g"), "z");
  const Graph graph = build_graph(b);
  CHECK(ops_of(graph) == "Transpose MatMul Reshape Unsqueeze MatMul Identity Gemm");
  CHECK(graph_ir(graph).value(graph_ir(graph).outputs[0]).shape == Shape{1, 4, 4});
}

TEST_CASE("MatMul copies a reversed view and an A view whose batches cannot stack against a shared B, reads the others in place") {
  GraphBuilder b;
  const Tensor x = b.input("x", {8, 7, 6});  // [batch, tokens, features]
  const Tensor w = b.input("w", {6, 5});
  const Tensor per_token = b.op("Transpose", {x}, {{"perm", Ints{1, 0, 2}}}, "tokens_first");  // [7, 8, 6]
  // Against one shared w the 7 x 8 rows would be 7 products of 8 rows, each reading w: copied.
  b.output(b.op("MatMul", {per_token, w}, {}, "shared"), "y");
  // Against a B per batch there is nothing to stack: read in place.
  b.output(b.op("MatMul", {per_token, b.input("wb", {7, 6, 5})}, {}, "batched"), "z");
  // A view whose batches do stack (whole batches from an offset) against a shared B: read in place; one
  // whose batches leave rows out between them (tokens 1..6 of each) is copied.
  b.output(b.op("MatMul", {b.op("Slice", {x}, {{"axis", 0}, {"start", 2}, {"end", 6}}), w}, {}, "batches"), "r");
  b.output(b.op("MatMul", {b.op("Slice", {x}, {{"axis", 1}, {"start", 1}, {"end", 7}}), w}, {}, "rows"), "s");
  const Graph graph = build_graph(b);
  CHECK(ops_of(graph) == "Transpose Identity MatMul MatMul Slice MatMul Slice Identity MatMul");
  // A reversed view (negative strides) is copied.
  GraphBuilder r;
  const Tensor reversed = r.op("Slice", {r.input("x", {6, 5})}, {{"axis", 0}, {"start", -1}, {"end", -7}, {"step", -1}});
  r.output(r.op("MatMul", {reversed, r.input("w", {5, 3})}), "y");
  CHECK(ops_of(build_graph(r)) == "Slice Identity MatMul");
}

TEST_CASE("ONNX reduction axes resolve to a permutation, the first trailing axis and the output shape") {
  auto resolve = [](const Shape& x, const Ints& axes, bool keepdims, bool noop = false) {
    auto r = resolve_reduce_axes(x, axes, keepdims, noop);
    REQUIRE_MESSAGE(r.ok(), r.status().to_string());
    return *r;
  };
  ReduceAxes r = resolve({2, 3, 4}, {1, 2}, true);  // already trailing
  CHECK(r.perm.empty());
  CHECK(r.first_axis == 1);
  CHECK(r.out_shape == Shape{2, 1, 1});
  r = resolve({2, 3, 4}, {0}, false);
  CHECK(r.perm == Ints{1, 2, 0});
  CHECK(r.permuted == Shape{3, 4, 2});
  CHECK(r.first_axis == 2);
  CHECK(r.out_shape == Shape{3, 4});
  r = resolve({2, 3, 4}, {-1, 0}, true);
  CHECK(r.perm == Ints{1, 0, 2});
  CHECK(r.first_axis == 1);
  CHECK(r.out_shape == Shape{1, 3, 1});
  r = resolve({2, 3, 4}, {}, false);  // all
  CHECK(r.perm.empty());
  CHECK(r.first_axis == 0);
  CHECK(r.out_shape == Shape{});
  r = resolve({2, 3, 4}, {}, true, true);  // no-op
  CHECK(r.noop);
  CHECK(r.out_shape == Shape{2, 3, 4});
  r = resolve({4, 1, 5}, {0, 2}, false);  // size-1 dims need no permutation
  CHECK(r.perm.empty());
  CHECK(r.first_axis == 0);
  CHECK(r.out_shape == Shape{1});
  r = resolve({3, 1, 4}, {2}, false);  // exactly the named trailing axis, though a size-1 dim precedes it
  CHECK(r.perm.empty());
  CHECK(r.first_axis == 2);
  CHECK(r.out_shape == Shape{3, 1});
  r = resolve({3, 4, 1, 5}, {1, 3}, true);  // the kept size-1 dim between them is folded too
  CHECK(r.perm.empty());
  CHECK(r.first_axis == 1);
  CHECK(r.out_shape == Shape{3, 1, 1, 1});
  r = resolve({1, 4}, {0}, true);  // only size-1 dims reduced: nothing to fold
  CHECK(r.first_axis == 2);
  CHECK(r.out_shape == Shape{1, 4});

  auto bad = resolve_reduce_axes({2, 3}, {0, 2}, true, false);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "axis 2 of axes [0,2] is out of range for shape [2,3]");
  bad = resolve_reduce_axes({2, 3}, {1, -1}, true, false);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message() == "axes [1,-1] name axis 1 twice");
}

TEST_CASE("reductions with ONNX axes lower to views around a trailing reduction") {
  using A = std::vector<Attr>;
  auto shape_of = [](const char* op, Shape x, const A& attrs) {
    GraphBuilder b;
    const Tensor y = b.op(op, {b.input("x", std::move(x))}, attrs);
    REQUIRE_MESSAGE(b.status().ok(), b.status().to_string());
    return b.shape(y);
  };
  const Shape x{2, 3, 4};
  CHECK(shape_of("ReduceSum", x, A{{"axes", Ints{0}}}) == Shape{1, 3, 4});
  CHECK(shape_of("ReduceSum", x, A{{"axes", Ints{0}}, {"keepdims", 0}}) == Shape{3, 4});
  CHECK(shape_of("ReduceMax", x, A{{"axes", Ints{1}}, {"keepdims", 0}}) == Shape{2, 4});
  CHECK(shape_of("ReduceProd", x, A{{"axes", Ints{}}}) == Shape{1, 1, 1});
  CHECK(shape_of("ReduceProd", x, A{{"axes", Ints{}}, {"keepdims", 0}}) == Shape{});
  CHECK(shape_of("ReduceMean", x, A{{"axes", Ints{}}, {"noop_with_empty_axes", 1}}) == Shape{2, 3, 4});
  CHECK(shape_of("ReduceL2", x, A{{"axes", Ints{-1, 0}}, {"keepdims", 0}}) == Shape{3});
  CHECK(shape_of("ReduceLogSumExp", x, A{{"axes", Ints{1}}}) == Shape{2, 1, 4});
  CHECK(shape_of("ReduceSumSquare", x, A{{"axis", 1}}) == Shape{2, 1, 1});  // the scalar form works too
  CHECK(shape_of("ReduceMin", {4, 1}, A{{"axes", Ints{0}}, {"keepdims", 0}}) == Shape{1});

  {
    GraphBuilder b;
    b.output(b.op("ReduceSum", {b.input("x", x)}, {{"axes", Ints{0}}}, "r"), "y");
    const Graph graph = build_graph(b);
    CHECK(ops_of(graph) == "Transpose ReduceSum Reshape Identity");
    CHECK(graph_ir(graph).node(1).name == "r");
    CHECK(graph_ir(graph).node(1).attrs == std::vector<float>{2.0f, 0.0f, 0.0f});
    CHECK(graph_ir(graph).node(1).lists.empty());
  }
  {
    GraphBuilder b;  // trailing axes with keepdims need neither view
    b.output(b.op("ReduceMean", {b.input("x", x)}, {{"axes", Ints{2, 1}}}, "r"), "y");
    const Graph graph = build_graph(b);
    CHECK(ops_of(graph) == "ReduceMean");
    CHECK(graph_ir(graph).node(0).attrs[0] == 1.0f);
  }
  {
    GraphBuilder b;
    b.op("ReduceSum", {b.input("x", x)}, {{"axes", Ints{3}}}, "r");
    CHECK(b.status().message() == "node 'r' (ReduceSum): axis 3 of axes [3] is out of range for shape [2,3,4]");
  }
  {
    GraphBuilder b;
    b.op("ReduceSum", {b.input("x", x)}, {{"axes", Ints{1}}, {"axis", 1}}, "r");
    CHECK(b.status().message() == "node 'r' (ReduceSum): give the scalar 'axis' or the list 'axes', not both");
  }
}

TEST_CASE("composites expand into primitives; the graph never holds a composite") {
  GraphBuilder b;
  const Tensor x = b.input("x", {7, 13});
  b.output(b.op("Softmax", {x}, {}, "sm"), "y");
  const Graph graph = build_graph(b);
  CHECK(ops_of(graph) == "ReduceMax Sub Exp ReduceSum Div");
  CHECK(graph_ir(graph).nodes.back().name == "sm");
  CHECK(graph_ir(graph).node(0).name == "sm/max");
  for (const Node& node : graph_ir(graph).nodes) CHECK(node.op->kind != OpKind::kComposite);

  GraphBuilder h;  // f16: computed in f32 between two casts
  h.output(h.op("Softmax", {h.input("x", {7, 13}, DType::kF16)}, {}, "sm"), "y");
  const Graph half = build_graph(h);
  CHECK(ops_of(half) == "Cast ReduceMax Sub Exp ReduceSum Div Cast");
  CHECK(graph_ir(half).value(graph_ir(half).outputs[0]).dtype == DType::kF16);

  GraphBuilder t;  // a middle axis: through a Transpose view and back
  t.output(t.op("Softmax", {t.input("x", {3, 5, 4})}, {{"axis", 1}}, "sm"), "y");
  const Graph middle = build_graph(t);
  CHECK(ops_of(middle) == "Transpose ReduceMax Sub Exp ReduceSum Div Transpose Identity");
  CHECK(graph_ir(middle).value(graph_ir(middle).outputs[0]).shape == Shape{3, 5, 4});

  GraphBuilder u;  // only size-1 dims after the axis: no Transpose needed
  u.output(u.op("Softmax", {u.input("x", {2, 4, 1, 1})}, {{"axis", 1}}), "y");
  CHECK(ops_of(build_graph(u)) == "ReduceMax Sub Exp ReduceSum Div");
}

TEST_CASE("composite errors name the composite node and what is wrong") {
  {
    GraphBuilder b;
    b.op("Softmax", {b.input("x", {7, 13})}, {{"axis", 2}}, "sm");
    CHECK(b.status().message() == "node 'sm' (Softmax): axis 2 is out of range for rank 2");
  }
  {
    GraphBuilder b;
    b.op("Softmax", {b.input("b", {4}, DType::kBool)}, {}, "sm");
    CHECK(b.status().message() == "node 'sm' (Softmax): input 0 ('b') is bool, expected f32 or f16");
  }
  {
    GraphBuilder b;
    b.op("LayerNormalization", {b.input("x", {2, 5})}, {}, "ln");
    CHECK(b.status().message() == "node 'ln' (LayerNormalization) takes 2 to 3 inputs, got 1");
  }
  {
    GraphBuilder b;
    b.op("LayerNormalization", {b.input("x", {2, 5}), b.input("s", {4})}, {}, "ln");
    CHECK(b.status().message() == "node 'ln' (LayerNormalization): scale [4] does not broadcast to x [2,5]");
  }
  {
    GraphBuilder b;
    b.op("LayerNormalization", {b.input("x", {2, 5}), b.input("s", {5}, DType::kF16)}, {}, "ln");
    CHECK(b.status().message() == "node 'ln' (LayerNormalization): scale is f16, x is f32; insert a Cast");
  }
  {
    GraphBuilder b;
    const Tensor c = b.input("c", {3});
    b.op("BatchNormalization", {b.input("x", {2, 3, 4}), c, c, b.input("m", {4}), c}, {}, "bn");
    CHECK(b.status().message() ==
          "node 'bn' (BatchNormalization): mean has shape [4]; x [2,3,4] has 3 channels, so it must be [3]");
  }
  {
    GraphBuilder b;
    const Tensor c = b.input("c", {3});
    b.op("BatchNormalization", {b.input("x", {3}), c, c, c, c}, {}, "bn");
    CHECK(b.status().message() ==
          "node 'bn' (BatchNormalization): x [3] has no channel axis (BatchNormalization wants [N,C,...])");
  }
  {
    GraphBuilder b;  // a composite's name is taken like any other
    const Tensor x = b.input("x", {4});
    b.op("Relu", {x}, {}, "sm");
    b.op("Softmax", {x}, {}, "sm");
    CHECK(b.status().message() == "two nodes are named 'sm'");
  }
}

TEST_CASE("composites plan into the expected number of fused groups") {
  auto groups_for = [](const char* op, const std::vector<Shape>& shapes, const std::vector<Attr>& attrs = {}) {
    GraphBuilder b;
    std::vector<Tensor> inputs;
    for (std::size_t k = 0; k < shapes.size(); ++k) inputs.push_back(b.input("in" + std::to_string(k), shapes[k]));
    b.output(b.op(op, inputs, attrs), "y");
    return build_graph(b);
  };
  const Graph softmax = groups_for("Softmax", {{7, 13}});
  CHECK(labels_of(softmax) == "ReduceMax -> Sub -> Exp -> ReduceSum -> Div");
  CHECK(group_count(groups_for("LogSoftmax", {{7, 13}})) == 1);
  const Graph layer_norm = groups_for("LayerNormalization", {{7, 13}, {13}, {13}});
  CHECK(labels_of(layer_norm) == "ReduceMean -> Sub -> Mul -> ReduceMean -> Add -> Sqrt -> Div -> Mul -> Add");
  // Rows longer than the row passes take: a dispatch per reduction and one for the result.
  CHECK(labels_of(groups_for("Softmax", {{2, 5000}})) == "ReduceMax | Sub -> Exp -> ReduceSum | Sub -> Exp -> Div");
  CHECK(group_count(groups_for("LayerNormalization", {{2, 5000}, {5000}})) == 3);
  CHECK(group_count(groups_for("ReduceL2", {{7, 13}}, {{"axes", Ints{1}}})) == 1);
  CHECK(group_count(groups_for("ReduceSumSquare", {{7, 13}}, {{"axes", Ints{0}}, {"keepdims", 0}})) == 1);
  CHECK(group_count(groups_for("ReduceLogSumExp", {{7, 13}}, {{"axes", Ints{1}}, {"keepdims", 0}})) == 2);

  GraphBuilder b;  // BatchNorm after an elementwise op: one group
  const Tensor x = b.input("x", {2, 3, 5, 7});
  std::vector<Tensor> params;
  for (const char* name : {"scale", "bias", "mean", "var"}) params.push_back(b.input(name, {3}));
  const Tensor relu = b.op("Relu", {x});
  b.output(b.op("BatchNormalization", {relu, params[0], params[1], params[2], params[3]}), "y");
  const Graph bn = build_graph(b);
  CHECK(labels_of(bn) == "Relu -> Add -> Sqrt -> Div -> Sub -> Mul -> Add");
}

TEST_CASE("post-fusion through a view: the space a value and its reordering view share") {
  // convnext_tiny's [1, 56, 56, 96] MatMul result read as [1, 96, 56, 56]: axes 56, 56, 96 in the
  // value's order; the view steps 1 along the channels, 96 and 5376 along the rows and columns.
  const Shape value{1, 56, 56, 96};
  const StridedLayout view = *apply("Transpose", contiguous(value), {{"perm", {0, 3, 1, 2}}});
  const auto space = reordered_space(value, view);
  REQUIRE(space.has_value());
  CHECK(space->domain == Shape{56, 56, 96});
  CHECK(space->step == std::vector<std::int64_t>{5376, 96, 1});
  // A residual read in the view's order (contiguous [1, 96, 56, 56]): per value axis, 56, 1 and 3136.
  const std::vector<std::int64_t> residual = strides_over(*space, view, contiguous_layout({1, 96, 56, 56}).strides);
  CHECK(residual == std::vector<std::int64_t>{56, 1, 3136});
  // A per-channel scale [96, 1, 1] broadcast in the view's order, and a bias [96] in the value's.
  CHECK(strides_over(*space, view, broadcast_strides({96, 1, 1}, {}, view.shape)) == std::vector<std::int64_t>{0, 0, 1});
  CHECK(strides_over(*space, contiguous(value), broadcast_strides({96}, {}, value)) == std::vector<std::int64_t>{0, 0, 1});
  // Where the view's contiguous result puts the value's elements: the copy's placement, computed
  // without the copy's index table.
  const ElementPlacement place = placement_of(space->domain, residual);
  const auto index = invert_view(view, 56 * 56 * 96);
  REQUIRE(index.has_value());
  CHECK(place == ElementPlacement{.offset = 0, .slice = 1, .stride = 3136, .blocks = {{96, 1}}});  // (rows and columns: one level)
  for (std::int64_t i = 0; i < 56 * 56 * 96; i += 37) CHECK(place.at(i) == (*index)[static_cast<std::size_t>(i)]);
  // A Reshape that splits an axis and a Transpose: [6, 12] -> [6, 3, 4] -> [3, 6, 4].
  const StridedLayout heads = *apply("Transpose", *apply("Reshape", contiguous({6, 12}), {{"shape", {6, 3, 4}}}),
                                     {{"perm", {1, 0, 2}}});
  const auto split = reordered_space({6, 12}, heads);
  REQUIRE(split.has_value());
  CHECK(split->domain == Shape{6, 3, 4});
  const ElementPlacement split_place = placement_of(split->domain, strides_over(*split, heads, contiguous_layout({3, 6, 4}).strides));
  const auto split_index = invert_view(heads, 72);
  for (std::int64_t i = 0; i < 72; ++i) CHECK(split_place.at(i) == (*split_index)[static_cast<std::size_t>(i)]);
  // A contiguous result keeps its elements where they are.
  CHECK(placement_of({3, 4}, {4, 1}).identity());
  // No reordering: a slice, a broadcast, an offset; and orders that share no axes ([2, 3] read as [3, 2]).
  StridedLayout slice = contiguous({2, 3, 4});
  slice.shape = {2, 2, 4};
  CHECK_FALSE(reordered_space({2, 3, 4}, slice).has_value());
  CHECK_FALSE(reordered_space({12}, StridedLayout{{2, 6}, {0, 1}, 0}).has_value());  // as many elements, 0 apart
  CHECK_FALSE(reordered_space({2, 3}, StridedLayout{{2, 3}, {3, 1}, 1}).has_value());
  CHECK_FALSE(reordered_space({2, 3}, *apply("Reshape", contiguous({2, 3}), {{"shape", {3, 2}}})).has_value());
}

TEST_CASE("copies in place: where a view's copy puts each element, and which placements fit") {
  // [2, 3, 4] transposed to [3, 2, 4]: element (a, b, k) of the base lands at (b, a, k) of the copy.
  const auto index = invert_view(*apply("Transpose", contiguous({2, 3, 4}), {{"perm", {1, 0, 2}}}), 24);
  REQUIRE(index.has_value());
  for (std::int64_t a = 0; a < 2; ++a)
    for (std::int64_t b = 0; b < 3; ++b)
      for (std::int64_t k = 0; k < 4; ++k) CHECK((*index)[static_cast<std::size_t>(a * 12 + b * 4 + k)] == b * 8 + a * 4 + k);
  // Base row a (12 elements) as a part: runs of 4, 8 apart, from 4a.
  for (std::int64_t a = 0; a < 2; ++a) {
    const auto place = place_through(*index, ElementPlacement{.offset = a * 12}, 12);
    REQUIRE(place.has_value());
    CHECK(place->offset == a * 4);
    CHECK(place->slice == 4);
    CHECK(place->stride == 8);
  }
  // The whole base: blocks of 12 (a row a), each runs of 4 elements 8 apart, the blocks 4 apart.
  const auto whole = place_through(*index, ElementPlacement{}, 24);
  REQUIRE(whole.has_value());
  CHECK(*whole == ElementPlacement{.offset = 0, .slice = 4, .stride = 8, .blocks = {{12, 4}}});
  for (std::int64_t i = 0; i < 24; ++i) CHECK(whole->at(i) == (*index)[static_cast<std::size_t>(i)]);
  // [2, 3, 4, 5] to [3, 2, 5, 4]: runs of one element 4 apart, in blocks of 5 one apart, of 20 that are 40
  // apart, of 60 that are 20 apart.
  const auto deeper = invert_view(*apply("Transpose", contiguous({2, 3, 4, 5}), {{"perm", {1, 0, 3, 2}}}), 120);
  REQUIRE(deeper.has_value());
  const auto four = place_through(*deeper, ElementPlacement{}, 120);
  REQUIRE(four.has_value());
  CHECK(*four == ElementPlacement{.offset = 0, .slice = 1, .stride = 4, .blocks = {{5, 1}, {20, 40}, {60, 20}}});
  for (std::int64_t i = 0; i < 120; ++i) CHECK(four->at(i) == (*deeper)[static_cast<std::size_t>(i)]);
  // A 5-D reversal needs one level more than a placement takes.
  const auto reversed = invert_view(*apply("Transpose", contiguous({2, 2, 2, 2, 2}), {{"perm", {4, 3, 2, 1, 0}}}), 32);
  REQUIRE(reversed.has_value());
  CHECK_FALSE(place_through(*reversed, ElementPlacement{}, 32).has_value());
  // Views that skip or repeat elements are no reordering.
  StridedLayout slice = contiguous({2, 3, 4});
  slice.shape = {2, 2, 4};
  CHECK_FALSE(invert_view(slice, 24).has_value());
  StridedLayout broadcast{{2, 12}, {0, 1}, 0};
  CHECK_FALSE(invert_view(broadcast, 12).has_value());
  CHECK_FALSE(invert_view(broadcast, 24).has_value());
}

}  // namespace vkfuse
