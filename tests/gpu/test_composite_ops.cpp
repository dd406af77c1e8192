// Views and composite ops on the device:
//  - every view op (Reshape, Transpose, Squeeze, Unsqueeze, Flatten) and chains of them, exactly
//    against numpy-style index arithmetic written here, including chains the builder must copy;
//  - views feeding elementwise ops and MatMul (a kernel op: strided inputs go through a copy);
//  - every composite (Softmax, LogSoftmax, LayerNormalization, BatchNormalization, the reductions
//    with ONNX axes) fused and unfused against its row's whole-tensor CPU reference, f32 and f16;
//  - the number of dispatches each composite fuses into.
#include <doctest/doctest.h>

#include <numeric>
#include <random>

#include "host/graph.h"
#include "host/op_registry.h"
#include "support/compare.h"
#include "support/gpu_context.h"
#include "support/random_inputs.h"

namespace vkfuse::testing {
namespace {

using Ints = std::vector<std::int64_t>;
using Attrs = std::vector<Attr>;

// ---- numpy-style reference arithmetic over row-major data (independent of StridedLayout).

std::vector<float> iota(std::int64_t n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

Shape permuted(const Shape& shape, const Ints& perm) {
  Shape out;
  for (std::int64_t p : perm) out.push_back(shape[static_cast<std::size_t>(p)]);
  return out;
}

// np.transpose(x, perm)
std::vector<float> transpose(const std::vector<float>& x, const Shape& shape, const Ints& perm) {
  const Shape out_shape = permuted(shape, perm);
  std::vector<std::int64_t> in_strides(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) in_strides[d - 1] = in_strides[d] * shape[d];
  std::vector<float> out(x.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::int64_t rest = static_cast<std::int64_t>(i), source = 0;
    for (std::size_t d = out_shape.size(); d-- > 0;) {
      source += (rest % out_shape[d]) * in_strides[static_cast<std::size_t>(perm[d])];
      rest /= out_shape[d];
    }
    out[i] = x[static_cast<std::size_t>(source)];
  }
  return out;
}

// x[start:end] along axis 0 of a tensor whose rows hold `row` elements.
std::vector<float> rows(const std::vector<float>& x, std::int64_t row, std::int64_t start, std::int64_t end) {
  return {x.begin() + start * row, x.begin() + end * row};
}

// a @ b for [m,k] and [k,n], in double.
std::vector<float> matmul(const std::vector<float>& a, const std::vector<float>& b, std::int64_t m, std::int64_t k,
                          std::int64_t n) {
  std::vector<float> out(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (std::int64_t p = 0; p < k; ++p)
        acc += static_cast<double>(a[static_cast<std::size_t>(i * k + p)]) * b[static_cast<std::size_t>(p * n + j)];
      out[static_cast<std::size_t>(i * n + j)] = static_cast<float>(acc);
    }
  return out;
}

std::size_t count_ops(const Graph& graph, std::string_view op) {
  std::size_t count = 0;
  for (const Node& node : graph_ir(graph).nodes) count += node.op->name == op ? 1 : 0;
  return count;
}

// Runs `graph` fused and unfused on `feeds`; output "y" must equal `want` exactly, with shape `shape`.
// Returns the fused dispatch count.
std::size_t check_exact(const Graph& graph, const std::map<std::string, HostTensor>& feeds, const Shape& shape,
                        const std::vector<float>& want) {
  std::size_t dispatches = 0;
  for (bool fusion : {true, false}) {
    CAPTURE(fusion);
    const auto out = run_graph(graph, fusion, feeds, fusion ? &dispatches : nullptr);
    const HostTensor& y = out.at("y");
    CHECK(y.shape == shape);
    const CloseReport report = all_close(y.to_floats(), want, 0.0, 0.0);
    CHECK_MESSAGE(report.ok, report.describe());
  }
  CHECK(validation_errors() == 0);
  return dispatches;
}

// ---- composites against their rows' references

struct Outcome {
  std::size_t fused_dispatches = 0;
  Shape shape;
};

// Builds `op` over inputs of `shapes` (dtype `dtype`, drawn from the row's test domain), runs it fused
// and unfused, and compares both with the row's whole-tensor reference by NMSE (f32 1e-10, f16 1e-5).
Outcome check_composite(const char* op, const std::vector<Shape>& shapes, const Attrs& attrs, DType dtype,
                        std::uint32_t seed) {
  const OpDef* def = find_op(op);
  REQUIRE_MESSAGE(def != nullptr, op);
  REQUIRE_MESSAGE((def->reference_kernel != nullptr), op << " has no whole-tensor reference");
  std::mt19937 rng(seed);
  GraphBuilder b;
  std::vector<Tensor> inputs;
  std::map<std::string, HostTensor> feeds;
  std::vector<RefTensor> ref_inputs;
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    const std::string name = "in" + std::to_string(k);
    inputs.push_back(b.input(name, shapes[k], dtype));
    HostTensor t = random_tensor(shapes[k], dtype, def->domain, rng);
    const std::vector<float> values = t.to_floats();  // as stored: f16 already rounded
    ref_inputs.push_back({shapes[k], std::vector<double>(values.begin(), values.end())});
    feeds.emplace(name, std::move(t));
  }
  const Tensor y = b.op(op, inputs, attrs);
  REQUIRE_MESSAGE(b.status().ok(), b.status().to_string());
  b.output(y, "y");
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  const Value& out_value = graph_ir(*graph).value(graph_ir(*graph).outputs[0]);
  CHECK(out_value.dtype == dtype);

  // The reference sees the row's attributes the way the builder fills them in.
  std::vector<float> scalars;
  AttrLists lists;
  for (const AttrDef& a : def->attrs) scalars.push_back(a.default_value);
  for (const Attr& a : attrs) {
    if (a.is_list) {
      lists[a.name] = a.ints;
      continue;
    }
    for (std::size_t i = 0; i < def->attrs.size(); ++i)
      if (def->attrs[i].name == a.name) scalars[i] = a.value;
  }
  RefTensor want{out_value.shape, std::vector<double>(static_cast<std::size_t>(shape_numel(out_value.shape)))};
  const Status s = def->reference_kernel(ref_inputs, OpAttrs{scalars, lists}, want);
  REQUIRE_MESSAGE(s.ok(), s.to_string());
  REQUIRE(static_cast<std::int64_t>(want.data.size()) == shape_numel(out_value.shape));
  const std::vector<float> want_f(want.data.begin(), want.data.end());

  Outcome outcome{0, out_value.shape};
  const double limit = dtype == DType::kF32 ? 1e-10 : 1e-5;
  for (bool fusion : {true, false}) {
    const auto got = run_graph(*graph, fusion, feeds, fusion ? &outcome.fused_dispatches : nullptr);
    const HostTensor& g = got.at("y");
    REQUIRE(g.shape == out_value.shape);
    const double error = nmse(g.to_floats(), want_f);
    CHECK_MESSAGE(error <= limit, op << " " << dtype_name(dtype) << " " << shape_to_string(shapes[0])
                                     << (fusion ? " fused" : " unfused") << ": NMSE " << error);
  }
  CHECK(validation_errors() == 0);
  return outcome;
}

}  // namespace

TEST_CASE("views: each view op and chains of them give numpy's values") {
  struct Case {
    const char* what;
    Shape input;
    std::vector<std::pair<const char*, Attrs>> chain;
    Shape shape;                                      // expected
    std::vector<float> (*expected)(const std::vector<float>&);
    std::size_t copies;                               // Identity nodes the builder must insert
  };
  const Case cases[] = {
      {"reshape with 0 and -1", {2, 3, 4}, {{"Reshape", {{"shape", Ints{0, -1, 2}}}}}, {2, 6, 2},
       [](const std::vector<float>& x) { return x; }, 0},
      {"transpose (default: reverse)", {2, 3, 4}, {{"Transpose", {}}}, {4, 3, 2},
       [](const std::vector<float>& x) { return transpose(x, {2, 3, 4}, {2, 1, 0}); }, 0},
      {"squeeze all", {2, 1, 3, 1}, {{"Squeeze", {}}}, {2, 3}, [](const std::vector<float>& x) { return x; }, 0},
      {"unsqueeze at both ends", {2, 3}, {{"Unsqueeze", {{"axes", Ints{0, -1}}}}}, {1, 2, 3, 1},
       [](const std::vector<float>& x) { return x; }, 0},
      {"flatten at a negative axis", {2, 3, 4}, {{"Flatten", {{"axis", -1}}}}, {6, 4},
       [](const std::vector<float>& x) { return x; }, 0},
      {"transpose then reshape: copied first", {2, 3, 4},
       {{"Transpose", {{"perm", Ints{1, 0, 2}}}}, {"Reshape", {{"shape", Ints{3, 8}}}}}, {3, 8},
       [](const std::vector<float>& x) { return transpose(x, {2, 3, 4}, {1, 0, 2}); }, 1},
      {"transpose then a split: no copy", {4, 6},
       {{"Transpose", {}}, {"Reshape", {{"shape", Ints{2, 3, 4}}}}}, {2, 3, 4},
       [](const std::vector<float>& x) { return transpose(x, {4, 6}, {1, 0}); }, 0},
      {"transpose then flatten: copied first", {2, 3, 4}, {{"Transpose", {{"perm", Ints{1, 2, 0}}}}, {"Flatten", {}}},
       {3, 8}, [](const std::vector<float>& x) { return transpose(x, {2, 3, 4}, {1, 2, 0}); }, 1},
      {"transpose then flatten of dims that stay one block: no copy", {2, 3, 4},
       {{"Transpose", {{"perm", Ints{2, 0, 1}}}}, {"Flatten", {}}}, {4, 6},
       [](const std::vector<float>& x) { return transpose(x, {2, 3, 4}, {2, 0, 1}); }, 0},
      {"rows of a slice, reshaped", {6, 4},
       {{"Slice", {{"axis", 0}, {"start", 1}, {"end", 5}}}, {"Reshape", {{"shape", Ints{2, 8}}}}}, {2, 8},
       [](const std::vector<float>& x) { return rows(x, 4, 1, 5); }, 0},
      {"two transposes that cancel", {2, 3, 4},
       {{"Transpose", {{"perm", Ints{1, 2, 0}}}}, {"Transpose", {{"perm", Ints{2, 0, 1}}}}}, {2, 3, 4},
       [](const std::vector<float>& x) { return x; }, 0},
      {"unsqueeze, transpose, squeeze", {3, 5},
       {{"Unsqueeze", {{"axes", Ints{1}}}}, {"Transpose", {{"perm", Ints{2, 1, 0}}}}, {"Squeeze", {{"axes", Ints{1}}}}},
       {5, 3}, [](const std::vector<float>& x) { return transpose(x, {3, 5}, {1, 0}); }, 0},
  };
  for (const Case& c : cases) {
    const std::string what = c.what;
    CAPTURE(what);
    GraphBuilder b;
    Tensor t = b.input("x", c.input);
    for (const auto& [op, attrs] : c.chain) t = b.op(op, {t}, attrs);
    b.output(t, "y");
    auto graph = b.build();
    REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
    CHECK(count_ops(*graph, "Identity") == c.copies + 1);  // + the copy that makes the view an output
    const std::vector<float> x = iota(shape_numel(c.input));
    const std::size_t dispatches =
        check_exact(*graph, {{"x", HostTensor::from_floats(c.input, x)}}, c.shape, c.expected(x));
    // One dispatch: the output's copy, or the builder's copy storing straight into the output (the output's
    // copy reads it through views alone: copies in place).
    CHECK(dispatches == 1);
  }
}

TEST_CASE("views feed elementwise groups as index maps, with broadcasting") {
  GraphBuilder b;
  const Tensor x = b.input("x", {3, 5});
  const Tensor bias = b.input("bias", {3});
  const Tensor z = b.input("z", {5});
  // y[i,j] = x[j,i] * 2 + bias[j] - z[i]: transposed x, a row bias, and z as a column via Unsqueeze.
  const Tensor xt = b.op("Transpose", {x});
  const Tensor col = b.op("Unsqueeze", {z}, {{"axes", Ints{1}}});
  b.output(b.op("Sub", {b.op("Add", {b.op("Mul", {xt, b.scalar(2.0f)}), bias}), col}), "y");
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  const std::vector<float> xv = iota(15), bv{0.5f, -1.0f, 2.25f}, zv{1, 2, 3, 4, 5};
  std::vector<float> want(15);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 3; ++j) want[static_cast<std::size_t>(i * 3 + j)] = xv[static_cast<std::size_t>(j * 5 + i)] * 2.0f + bv[static_cast<std::size_t>(j)] - zv[static_cast<std::size_t>(i)];
  const std::size_t dispatches = check_exact(*graph,
                                             {{"x", HostTensor::from_floats({3, 5}, xv)},
                                              {"bias", HostTensor::from_floats({3}, bv)},
                                              {"z", HostTensor::from_floats({5}, zv)}},
                                             {5, 3}, want);
  CHECK(dispatches == 1);
}

