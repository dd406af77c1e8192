// Tensor kernel ops (Concat, Gather, Pad, Resize, DepthToSpace, ArgMax, Tile, Expand) against their
// CPU references in f32 and f16, then i32 and bool tensors and hand-worked examples (from the ONNX
// and numpy definitions) compared exactly, and the errors shape inference gives.
#include <doctest/doctest.h>

#include <cmath>

#include "host/reference_eval.h"
#include "support/compare.h"
#include "support/gpu_context.h"
#include "support/kernel_case.h"

namespace vkfuse::testing {

namespace {

using Ints = std::vector<std::int64_t>;

std::vector<KernelCase> make_tensor_cases() {
  std::vector<KernelCase> cases = {
      // Concat: odd sizes, negative axes, a single input.
      {"Concat", {{7, 3}, {7, 13}, {7, 1}}, {{"axis", 1.0f}}},
      {"Concat", {{2, 3, 5}, {4, 3, 5}}, {{"axis", -3.0f}}},
      {"Concat", {{2, 7, 3}, {2, 1, 3}, {2, 5, 3}}, {{"axis", -2.0f}}},
      {"Concat", {{13}}, {{"axis", 0.0f}}},
      // Gather: indices drawn in [0, n) here (negative ones in the exact tests below); scalar indices.
      {"Gather", {{7, 13}, {5}}, {{"axis", 0.0f}}, 1, 7},
      {"Gather", {{3, 13, 2}, {2, 3}}, {{"axis", 1.0f}}, 1, 13},
      {"Gather", {{2, 7}, {}}, {{"axis", -1.0f}}, 1, 7},
      {"Gather", {{13, 3}, {7}}, {{"axis", -2.0f}}, 1, 13},
      // ArgMax: every attribute value, negative axes, an axis of extent 1.
      {"ArgMax", {{7, 13}}, {{"axis", 0.0f}, {"keepdims", 1.0f}, {"select_last_index", 0.0f}}},
      {"ArgMax", {{7, 13}}, {{"axis", -1.0f}, {"keepdims", 0.0f}, {"select_last_index", 1.0f}}},
      {"ArgMax", {{2, 3, 13}}, {{"axis", -2.0f}, {"keepdims", 0.0f}, {"select_last_index", 0.0f}}},
      {"ArgMax", {{3, 1, 5}}, {{"axis", 1.0f}, {"keepdims", 1.0f}, {"select_last_index", 1.0f}}},
      // Pad: each mode, negative pads (cropping), reflect wider than the dimension and on extent 1.
      {"Pad", {{7, 13}}, {{"pads", Ints{1, 2, 0, 3}}, {"mode", 0.0f}, {"value", 0.5f}}},
      {"Pad", {{7, 13}}, {{"pads", Ints{-1, 0, 2, -3}}, {"mode", 0.0f}}},
      {"Pad", {{3, 7}}, {{"pads", Ints{2, 3, 1, 6}}, {"mode", 1.0f}}},
      {"Pad", {{1, 5}}, {{"pads", Ints{1, 2, 2, 1}}, {"mode", 1.0f}}},
      {"Pad", {{2, 3, 5}}, {{"pads", Ints{0, 1, 2, 1, 0, 4}}, {"mode", 2.0f}}},
      {"Pad", {{13}}, {{"pads", Ints{3, -2}}, {"mode", 2.0f}}},
      // DepthToSpace: both modes, blocksizes 1 to 3.
      {"DepthToSpace", {{1, 8, 3, 5}}, {{"blocksize", 2.0f}, {"mode", 0.0f}}},
      {"DepthToSpace", {{1, 8, 3, 5}}, {{"blocksize", 2.0f}, {"mode", 1.0f}}},
      {"DepthToSpace", {{2, 18, 2, 3}}, {{"blocksize", 3.0f}, {"mode", 0.0f}}},
      {"DepthToSpace", {{2, 18, 2, 3}}, {{"blocksize", 3.0f}, {"mode", 1.0f}}},
      {"DepthToSpace", {{1, 3, 2, 7}}, {{"blocksize", 1.0f}}},
      // Tile and Expand (which may grow the rank; a 1 in 'shape' keeps the input's dimension).
      {"Tile", {{7, 3}}, {{"repeats", Ints{2, 1}}}},
      {"Tile", {{2, 1, 3}}, {{"repeats", Ints{1, 13, 2}}}},
      {"Tile", {{13}}, {{"repeats", Ints{3}}}},
      {"Tile", {{3, 5}}, {{"repeats", Ints{1, 1}}}},
      {"Expand", {{3, 1}}, {{"shape", Ints{2, 3, 7}}}},
      {"Expand", {{7, 1}}, {{"shape", Ints{1, 13}}}},
      {"Expand", {{13}}, {{"shape", Ints{1}}}},
      {"Expand", {{1}}, {{"shape", Ints{7, 13}}}},
      {"Expand", {{2, 1, 13}}, {{"shape", Ints{2, 7, 1}}}},
  };
  // 15 inputs: with the output, the 16 storage buffers a dispatch may bind (DevicePlan::max_bindings).
  std::vector<Shape> fifteen;
  for (std::int64_t k = 0; k < 15; ++k) fifteen.push_back({3, k % 4 + 1});
  cases.push_back({"Concat", fifteen, {{"axis", -1.0f}}});

  // Resize, nearest: every coordinate mode with every rounding mode on a resize with exact ties
  // (H halves: half_pixel gives 2y + 0.5, align_corners 2.5y; W doubles: asymmetric gives x / 2), then
  // each coordinate mode on odd sizes that also resize a leading dimension.
  for (int coord = 0; coord < 4; ++coord) {
    for (int nearest = 0; nearest < 4; ++nearest)
      cases.push_back({"Resize", {{1, 2, 6, 5}},
                       {{"sizes", Ints{1, 2, 3, 10}}, {"mode", 0.0f},
                        {"coordinate_transformation_mode", static_cast<float>(coord)},
                        {"nearest_mode", static_cast<float>(nearest)}}});
    cases.push_back({"Resize", {{2, 7, 13}},
                     {{"sizes", Ints{3, 13, 7}}, {"coordinate_transformation_mode", static_cast<float>(coord)}}});
  }
  // Resize, linear (bilinear over the last two dimensions): each coordinate mode up and down.
  for (int coord = 0; coord < 4; ++coord) {
    cases.push_back({"Resize", {{1, 2, 7, 13}},
                     {{"sizes", Ints{1, 2, 13, 7}}, {"mode", 1.0f},
                      {"coordinate_transformation_mode", static_cast<float>(coord)}}});
    cases.push_back({"Resize", {{2, 6, 5}},
                     {{"sizes", Ints{2, 3, 10}}, {"mode", 1.0f},
                      {"coordinate_transformation_mode", static_cast<float>(coord)}}});
  }
  // Output extent 1 (align_corners and pytorch_half_pixel special-case it) and rank 1.
  cases.push_back({"Resize", {{1, 1, 7, 13}},
                   {{"sizes", Ints{1, 1, 1, 5}}, {"mode", 1.0f}, {"coordinate_transformation_mode", 2.0f}}});
  cases.push_back({"Resize", {{1, 1, 7, 13}},
                   {{"sizes", Ints{1, 1, 1, 5}}, {"mode", 1.0f}, {"coordinate_transformation_mode", 3.0f}}});
  cases.push_back({"Resize", {{7, 13}},
                   {{"sizes", Ints{1, 1}}, {"coordinate_transformation_mode", 3.0f}, {"nearest_mode", 1.0f}}});
  cases.push_back({"Resize", {{7}}, {{"sizes", Ints{13}}, {"mode", 1.0f}}});
  return cases;
}

const std::vector<KernelCase> kTensorCases = make_tensor_cases();

// An input of an exact test: its values as floats (i32 whole numbers, bool 0/1).
struct Feed {
  Shape shape;
  std::vector<float> values;
  DType dtype;
};

// Runs `op` on the GPU (in0, in1, ... in `wiring` order; by default each feed once) and checks the
// result against the CPU reference and against `want` (hand-worked, when given), within `atol` (0:
// exactly).
void check_exact(const char* op, const std::vector<Feed>& feeds, const std::vector<Attr>& attrs, const Shape& want_shape,
                 const std::vector<float>& want, double atol = 0.0, std::vector<int> wiring = {}) {
  INFO(std::string(op));
  GraphBuilder b;
  std::vector<Tensor> tensors;
  std::map<std::string, HostTensor> inputs;
  for (std::size_t k = 0; k < feeds.size(); ++k) {
    const std::string name = "in" + std::to_string(k);
    tensors.push_back(b.input(name, feeds[k].shape, feeds[k].dtype));
    inputs.emplace(name, HostTensor::from_floats(feeds[k].shape, feeds[k].values, feeds[k].dtype));
  }
  if (wiring.empty())
    for (std::size_t k = 0; k < feeds.size(); ++k) wiring.push_back(static_cast<int>(k));
  std::vector<Tensor> args;
  for (int k : wiring) args.push_back(tensors[static_cast<std::size_t>(k)]);
  b.output(b.op(op, args, attrs), "out");
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  const HostTensor got = run_graph(*graph, true, inputs).at("out");
  auto reference = evaluate_reference(*graph, inputs);
  REQUIRE_MESSAGE(reference.ok(), reference.status().to_string());
  CHECK(got.shape == want_shape);
  CHECK(got.dtype == reference->at("out").dtype);
  const CloseReport vs_reference = all_close(got.to_floats(), reference->at("out").to_floats(), atol, 0.0);
  CHECK_MESSAGE(vs_reference.ok, "vs the reference: " << vs_reference.describe());
  if (!want.empty()) {
    const CloseReport vs_want = all_close(got.to_floats(), want, atol, 0.0);
    CHECK_MESSAGE(vs_want.ok, "vs the worked result: " << vs_want.describe());
  }
}

// The message of the error building one `op` node gives.
std::string build_error(const char* op, const std::vector<std::pair<Shape, DType>>& inputs, const std::vector<Attr>& attrs) {
  GraphBuilder b;
  std::vector<Tensor> tensors;
  for (std::size_t k = 0; k < inputs.size(); ++k)
    tensors.push_back(b.input("in" + std::to_string(k), inputs[k].first, inputs[k].second));
  b.output(b.op(op, tensors, attrs), "out");
  auto graph = b.build();
  return graph.ok() ? std::string("(no error)") : graph.status().message();
}

std::vector<float> counting(int n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i);
  return v;
}

}  // namespace

std::span<const KernelCase> tensor_cases() { return kTensorCases; }

TEST_CASE("tensor kernel ops match their CPU references in f32 and f16") {
  std::uint32_t seed = 1;
  for (const KernelCase& c : tensor_cases()) {
    std::string attrs;
    for (const Attr& a : c.attrs) attrs += " " + a.name + "=" + (a.is_list ? shape_to_string(a.ints) : std::to_string(a.value));
    INFO(std::string(c.op) << " " << shape_to_string(c.inputs[0]) << attrs);
    check_kernel_case(c, DType::kF32, seed++);
    check_kernel_case(c, DType::kF16, seed++);
  }
  CHECK(validation_errors() == 0);
}

TEST_CASE("Concat, Gather and Expand copy i32 and bool tensors exactly; negative indices wrap") {
  const DType i32 = DType::kI32, boolean = DType::kBool;
  check_exact("Concat", {{{2, 3}, {1, 2, 3, 4, 5, 6}, i32}, {{2, 1}, {7, 8}, i32}}, {{"axis", -1.0f}}, {2, 4},
              {1, 2, 3, 7, 4, 5, 6, 8});
  // One tensor twice: two bindings of one buffer.
  check_exact("Concat", {{{3}, {1, 0, 1}, boolean}}, {{"axis", 0.0f}}, {6}, {1, 0, 1, 1, 0, 1}, 0.0, {0, 0});
  check_exact("Concat", {{{1, 2}, {1, 0}, boolean}, {{2, 2}, {0, 1, 1, 1}, boolean}}, {{"axis", -2.0f}}, {3, 2},
              {1, 0, 0, 1, 1, 1});
  check_exact("Gather", {{{4}, {10, 20, 30, 40}, i32}, {{5}, {-1, 0, -4, 3, 2}, i32}}, {}, {5}, {40, 10, 10, 40, 30});
  check_exact("Gather", {{{2, 3}, {1, 0, 0, 0, 1, 1}, boolean}, {{2}, {-1, 0}, i32}}, {{"axis", 1.0f}}, {2, 2},
              {0, 1, 1, 0});
  check_exact("Gather", {{{3, 2}, {1.5f, 2.5f, 3.5f, 4.5f, 5.5f, 6.5f}, DType::kF32}, {{2, 2}, {-1, 1, 0, -3}, i32}},
              {{"axis", -2.0f}}, {2, 2, 2}, {5.5f, 6.5f, 3.5f, 4.5f, 1.5f, 2.5f, 1.5f, 2.5f});
  check_exact("Expand", {{{3, 1}, {1, 0, 1}, boolean}}, {{"shape", Ints{2, 1, 2}}}, {2, 3, 2},
              {1, 1, 0, 0, 1, 1, 1, 1, 0, 0, 1, 1});
  check_exact("Expand", {{{1}, {7}, i32}}, {{"shape", Ints{2, 2}}}, {2, 2}, {7, 7, 7, 7});
  check_exact("Expand", {{{}, {5}, i32}}, {{"shape", Ints{3}}}, {3}, {5, 5, 5});
  CHECK(validation_errors() == 0);
}