TEST_CASE("MatMul reads views in place, contiguous and strided; a Reshape of a transpose through a copy") {
  std::mt19937 rng(7);
  const TestDomain domain{-2.0f, 2.0f};
  GraphBuilder b;
  const Tensor a = b.input("a", {4, 3});    // used as a^T: [3,4]
  const Tensor w = b.input("w", {4, 5});
  const Tensor x = b.input("x", {2, 3, 4});  // x^T per batch, flattened: [8,3]
  const Tensor v = b.input("v", {3, 5});
  const Tensor flat = b.input("flat", {20});  // [1,4,5] through Reshape and Unsqueeze: contiguous
  const Tensor at = b.op("Transpose", {a});
  b.output(b.op("MatMul", {at, w}), "y");
  const Tensor xt = b.op("Reshape", {b.op("Transpose", {x}, {{"perm", Ints{0, 2, 1}}})}, {{"shape", Ints{8, 3}}});
  b.output(b.op("MatMul", {xt, v}), "z");
  const Tensor batch = b.op("Unsqueeze", {b.op("Reshape", {flat}, {{"shape", Ints{4, 5}}})}, {{"axes", Ints{0}}});
  b.output(b.op("MatMul", {at, batch}), "u");
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  // One copy: x^T before its Reshape, which then reads the copy. a^T is read in place by both MatMuls.
  CHECK(count_ops(*graph, "Identity") == 1);

  std::map<std::string, HostTensor> feeds;
  for (const auto& [name, shape] : std::vector<std::pair<std::string, Shape>>{
           {"a", {4, 3}}, {"w", {4, 5}}, {"x", {2, 3, 4}}, {"v", {3, 5}}, {"flat", {20}}})
    feeds.emplace(name, random_tensor(shape, DType::kF32, domain, rng));
  const std::vector<float> av = feeds.at("a").to_floats(), wv = feeds.at("w").to_floats(),
                           xv = feeds.at("x").to_floats(), vv = feeds.at("v").to_floats(),
                           fv = feeds.at("flat").to_floats();
  const std::vector<float> a_t = transpose(av, {4, 3}, {1, 0});
  const std::map<std::string, std::pair<Shape, std::vector<float>>> want{
      {"y", {{3, 5}, matmul(a_t, wv, 3, 4, 5)}},
      {"z", {{8, 5}, matmul(transpose(xv, {2, 3, 4}, {0, 2, 1}), vv, 8, 3, 5)}},
      {"u", {{1, 3, 5}, matmul(a_t, fv, 3, 4, 5)}},
  };
  for (bool fusion : {true, false}) {
    const auto out = run_graph(*graph, fusion, feeds);
    for (const auto& entry : want) {
      const auto& name = entry.first;  // a variable, not a binding: CAPTURE's lambda takes it (clang)
      const auto& expected = entry.second;
      CAPTURE(name);
      CAPTURE(fusion);
      REQUIRE(out.at(name).shape == expected.first);
      const double error = nmse(out.at(name).to_floats(), expected.second);
      CHECK_MESSAGE(error <= 1e-10, "NMSE " << error);
    }
  }
  CHECK(validation_errors() == 0);
}