TEST_CASE("Concat takes 16 inputs; a device that cannot bind 17 buffers says so") {
  GraphBuilder b;
  std::vector<Tensor> inputs;
  std::map<std::string, HostTensor> feeds;
  std::vector<float> want;
  for (int k = 0; k < 16; ++k) {
    const std::string name = "in" + std::to_string(k);
    inputs.push_back(b.input(name, {1, 2}, DType::kI32));
    feeds.emplace(name, HostTensor::from_floats({1, 2}, {static_cast<float>(k), static_cast<float>(-k)}, DType::kI32));
    want.insert(want.end(), {static_cast<float>(k), static_cast<float>(-k)});
  }
  b.output(b.op("Concat", inputs, {{"axis", -1.0f}}), "out");
  REQUIRE(b.shape(inputs[0]) == Shape{1, 2});
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  auto session = Session::create(gpu_context(), *graph, {});
  if (session.ok()) {
    auto outputs = session->run(feeds);
    REQUIRE_MESSAGE(outputs.ok(), outputs.status().to_string());
    CHECK(outputs->at("out").shape == Shape{1, 32});
    CHECK(outputs->at("out").to_floats() == want);
  } else {
    CHECK(session.status().code() == ErrorCode::kUnsupported);
    CHECK(session.status().message().find("needs 17 storage buffers") != std::string::npos);
  }
  CHECK(validation_errors() == 0);
}

TEST_CASE("Pad, Tile, DepthToSpace, Resize and ArgMax on i32 and bool match hand-worked results") {
  const DType i32 = DType::kI32, boolean = DType::kBool;
  const Feed five{{5}, {1, 2, 3, 4, 5}, i32};
  // numpy.pad([1, 2, 3, 4, 5], (2, 3), mode) for reflect and edge.
  check_exact("Pad", {five}, {{"pads", Ints{2, 3}}, {"mode", 1.0f}}, {10}, {3, 2, 1, 2, 3, 4, 5, 4, 3, 2});
  check_exact("Pad", {five}, {{"pads", Ints{2, 3}}, {"mode", 2.0f}}, {10}, {1, 1, 1, 2, 3, 4, 5, 5, 5, 5});
  check_exact("Pad", {five}, {{"pads", Ints{1, -2}}, {"value", 7.0f}}, {4}, {7, 1, 2, 3});
  check_exact("Pad", {{{2}, {1, 0}, boolean}}, {{"pads", Ints{1, 1}}, {"value", 1.0f}}, {4}, {1, 1, 0, 1});
  check_exact("Pad", {{{}, {3}, i32}}, {{"pads", Ints{}}}, {}, {3});  // a scalar: nothing to pad
  check_exact("Tile", {{{2, 2}, {1, 2, 3, 4}, i32}}, {{"repeats", Ints{1, 2}}}, {2, 4}, {1, 2, 1, 2, 3, 4, 3, 4});
  check_exact("Tile", {{{2}, {1, 0}, boolean}}, {{"repeats", Ints{3}}}, {6}, {1, 0, 1, 0, 1, 0});
  // [1, 8, 1, 1] = 0..7, blocksize 2: DCR takes channel (i*2 + j)*2 + c, CRD channel c*4 + i*2 + j.
  check_exact("DepthToSpace", {{{1, 8, 1, 1}, counting(8), i32}}, {{"blocksize", 2.0f}}, {1, 2, 2, 2},
              {0, 2, 4, 6, 1, 3, 5, 7});
  check_exact("DepthToSpace", {{{1, 8, 1, 1}, counting(8), i32}}, {{"blocksize", 2.0f}, {"mode", 1.0f}}, {1, 2, 2, 2},
              counting(8));
  // The DCR example of [1, 4, 2, 3] = 0..23 (as in the ONNX and MXNet documentation).
  check_exact("DepthToSpace", {{{1, 4, 2, 3}, counting(24), DType::kF32}}, {{"blocksize", 2.0f}}, {1, 1, 4, 6},
              {0, 6, 1, 7, 2, 8, 12, 18, 13, 19, 14, 20, 3, 9, 4, 10, 5, 11, 15, 21, 16, 22, 17, 23});
  // Nearest, half_pixel, round_prefer_floor: [[1, 2], [3, 4]] to 4 x 6 (ONNX's upsample example).
  check_exact("Resize", {{{1, 1, 2, 2}, {1, 2, 3, 4}, i32}}, {{"sizes", Ints{1, 1, 4, 6}}}, {1, 1, 4, 6},
              {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4});
  // Asymmetric doubling puts odd outputs on ties (x / 2 = k + 0.5): floor keeps k, ceil takes k + 1.
  check_exact("Resize", {{{3}, {1, 0, 1}, boolean}},
              {{"sizes", Ints{6}}, {"coordinate_transformation_mode", 1.0f}, {"nearest_mode", 0.0f}}, {6},
              {1, 1, 0, 0, 1, 1});
  check_exact("Resize", {{{3}, {1, 0, 1}, boolean}},
              {{"sizes", Ints{6}}, {"coordinate_transformation_mode", 1.0f}, {"nearest_mode", 1.0f}}, {6},
              {1, 0, 0, 1, 1, 1});
  const Feed ties{{2, 4}, {1, 3, 3, 0, 5, 5, 2, 5}, i32};
  check_exact("ArgMax", {ties}, {{"axis", 1.0f}}, {2, 1}, {1, 0});
  check_exact("ArgMax", {ties}, {{"axis", -1.0f}, {"keepdims", 0.0f}, {"select_last_index", 1.0f}}, {2}, {2, 3});
  check_exact("ArgMax", {ties}, {{"axis", 0.0f}, {"keepdims", 0.0f}}, {4}, {1, 1, 0, 1});
  CHECK(validation_errors() == 0);
}