// Attention as torch 2.x exports it: one QKV product [T, 3 * H * D] split into heads by views (Reshape,
// Transpose, a Gather of one index = Slice + Squeeze), which both MatMuls read in place: q [H, T, D]
// (rows 3HD apart, heads D apart), k^T [H, D, T] (K contiguous), v [H, T, D]. Also 1-D strided
// operands, a head view against one B for all heads (copied first: its heads cannot stack into rows),
// and whole batches from an offset against one B (read in place, stacked into one product).
TEST_CASE("MatMul reads attention's head views in place: fused and unfused match the CPU reference, f32 and f16") {
  constexpr std::int64_t T = 7, H = 2, D = 5;
  const TestDomain domain{-1.0f, 1.0f};
  for (const DType dtype : {DType::kF32, DType::kF16}) {
    CAPTURE(dtype_name(dtype));
    std::mt19937 rng(dtype == DType::kF32 ? 41 : 42);
    GraphBuilder b;
    const Tensor qkv = b.input("qkv", {T, 3 * H * D}, dtype);
    const Tensor w = b.input("w", {D, 3}, dtype), w2 = b.input("w2", {T, 3}, dtype), x3 = b.input("x3", {4, 3, D}, dtype);
    const Tensor x4 = b.input("x4", {2, 2, 3, D}, dtype);
    const Tensor heads = b.op("Transpose", {b.op("Reshape", {qkv}, {{"shape", Ints{T, 3, H, D}}})},
                              {{"perm", Ints{1, 2, 0, 3}}});  // [3, H, T, D]
    // Gather(x, i) along `axis` as the importer writes it: Slice, then Squeeze.
    auto pick = [&](Tensor x, float axis, float i) {
      return b.op("Squeeze", {b.op("Slice", {x}, {{"axis", axis}, {"start", i}, {"end", i + 1.0f}})},
                  {{"axes", Ints{static_cast<std::int64_t>(axis)}}});
    };
    const Tensor q = pick(heads, 0, 0), k = pick(heads, 0, 1), v = pick(heads, 0, 2);  // [H, T, D]
    const Tensor scores = b.op("MatMul", {q, b.op("Transpose", {k}, {{"perm", Ints{0, 2, 1}}})});  // [H, T, T]
    b.output(scores, "scores");
    b.output(b.op("MatMul", {scores, v}), "attended");  // [H, T, D]
    b.output(b.op("MatMul", {q, w}), "shared_b");       // [H, T, 3]: one B for every head (q copied)
    const Tensor row = pick(pick(v, 0, 1), 0, 2);        // [D]: v[1, 2, :], at an offset
    b.output(b.op("MatMul", {row, w}), "row");
    const Tensor column = pick(pick(v, 0, 0), 1, 3);     // [T]: v[0, :, 3], 3HD apart
    b.output(b.op("MatMul", {column, w2}), "column");
    // Whole batches 1..2 of x3: their rows stack into one product with w, read from an offset.
    b.output(b.op("MatMul", {b.op("Slice", {x3}, {{"axis", 0.0f}, {"start", 1.0f}, {"end", 3.0f}}), w}), "stacked");
    // x4[:, 0:1]: its batches (x4[0, 0], x4[1, 0]) are 2 x 3 x D apart, not the 3 x D rows of one: they do
    // not stack, whatever stride the Slice leaves its axis of one element.
    b.output(b.op("MatMul", {b.op("Slice", {x4}, {{"axis", 1.0f}, {"start", 0.0f}, {"end", 2.0f}, {"step", 2.0f}}), w}),
             "unit_axis");
    auto graph = b.build();
    REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
    // Copies: q and x4's slice against the shared w (their batches cannot stack into rows:
    // matmul_reads_in_place).
    CHECK(count_ops(*graph, "Identity") == 2);

    const std::map<std::string, HostTensor> feeds{{"qkv", random_tensor({T, 3 * H * D}, dtype, domain, rng)},
                                                  {"w", random_tensor({D, 3}, dtype, domain, rng)},
                                                  {"w2", random_tensor({T, 3}, dtype, domain, rng)},
                                                  {"x3", random_tensor({4, 3, D}, dtype, domain, rng)},
                                                  {"x4", random_tensor({2, 2, 3, D}, dtype, domain, rng)}};
    const std::vector<float> x = feeds.at("qkv").to_floats(), wv = feeds.at("w").to_floats(),
                             w2v = feeds.at("w2").to_floats(), x3v = feeds.at("x3").to_floats(),
                             x4v = feeds.at("x4").to_floats();
    const std::vector<float> hv = transpose(x, {T, 3, H, D}, {1, 2, 0, 3});  // [3, H, T, D]
    auto at = [&](int which, std::int64_t h, std::int64_t t, std::int64_t d) {
      return hv[static_cast<std::size_t>(((which * H + h) * T + t) * D + d)];
    };
    auto head = [&](int which, std::int64_t h) {
      std::vector<float> m;
      for (std::int64_t t = 0; t < T; ++t)
        for (std::int64_t d = 0; d < D; ++d) m.push_back(at(which, h, t, d));
      return m;
    };
    std::vector<float> want_scores, want_attended, want_shared, row_v, column_v;
    for (std::int64_t h = 0; h < H; ++h) {
      const std::vector<float> s = matmul(head(0, h), transpose(head(1, h), {T, D}, {1, 0}), T, D, T);
      const std::vector<float> o = matmul(s, head(2, h), T, T, D), p = matmul(head(0, h), wv, T, D, 3);
      want_scores.insert(want_scores.end(), s.begin(), s.end());
      want_attended.insert(want_attended.end(), o.begin(), o.end());
      want_shared.insert(want_shared.end(), p.begin(), p.end());
    }
    for (std::int64_t d = 0; d < D; ++d) row_v.push_back(at(2, 1, 2, d));
    for (std::int64_t t = 0; t < T; ++t) column_v.push_back(at(2, 0, t, 3));
    const std::vector<std::pair<std::string, std::vector<float>>> want{
        {"scores", want_scores}, {"attended", want_attended}, {"shared_b", want_shared},
        {"row", matmul(row_v, wv, 1, D, 3)}, {"column", matmul(column_v, w2v, 1, T, 3)},
        {"stacked", matmul(std::vector<float>(x3v.begin() + 3 * D, x3v.begin() + 9 * D), wv, 6, D, 3)},
        {"unit_axis", [&] {
           std::vector<float> rows(x4v.begin(), x4v.begin() + 3 * D);  // x4[0, 0], then x4[1, 0]
           rows.insert(rows.end(), x4v.begin() + 6 * D, x4v.begin() + 9 * D);
           return matmul(rows, wv, 6, D, 3);
         }()}};
    // f16: the inputs as stored are the reference's; each product rounds once to f16 (scores before
    // attended: twice).
    const double tolerance = dtype == DType::kF32 ? 1e-10 : 1e-5;
    for (bool fusion : {true, false}) {
      const auto out = run_graph(*graph, fusion, feeds);
      for (const auto& entry : want) {
        const auto& name = entry.first;  // a variable, not a binding: CAPTURE's lambda takes it (clang)
        const auto& expected = entry.second;
        CAPTURE(name);
        CAPTURE(fusion);
        const double error = nmse(out.at(name).to_floats(), expected);
        CHECK_MESSAGE(error <= tolerance, "NMSE " << error);
      }
    }
  }
  CHECK(validation_errors() == 0);
}