TEST_CASE("Resize linear matches ONNX's worked examples") {
  const DType f32 = DType::kF32;
  // pytorch_half_pixel, 4 x 4 = 1..16 to 3 x 1 (ONNX resize_downsample_sizes_linear_pytorch_half_pixel).
  std::vector<float> sixteen = counting(16);
  for (float& v : sixteen) v += 1.0f;
  check_exact("Resize", {{{1, 1, 4, 4}, sixteen, f32}},
              {{"sizes", Ints{1, 1, 3, 1}}, {"mode", 1.0f}, {"coordinate_transformation_mode", 3.0f}}, {1, 1, 3, 1},
              {1.6666666f, 7.0f, 12.333333f}, 1e-5);
  // align_corners, [[1, 2], [3, 4]] to 4 x 4: steps of 1/3.
  check_exact("Resize", {{{1, 1, 2, 2}, {1, 2, 3, 4}, f32}},
              {{"sizes", Ints{1, 1, 4, 4}}, {"mode", 1.0f}, {"coordinate_transformation_mode", 2.0f}}, {1, 1, 4, 4},
              {1.0f, 1.3333333f, 1.6666667f, 2.0f, 1.6666667f, 2.0f, 2.3333333f, 2.6666667f, 2.3333333f, 2.6666667f,
               3.0f, 3.3333333f, 3.0f, 3.3333333f, 3.6666667f, 4.0f},
              1e-5);
  // half_pixel, [[1, 2, 3, 4], [5, 6, 7, 8]] to 1 x 2: sources (0.5, 0.5) and (0.5, 2.5).
  check_exact("Resize", {{{1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}, f32}}, {{"sizes", Ints{1, 1, 1, 2}}, {"mode", 1.0f}},
              {1, 1, 1, 2}, {3.5f, 5.5f}, 1e-6);
  // asymmetric, [1, 2] to 4: sources 0, 0.5, 1, 1.5 (the last clamps to the edge).
  check_exact("Resize", {{{1, 2}, {1, 2}, f32}},
              {{"sizes", Ints{1, 4}}, {"mode", 1.0f}, {"coordinate_transformation_mode", 1.0f}}, {1, 4},
              {1.0f, 1.5f, 2.0f, 2.0f}, 1e-6);
  CHECK(validation_errors() == 0);
}