TEST_CASE("Softmax and LogSoftmax match their references over any axis, f32 and f16") {
  struct Case {
    Shape shape;
    int axis;
  };
  const Case cases[] = {{{7, 13}, -1}, {{3, 5, 127}, 1}, {{2, 4, 1, 1}, 1}, {{1031}, 0}, {{4, 5, 6}, 0}, {{2, 1000}, -1}};
  std::uint32_t seed = 100;
  for (const char* op : {"Softmax", "LogSoftmax"})
    for (const Case& c : cases) {
      const std::string name = op, shape = shape_to_string(c.shape);
      CAPTURE(name);
      CAPTURE(shape);
      CAPTURE(c.axis);
      const Outcome o = check_composite(op, {c.shape}, {{"axis", static_cast<float>(c.axis)}}, DType::kF32, seed++);
      CHECK(o.shape == c.shape);
    }
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    const std::string name = op;
    CAPTURE(name);
    check_composite(op, {{7, 13}}, {}, DType::kF16, seed++);
    check_composite(op, {{3, 5, 127}}, {{"axis", 1}}, DType::kF16, seed++);
  }
}

TEST_CASE("LayerNormalization matches its reference, with and without bias, f32 and f16") {
  struct Case {
    std::vector<Shape> shapes;
    Attrs attrs;
  };
  const Case cases[] = {
      {{{7, 13}, {13}, {13}}, {}},
      {{{2, 3, 5, 8}, {5, 8}}, {{"axis", 2}}},
      {{{3, 1031}, {1031}, {1031}}, {{"epsilon", 1e-3f}}},
      {{{4, 6}, {4, 6}, {6}}, {{"axis", 0}}},
      {{{1}, {1}}, {}},  // one element: the output is the bias-free 0
  };
  std::uint32_t seed = 200;
  for (const Case& c : cases) {
    const std::string shape = shape_to_string(c.shapes[0]);
    CAPTURE(shape);
    check_composite("LayerNormalization", c.shapes, c.attrs, DType::kF32, seed++);
  }
  check_composite("LayerNormalization", {{7, 13}, {13}, {13}}, {}, DType::kF16, seed++);
  check_composite("LayerNormalization", {{2, 3, 5, 8}, {5, 8}}, {{"axis", -2}}, DType::kF16, seed++);
}

TEST_CASE("BatchNormalization matches its reference over ranks 2 to 4, f32 and f16") {
  const std::vector<Shape> xs = {{2, 3, 5, 7}, {4, 13}, {1, 13, 3}};
  std::uint32_t seed = 300;
  for (const Shape& x : xs) {
    const std::string shape = shape_to_string(x);
    CAPTURE(shape);
    const Shape c{x[1]};
    check_composite("BatchNormalization", {x, c, c, c, c}, {}, DType::kF32, seed++);
    check_composite("BatchNormalization", {x, c, c, c, c}, {{"epsilon", 0.5f}}, DType::kF32, seed++);
  }
  check_composite("BatchNormalization", {{2, 3, 5, 7}, {3}, {3}, {3}, {3}}, {}, DType::kF16, seed++);
}

TEST_CASE("GlobalAveragePool and GlobalMaxPool are reductions over the spatial axes, f32 and f16") {
  const std::vector<Shape> shapes = {{2, 13, 7, 5}, {1, 7, 1, 1}, {2, 7, 11}, {1, 3, 112, 112}, {1, 13, 3, 1, 2}};
  std::uint32_t seed = 400;
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"})
    for (const Shape& x : shapes) {
      const std::string name = op, shape = shape_to_string(x);
      CAPTURE(name);
      CAPTURE(shape);
      Shape pooled = x;
      std::fill(pooled.begin() + 2, pooled.end(), 1);
      CHECK(check_composite(op, {x}, {}, DType::kF32, seed++).shape == pooled);
    }
  check_composite("GlobalAveragePool", {{2, 13, 7, 5}}, {}, DType::kF16, seed++);
  check_composite("GlobalMaxPool", {{2, 13, 7, 5}}, {}, DType::kF16, seed++);
}