TEST_CASE("tensor ops reject bad inputs and attributes with errors that say what is wrong") {
  const DType f32 = DType::kF32, i32 = DType::kI32;
  auto contains = [](const std::string& message, const char* part) {
    INFO(message);
    CHECK(message.find(part) != std::string::npos);
  };
  contains(build_error("Concat", {{{2, 3}, f32}, {{3, 3}, f32}}, {{"axis", 1.0f}}), "differ in dimension 0");
  contains(build_error("Concat", {{{2, 3}, f32}, {{2, 3}, i32}}, {}), "input 1 is i32 and input 0 is f32");
  contains(build_error("Concat", {{{2, 3}, f32}}, {{"axis", 2.0f}}), "'axis' = 2 is out of range for input 0 [2,3]: expected -2..1");
  contains(build_error("Gather", {{{4}, f32}, {{2}, f32}}, {}), "indices (input 1) are f32, expected i32");
  contains(build_error("Pad", {{{2, 3}, f32}}, {{"pads", Ints{1, 1}}}), "'pads' has 2 values; input 0 [2,3] needs 4");
  contains(build_error("Pad", {{{2, 3}, f32}}, {{"pads", Ints{0, 0, 0, 0}}, {"mode", 3.0f}}),
           "'mode' = 3 is not one of 0..2 (0 constant, 1 reflect, 2 edge)");
  contains(build_error("Pad", {{{2, 3}, f32}}, {}), "'pads' is required");
  contains(build_error("Pad", {{{2, 3}, f32}}, {{"pads", Ints{0, -2, 0, -1}}}), "leave dimension 1");
  contains(build_error("Resize", {{{1, 1, 2, 2}, f32}}, {{"sizes", Ints{1, 2, 4, 4}}, {"mode", 1.0f}}),
           "linear mode resizes the last two dimensions only");
  contains(build_error("Resize", {{{2, 2}, i32}}, {{"sizes", Ints{4, 4}}, {"mode", 1.0f}}), "input 0 is i32");
  contains(build_error("Resize", {{{2, 2}, f32}}, {{"sizes", Ints{4, 4}}, {"nearest_mode", 1.5f}}),
           "'nearest_mode' = 1.5 is not one of 0..3");
  contains(build_error("Resize", {{{2, 2}, f32}}, {{"sizes", Ints{4}}}), "'sizes' [4] has 1 values");
  contains(build_error("DepthToSpace", {{{1, 6, 2, 2}, f32}}, {{"blocksize", 2.0f}}),
           "channels 6 of input 0 [1,6,2,2] are not a multiple of blocksize^2 = 4");
  contains(build_error("DepthToSpace", {{{1, 4, 2}, f32}}, {{"blocksize", 2.0f}}), "has rank 3, expected 4");
  contains(build_error("DepthToSpace", {{{1, 4, 2, 2}, f32}}, {}), "'blocksize' = 0 is not one of 1..");
  contains(build_error("ArgMax", {{{3}, DType::kBool}}, {}), "input 0 is bool");
  contains(build_error("ArgMax", {{{3}, f32}}, {{"keepdims", 2.0f}}), "'keepdims' = 2 is not one of 0..1");
  contains(build_error("Tile", {{{2, 3}, f32}}, {{"repeats", Ints{2, 0}}}), "dimension 1 repeats 0 times");
  contains(build_error("Expand", {{{2, 3}, f32}}, {{"shape", Ints{4, 3}}}),
           "input 0 [2,3] does not broadcast with 'shape' [4,3]");
}

}  // namespace vkfuse::testing