TEST_CASE("every reduction matches its ONNX reference over axes, keepdims and no-op forms") {
  struct Case {
    Shape shape;
    Attrs attrs;
  };
  const Case cases[] = {
      {{3, 4, 5}, {{"axes", Ints{1}}}},
      {{3, 4, 5}, {{"axes", Ints{0, 2}}, {"keepdims", 0}}},
      {{3, 4, 5}, {{"axes", Ints{}}, {"keepdims", 0}}},
      {{3, 4, 5}, {{"axes", Ints{-1}}}},
      {{3, 4, 5}, {{"axes", Ints{0}}, {"keepdims", 1}}},
      {{3, 4, 5}, {{"axes", Ints{}}, {"noop_with_empty_axes", 1}}},
      {{3, 4, 5}, {{"noop_with_empty_axes", 1}}},  // no list at all: the same no-op
      {{3, 4, 5}, {{"axis", 1}, {"keepdims", 0}}},  // the scalar form: trailing axes from 1
      {{4, 1, 6}, {{"axes", Ints{0, 1}}, {"keepdims", 0}}},
      {{1, 7}, {{"axes", Ints{0}}}},  // only size-1 dims reduced
      {{3, 1, 4}, {{"axes", Ints{2}}, {"keepdims", 0}}},
      {{3, 4, 1, 5}, {{"axes", Ints{3, 1}}}},
      {{2, 130, 3}, {{"axes", Ints{1}}, {"keepdims", 0}}},
  };
  const char* ops[] = {"ReduceSum", "ReduceMean",      "ReduceMax", "ReduceMin",
                       "ReduceProd", "ReduceSumSquare", "ReduceL2",  "ReduceLogSumExp"};
  std::uint32_t seed = 400;
  for (const char* op : ops) {
    for (const Case& c : cases) {
      const std::string name = op, shape = shape_to_string(c.shape), first_attr = c.attrs[0].name;
      CAPTURE(name);
      CAPTURE(shape);
      CAPTURE(first_attr);
      check_composite(op, {c.shape}, c.attrs, DType::kF32, seed++);
    }
    const std::string name = op;
    CAPTURE(name);
    check_composite(op, {{3, 4, 5}}, {{"axes", Ints{0, 2}}, {"keepdims", 0}}, DType::kF16, seed++);
  }
}

TEST_CASE("composites fuse: dispatch counts") {
  std::uint32_t seed = 500;
  // [ReduceMax -> Sub -> Exp -> ReduceSum -> Div]: rows of 13 are walked three times in one dispatch
  // (max, sum, the result); rows of 5000 are too long for that and take a dispatch per walk.
  CHECK(check_composite("Softmax", {{7, 13}}, {}, DType::kF32, seed++).fused_dispatches == 1);
  CHECK(check_composite("LogSoftmax", {{7, 13}}, {}, DType::kF32, seed++).fused_dispatches == 1);
  CHECK(check_composite("Softmax", {{2, 5000}}, {}, DType::kF32, seed++).fused_dispatches == 3);
  // A middle axis: the same on a Transpose view, and the copy that makes the view an output.
  CHECK(check_composite("Softmax", {{3, 5, 4}}, {{"axis", 1}}, DType::kF32, seed++).fused_dispatches == 2);
  // [ReduceMean -> Sub -> Mul -> ReduceMean -> Add -> Sqrt -> Div -> Mul -> Add]: mean, variance, result.
  CHECK(check_composite("LayerNormalization", {{7, 13}, {13}, {13}}, {}, DType::kF32, seed++).fused_dispatches == 1);
  CHECK(check_composite("LayerNormalization", {{2, 5000}, {5000}}, {}, DType::kF32, seed++).fused_dispatches == 3);
  CHECK(check_composite("ReduceL2", {{7, 13}}, {{"axes", Ints{0}}, {"keepdims", 0}}, DType::kF32, seed++)
            .fused_dispatches == 1);
  CHECK(check_composite("ReduceSumSquare", {{7, 13}}, {{"axes", Ints{1}}}, DType::kF32, seed++).fused_dispatches == 1);
  CHECK(check_composite("ReduceLogSumExp", {{7, 13}}, {{"axes", Ints{1}}, {"keepdims", 0}}, DType::kF32, seed++)
            .fused_dispatches == 2);
  CHECK(check_composite("ReduceSum", {{3, 4, 5}}, {{"axes", Ints{0}}, {"keepdims", 0}}, DType::kF32, seed++)
            .fused_dispatches == 1);
  CHECK(check_composite("BatchNormalization", {{2, 3, 5, 7}, {3}, {3}, {3}, {3}}, {}, DType::kF16, seed++)
            .fused_dispatches == 1);

  // BatchNormalization after an elementwise op: one dispatch for all of it.
  GraphBuilder b;
  const Tensor x = b.input("x", {2, 3, 5, 7});
  std::vector<Tensor> params;
  for (const char* name : {"scale", "bias", "mean", "var"}) params.push_back(b.input(name, {3}));
  b.output(b.op("BatchNormalization", {b.op("Relu", {x}), params[0], params[1], params[2], params[3]}), "y");
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  std::mt19937 rng(seed++);
  std::map<std::string, HostTensor> feeds;
  feeds.emplace("x", random_tensor({2, 3, 5, 7}, DType::kF32, {}, rng));
  for (const char* name : {"scale", "bias", "mean", "var"})
    feeds.emplace(name, random_tensor({3}, DType::kF32, {0.25f, 4.0f}, rng));
  std::size_t dispatches = 0;
  const auto out = run_graph(*graph, true, feeds, &dispatches);
  CHECK(dispatches == 1);
  // y = (relu(x) - mean) / sqrt(var + eps) * scale + bias, per channel.
  const std::vector<float> xv = feeds.at("x").to_floats(), s = feeds.at("scale").to_floats(),
                           bias = feeds.at("bias").to_floats(), m = feeds.at("mean").to_floats(),
                           var = feeds.at("var").to_floats();
  std::vector<float> want(xv.size());
  for (std::size_t i = 0; i < xv.size(); ++i) {
    const std::size_t c = (i / 35) % 3;
    want[i] = static_cast<float>((std::max(0.0, static_cast<double>(xv[i])) - m[c]) / std::sqrt(var[c] + 1e-5) * s[c] + bias[c]);
  }
  CHECK(nmse(out.at("y").to_floats(), want) <= 1e-10);
  CHECK(validation_errors() == 0);
}

}  // namespace vkfuse::testing
