// KernelBuilder: golden GLSL for three small groups, each of which must also compile (glslang) and
// pass spirv-opt + spirv-val; and the broadcast index math on its own.
//
// Golden files live in tests/data/golden/<name>.comp and are compared byte for byte. After an
// intended change to the code generator, regenerate them with
//   VKFUSE_UPDATE_GOLDEN=1 ./build/tests/vkfuse_unit_tests -tc="golden*"
// (the test then writes the files instead of comparing, and passes) and read the diff before
// committing it: bindings, broadcast index math and literal bits must still be right.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "codegen/broadcast_map.h"
#include "codegen/glsl_compiler.h"
#include "codegen/kernel_builder.h"
#include "codegen/kernel_stage.h"
#include "codegen/spirv_optimizer.h"
#include "host/group_kernel.h"
#include "host/ops/kernel_support.h"
#include "host/ops/nn_support.h"

#ifndef VKFUSE_TEST_DATA_DIR
#define VKFUSE_TEST_DATA_DIR "tests/data"
#endif

namespace vkfuse {
namespace {

// The default plan with 16- and 8-bit storage buffers (f16 and bool tensors).
DevicePlan small_types_device() {
  DevicePlan device;
  device.f16_storage = true;
  device.u8_storage = true;
  return device;
}

// small_types_device with an H100's fp16 cooperative matrices, subgroups and limits.
DevicePlan h100_like_device() {
  DevicePlan device = small_types_device();
  device.coopmat_f16 = true;
  device.subgroup_size = 32;
  device.shared_memory_bytes = 49152;
  device.max_workgroup_invocations = 1024;
  return device;
}

// The kernel of the only group `b`'s graph plans into.
Result<GroupKernel> try_kernel_of(GraphBuilder& b, const DevicePlan& device) {
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  const GraphIR& ir = graph_ir(*graph);
  auto plan = plan_fusion(ir, device, FusionMode::kFused);
  REQUIRE_MESSAGE(plan.ok(), plan.status().to_string());
  REQUIRE(plan->groups.size() == 1);
  return make_group_kernel(ir, plan->groups[0], device);
}

GroupKernel kernel_of(GraphBuilder& b) {
  auto kernel = try_kernel_of(b, small_types_device());
  REQUIRE_MESSAGE(kernel.ok(), kernel.status().to_string());
  return std::move(kernel).value();
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// Builds the spec's GLSL, compiles it to SPIR-V and checks that it optimizes and validates; the GLSL.
std::string compiled_source(const KernelSpec& spec) {
  auto source = build_kernel(spec);
  REQUIRE_MESSAGE(source.ok(), source.status().to_string());
  auto spirv = compile_glsl_compute(*source, spec.label);
  REQUIRE_MESSAGE(spirv.ok(), spirv.status().to_string());
  auto optimized = optimize_and_validate(*spirv, spec.label);
  CHECK_MESSAGE(optimized.ok(), optimized.status().to_string());
  return *source;
}

// "NAME value NAME value ..." for those of `names` among the kernel template's defines, in that order.
std::string defines_of(const KernelSpec& spec, std::initializer_list<const char*> names) {
  std::string defines;
  for (const char* name : names)
    for (const auto& [key, value] : spec.kernel_defines)
      if (key == name) defines += (defines.empty() ? "" : " ") + key + " " + value;
  return defines;
}

// Checks that the spec's GLSL compiles and validates, and compares it with the golden file (or
// rewrites that under VKFUSE_UPDATE_GOLDEN=1).
void check_golden(const std::string& name, const KernelSpec& spec) {
  const std::string source = compiled_source(spec);
  const std::filesystem::path path = std::filesystem::path(VKFUSE_TEST_DATA_DIR) / "golden" / (name + ".comp");
  const char* update = std::getenv("VKFUSE_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << source;
    MESSAGE("wrote " << path.string());
  } else {
    REQUIRE_MESSAGE(std::filesystem::exists(path), "missing golden file " << path.string());
    const std::string golden = read_text(path);
    CHECK_MESSAGE(source == golden, "generated GLSL differs from " << path.string() << ":\n" << source);
  }
}

std::string index_of(const Shape& domain, const Shape& input, const std::vector<std::int64_t>& strides = {},
                     std::int64_t offset = 0) {
  return broadcast_index_glsl(broadcast_map(domain, input, strides), "linear", offset);
}

}  // namespace

TEST_CASE("golden: f32 chain with a scalar literal and a broadcast input") {
  //   x[6,5] ─ Mul(0.1) ─ Add(b[5]) ─ Relu ─ y     (30 elements: 7 vectors and a 2-element tail)
  GraphBuilder b;
  const Tensor x = b.input("x", {6, 5}), bias = b.input("b", {5});
  const Tensor y = b.op("Relu", {b.op("Add", {b.op("Mul", {x, b.scalar(0.1f)}), bias})});
  b.output(y, "y");
  const GroupKernel kernel = kernel_of(b);
  const KernelSpec& spec = kernel.spec;
  CHECK(spec.label == "Mul -> Add -> Relu");
  REQUIRE(spec.inputs.size() == 3);
  CHECK(spec.inputs[1].is_literal);
  CHECK(spec.inputs[1].literal == static_cast<double>(0.1f));
  CHECK(count_bindings(spec) == 3);  // x, b, y
  CHECK(kernel.bound_values == std::vector<ValueId>{x.id, bias.id, y.id});
  CHECK(kernel_workgroups(spec) == std::array<std::uint64_t, 3>{1, 1, 1});
  check_golden("chain_f32_literal_broadcast", spec);
}

TEST_CASE("golden: f16 inputs, bool output") {
  //   a[3,5] f16 ─ Abs ─ Greater(t[5] f16) ─ y bool
  GraphBuilder b;
  const Tensor a = b.input("a", {3, 5}, DType::kF16), t = b.input("t", {5}, DType::kF16);
  b.output(b.op("Greater", {b.op("Abs", {a}), t}), "y");
  const GroupKernel kernel = kernel_of(b);
  const KernelSpec& spec = kernel.spec;
  CHECK(spec.label == "Abs -> Greater");
  REQUIRE(spec.outputs.size() == 1);
  CHECK(spec.outputs[0].dtype == DType::kBool);
  CHECK(spec.ops[0].dtype == DType::kF16);
  CHECK(count_bindings(spec) == 3);
  check_golden("compare_f16_bool", spec);
}

TEST_CASE("golden: reduction with a pre and a post op") {
  //   x[4,16] ─ Mul(x) ─ ReduceMean(axis 1) ─ Sqrt ─ y[4]     (root mean square of each row)
  GraphBuilder b;
  const Tensor x = b.input("x", {4, 16});
  const Tensor mean = b.op("ReduceMean", {b.op("Mul", {x, x})}, {{"axis", 1}, {"keepdims", 0}});
  b.output(b.op("Sqrt", {mean}), "y");
  const GroupKernel kernel = kernel_of(b);
  const KernelSpec& spec = kernel.spec;
  CHECK(spec.label == "Mul -> ReduceMean -> Sqrt");
  REQUIRE(spec.is_reduce());
  CHECK(spec.reduce_axis == 1);
  CHECK(spec.reduced == Shape{4});
  REQUIRE(spec.reductions.size() == 1);
  CHECK(spec.reductions[0].mean);
  CHECK(spec.ops.size() == 1);
  CHECK(spec.post_ops.size() == 1);
  CHECK(spec.outputs[0].pre_stage == false);
  CHECK(count_bindings(spec) == 2);
  CHECK(kernel_workgroups(spec) == std::array<std::uint64_t, 3>{4, 1, 1});  // one workgroup per row
  check_golden("reduce_mean_sqrt", spec);
}

TEST_CASE("golden: LayerNormalization walks each row three times in one kernel") {
  //   x[5,13] ─ ReduceMean ─ Sub ─ Mul ─ ReduceMean ─ Add(eps) ─ Sqrt ─ Div(centered) ─ Mul(scale) ─ y
  // walk 0 folds the mean, walk 1 the variance of x - mean, walk 2 stores the normalized row; the
  // post ops Add and Sqrt run again in walk 2's chain, on the reduced values.
  GraphBuilder b;
  b.output(b.op("LayerNormalization", {b.input("x", {5, 13}), b.input("scale", {13})}), "y");
  const GroupKernel kernel = kernel_of(b);
  const KernelSpec& spec = kernel.spec;
  CHECK(spec.label == "ReduceMean -> Sub -> Mul -> ReduceMean -> Add -> Sqrt -> Div -> Mul");
  REQUIRE(spec.reductions.size() == 2);
  CHECK(spec.reductions[0].mean);
  CHECK(spec.reductions[1].mean);
  REQUIRE(spec.outputs.size() == 1);
  CHECK(spec.outputs[0].pre_stage);
  CHECK(count_bindings(spec) == 3);  // x, scale, y
  CHECK(kernel_workgroups(spec) == std::array<std::uint64_t, 3>{5, 1, 1});
  check_golden("layer_norm_row_walks", spec);
  const std::string source = build_kernel(spec).value();
  CHECK(source.find("// walk 2: folds 0 reduction(s), stores 1 output(s)") != std::string::npos);
  CHECK(source.find("// walk 3") == std::string::npos);
}

TEST_CASE("golden: a kernel op with a post-fused chain, preserving Inf and NaN") {
  //   x[1,3,6,5] ─ MaxPool(2x2) ─ Mul(scale[3,1,1]) ─ Add(skip) ─ Relu ─ y, and the pool's raw result
  GraphBuilder b;
  const Tensor x = b.input("x", {1, 3, 6, 5}), scale = b.input("scale", {3, 1, 1}), skip = b.input("skip", {1, 3, 3, 2});
  const Tensor pool = b.op("MaxPool", {x}, {{"kernel_shape", std::vector<std::int64_t>{2, 2}},
                                            {"strides", std::vector<std::int64_t>{2, 2}}});
  b.output(pool, "pool");
  b.output(b.op("Relu", {b.op("Add", {b.op("Mul", {pool, scale}), skip})}), "y");
  GroupKernel kernel = kernel_of(b);
  KernelSpec& spec = kernel.spec;
  CHECK(spec.label == "MaxPool -> Mul -> Add -> Relu");
  CHECK(spec.is_kernel());
  CHECK(spec.post_ops.size() == 3);
  CHECK(count_bindings(spec) == 5);  // x, scale, skip, pool, y
  CHECK(kernel.bound_values.size() == 5);
  spec.preserve_inf_nan = true;
  check_golden("kernel_post_chain", spec);
}

// roots/gemm_coopmat.glsl runs only where a device has NV cooperative matrices (not lavapipe): here it
// must at least generate, compile and validate for f16 MatMul and Gemm, with both operand layouts
// (A and B contiguous along K or not), ragged edges, a batch and a post-fused bias + Relu, staging each
// operand as raw 16-byte runs where its rows allow and as converted pairs where they do not, and with
// K split between subgroups.
TEST_CASE("the cooperative-matrix GEMM root compiles and validates in each operand layout") {
  const DevicePlan device = h100_like_device();
  struct Case {
    Shape a, b;
    float trans_a, trans_b;
    const char* quads;  // operands staged as raw 16-byte runs: rows of whole runs along the contiguous dimension
  };
  for (const Case& c : {Case{{100, 72}, {72, 40}, 0, 0, "A B"}, Case{{72, 100}, {40, 72}, 1, 1, "B"},
                        Case{{2, 300, 64}, {64, 520}, 0, 0, "A B"}, Case{{30, 70}, {70, 9}, 0, 0, ""},
                        Case{{1100, 128}, {128, 2000}, 0, 0, "A B"},  // 128x128x64 tiles
                        Case{{64, 1000}, {1000, 40}, 0, 0, "A B"}}) {  // 4 subgroups along K on each block
    CAPTURE(shape_to_string(c.a));
    GraphBuilder b;
    const Tensor x = b.input("a", c.a, DType::kF16), w = b.input("b", c.b, DType::kF16);
    const Tensor product = c.a.size() == 3 || (c.trans_a == 0 && c.trans_b == 0)
                               ? b.op("MatMul", {x, w})
                               : b.op("Gemm", {x, w}, {{"transA", c.trans_a}, {"transB", c.trans_b}});
    const Shape out = b.shape(product);
    const Tensor bias = b.input("bias", {out.back()}, DType::kF16);
    b.output(b.op("Relu", {b.op("Add", {product, bias})}), "y");
    auto kernel = try_kernel_of(b, device);
    REQUIRE_MESSAGE(kernel.ok(), kernel.status().to_string());
    CHECK(kernel->spec.kernel_root == "roots/gemm_coopmat.glsl");
    CHECK(kernel->spec.post_ops.size() == 2);
    const std::string source = compiled_source(kernel->spec);
    const std::string quads = std::string(c.quads);
    CHECK((source.find("#define VKF_A_QUADS 1") != std::string::npos) == (quads.find('A') != std::string::npos));
    CHECK((source.find("#define VKF_B_QUADS 1") != std::string::npos) == (quads.find('B') != std::string::npos));
    CHECK(source.find("#define VKF_IN0_RAW 1") != std::string::npos);  // plain inputs offer raw runs
    CHECK((source.find("#define VKF_WARPS_K 4") != std::string::npos) == (c.a[0] == 64));
  }
}

// Forced cooperative-matrix blockings with 2 x 4 and 4 x 2 subgroups (vkfuse_bench_gemm's
// "cm128x64@2x4") generate, compile and validate, with the post chain's vector stores (N % 4 == 0); a
// layout the root cannot take is refused with the tile in the message.
TEST_CASE("cooperative-matrix tiles with 2x4 and 4x2 subgroups compile, and odd layouts are refused") {
  const DevicePlan device = h100_like_device();
  struct Reset {
    ~Reset() { (void)force_coopmat_tile(std::nullopt, DevicePlan{}); }
  } reset;
  for (const CoopmatTile& tile : {CoopmatTile{128, 64, 1, 2, 4}, CoopmatTile{128, 32, 1, 4, 2}, CoopmatTile{64, 32, 2, 1, 4}}) {
    CAPTURE(tile.warps_m);
    REQUIRE(force_coopmat_tile(tile, device).ok());
    GraphBuilder b;
    const Tensor x = b.input("a", {300, 136}, DType::kF16), w = b.input("b", {136, 520}, DType::kF16);
    const Tensor bias = b.input("bias", {520}, DType::kF16);
    b.output(b.op("Relu", {b.op("Add", {b.op("MatMul", {x, w}), bias})}), "y");
    auto kernel = try_kernel_of(b, device);
    REQUIRE_MESSAGE(kernel.ok(), kernel.status().to_string());
    const std::string source = compiled_source(kernel->spec);
    CHECK(source.find("#define VKF_WARPS_M " + std::to_string(tile.warps_m) + "\n") != std::string::npos);
    CHECK(source.find("#define VKF_WARPS_N " + std::to_string(tile.warps_n) + "\n") != std::string::npos);
    CHECK(source.find("VKF_OUT0_X4(") != std::string::npos);
  }
  const Status three = force_coopmat_tile(CoopmatTile{128, 64, 1, 3, 2}, device);
  CHECK_FALSE(three.ok());
  CHECK(three.to_string().find("3x2 subgroups") != std::string::npos);
  CHECK_FALSE(force_coopmat_tile(CoopmatTile{32, 32, 1, 4, 2}, device).ok());  // 8-row blocks: not whole matrices
}

// A forced cooperative-matrix tile that splits K across workgroups (K = 136 over parts of 64: 3
// workgroups per tile, 2 subgroups along K inside) generates, compiles and validates with the split
// scratch declared and reserved, with the vector stores (520 columns) and the scalar ones (519).
TEST_CASE("cooperative-matrix tiles that split K across workgroups compile, with vector and scalar stores") {
  const DevicePlan device = h100_like_device();
  struct Reset {
    ~Reset() { (void)force_coopmat_tile(std::nullopt, DevicePlan{}); }
  } reset;
  REQUIRE(force_coopmat_tile(CoopmatTile{64, 64, 2, 2, 2, 3}, device).ok());
  for (const std::int64_t n : {520, 519}) {
    CAPTURE(n);
    GraphBuilder b;
    const Tensor x = b.input("a", {300, 136}, DType::kF16), w = b.input("b", {136, n}, DType::kF16);
    b.output(b.op("Relu", {b.op("MatMul", {x, w})}), "y");
    auto kernel = try_kernel_of(b, device);
    REQUIRE_MESSAGE(kernel.ok(), kernel.status().to_string());
    CHECK(kernel->spec.split_counters == 5 * ((n + 63) / 64));  // one per tile
    const std::string source = compiled_source(kernel->spec);
    CHECK(source.find("#define VKF_SPLIT_GROUPS 3\n") != std::string::npos);
    CHECK(source.find("#define VKF_K_PART 64u\n") != std::string::npos);
    CHECK(source.find("vkf_split_partials") != std::string::npos);
  }
  const Status many = force_coopmat_tile(CoopmatTile{64, 64, 1, 2, 2, 17}, device);
  CHECK_FALSE(many.ok());
  CHECK(many.to_string().find("17 workgroup(s) per tile") != std::string::npos);
}

// f32 operands load as vec4s on the tiled GEMM root where their rows are 16-byte aligned along the
// contiguous dimension (MatMul: A along K, B along N; Gemm with transB: B along K), and one at a time where
// they are not.
TEST_CASE("the tiled GEMM root loads aligned f32 operands as vec4s") {
  const DevicePlan device = small_types_device();
  struct Case {
    Shape a, b;
    float trans_b;
    DType dtype;
    bool a_vec4, b_vec4;
  };
  for (const Case& c : {Case{{64, 48}, {48, 40}, 0, DType::kF32, true, true}, Case{{64, 47}, {47, 40}, 0, DType::kF32, false, true},
                        Case{{64, 48}, {48, 42}, 0, DType::kF32, true, false}, Case{{64, 48}, {40, 48}, 1, DType::kF32, true, true},
                        Case{{64, 48}, {48, 40}, 0, DType::kF16, false, false}}) {
    CAPTURE(shape_to_string(c.a));
    CAPTURE(shape_to_string(c.b));
    GraphBuilder b;
    const Tensor x = b.input("a", c.a, c.dtype), w = b.input("b", c.b, c.dtype);
    b.output(c.trans_b != 0 ? b.op("Gemm", {x, w}, {{"transB", c.trans_b}}) : b.op("MatMul", {x, w}), "y");
    auto kernel = try_kernel_of(b, device);
    REQUIRE_MESSAGE(kernel.ok(), kernel.status().to_string());
    CHECK(kernel->spec.kernel_root == "roots/gemm_tiled.glsl");
    const std::string source = compiled_source(kernel->spec);
    CHECK((source.find("#define VKF_A_VEC4 1") != std::string::npos) == c.a_vec4);
    CHECK((source.find("#define VKF_B_VEC4 1") != std::string::npos) == c.b_vec4);
    CHECK((source.find("#define VKF_IN0_RAW 1") != std::string::npos) == (c.a_vec4 || c.b_vec4));  // raw views only then
  }
}

// f16 Convs of one group take the same root where the device has cooperative matrices: W as A, X's
// im2col matrix as B, gathered with strides, pads and dilations (or X's planes as they are for a plain
// 1x1, staged in two buffers), bias and a post-fused Relu in the store. Grouped Convs keep
// roots/conv2d.glsl; f32 ones of one group take roots/conv2d_patch.glsl (batch-1 layers with overlapping
// windows over 32 channels or more, host/ops/conv_patch.cpp) or roots/conv2d.glsl (1x1). (1x1 Convs over
// 1x1 images of up to 4 images take roots/gemm_skinny.glsl in either dtype.) f16 layers of fewer tiles
// than the GPU has SMs and a K of 1024 or more split K across workgroups.
TEST_CASE("f16 Convs of one group run on the cooperative-matrix root, gathering their window") {
  const DevicePlan device = h100_like_device();
  using Ints = std::vector<std::int64_t>;
  struct Case {
    Shape x, w;
    Ints pads, strides, dilations;
    float group;
    DType dtype;
    const char* root;
    bool gather;
    const char* quads;
    bool split = false;  // K split across workgroups
  };
  const char* coopmat = "roots/gemm_coopmat.glsl";
  // (The 7x7 layer with K = 1152 has fewer tiles than 132 and splits K; with K = 576 it does not. The
  // 28x28 layer with K = 1152 splits its 32x32 tiles to keep more subgroups busy; with K = 576 it does not.)
  for (const Case& c : {Case{{1, 13, 200, 220}, {7, 13, 3, 3}, {1, 1, 1, 1}, {2, 2}, {1, 1}, 1, DType::kF16, coopmat, true, ""},
                        Case{{1, 7, 100, 100}, {13, 7, 3, 3}, {2, 2, 2, 2}, {1, 1}, {2, 2}, 1, DType::kF16, coopmat, true, ""},
                        Case{{1, 16, 120, 120}, {32, 16, 3, 3}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 1, DType::kF16, coopmat, true, "A"},
                        Case{{2, 16, 80, 80}, {24, 16, 1, 1}, {0, 0, 0, 0}, {1, 1}, {1, 1}, 1, DType::kF16, coopmat, false, "A B"},
                        Case{{1, 16, 140, 140}, {24, 16, 1, 1}, {0, 0, 0, 0}, {2, 2}, {1, 1}, 1, DType::kF16, coopmat, true, "A"},
                        Case{{1, 128, 7, 7}, {64, 128, 3, 3}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 1, DType::kF16, coopmat, true, "A", true},
                        Case{{1, 64, 7, 7}, {64, 64, 3, 3}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 1, DType::kF16, coopmat, true, "A"},
                        Case{{1, 128, 28, 28}, {192, 128, 3, 3}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 1, DType::kF16, coopmat, true, "A", true},
                        Case{{1, 64, 28, 28}, {192, 64, 3, 3}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 1, DType::kF16, coopmat, true, "A"},
                        Case{{1, 8, 6, 6}, {8, 4, 3, 3}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 2, DType::kF16, "roots/conv2d.glsl", false, ""},
                        Case{{1, 64, 56, 56}, {64, 64, 3, 3}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 1, DType::kF32, "roots/conv2d_patch.glsl", false, ""},
                        Case{{1, 16, 8, 8}, {24, 16, 1, 1}, {0, 0, 0, 0}, {1, 1}, {1, 1}, 1, DType::kF32, "roots/conv2d.glsl", false, ""}}) {
    CAPTURE(shape_to_string(c.x));
    CAPTURE(shape_to_string(c.w));
    GraphBuilder b;
    const Tensor x = b.input("x", c.x, c.dtype), w = b.input("w", c.w, c.dtype), bias = b.input("bias", {c.w[0]}, c.dtype);
    const Tensor conv = b.op("Conv", {x, w, bias},
                             {{"pads", c.pads}, {"strides", c.strides}, {"dilations", c.dilations}, {"group", c.group}});
    b.output(b.op("Relu", {conv}), "y");
    auto kernel = try_kernel_of(b, device);
    REQUIRE_MESSAGE(kernel.ok(), kernel.status().to_string());
    CHECK(kernel->spec.kernel_root == c.root);
    const std::string source = compiled_source(kernel->spec);
    if (kernel->spec.kernel_root == coopmat) {
      CHECK(source.find("#define VKF_CONV 1") != std::string::npos);
      CHECK((source.find("#define VKF_CONV_GATHER 1") != std::string::npos) == c.gather);
      const std::string quads = std::string(c.quads);
      CHECK((source.find("#define VKF_A_QUADS 1") != std::string::npos) == (quads.find('A') != std::string::npos));
      CHECK((source.find("#define VKF_B_QUADS 1") != std::string::npos) == (quads.find('B') != std::string::npos));
      CHECK((source.find("#define VKF_SPLIT_GROUPS 1\n") == std::string::npos) == c.split);
      CHECK((source.find("#define VKF_STAGES 2\n") != std::string::npos) == !c.gather);  // gathered: one buffer
    }
  }
}

// The coopmat rule's regimes for gathered f16 Convs of long K, on H100-like limits: a 7x7 layer (32
// tiles) splits its 32x32x128 tiles with 4 subgroups along K over 4 workgroups (split_fills_gpu);
// vgg11's 512 -> 512 28x28 layer (400 tiles of 32x32) splits 32x32x32 tiles over 8 workgroups to keep
// more subgroups busy; the same layer at batch 8 (3200 tiles of 32x32) keeps whole 128x128x64 tiles. A
// layer of exactly 132 64x64 tiles does not split them (64x64 tiles that split K spill registers on
// the H100): it takes 32x32 tiles over 4 workgroups instead.
// The cooperative-matrix rule walks K 64 deep on 64x64 and 32x32 tiles only with two buffers of staged
// slices (a MatMul's B, not a gathered Conv's) and where that pads K no more than 32 deep (K 96 stays
// 32 deep); 128x128 tiles take 32 deep where 64 would pad K more (K 136), else 64.
TEST_CASE("cooperative-matrix tiles walk K 64 deep where two buffers fit and K pads no more") {
  const DevicePlan device = h100_like_device();
  struct Case {
    Shape a, b;
    std::string defines;
  };
  for (const Case& c : {Case{{197, 768}, {768, 3072}, "VKF_BM 64u VKF_BK 64u VKF_STAGES 2"},
                        Case{{197, 3072}, {3072, 768}, "VKF_BM 32u VKF_BK 64u VKF_STAGES 2"},
                        Case{{3136, 96}, {96, 384}, "VKF_BM 64u VKF_BK 32u VKF_STAGES 2"},
                        Case{{1100, 136}, {136, 2000}, "VKF_BM 128u VKF_BK 32u VKF_STAGES 2"},
                        Case{{1100, 128}, {128, 2000}, "VKF_BM 128u VKF_BK 64u VKF_STAGES 1"}}) {
    CAPTURE(shape_to_string(c.a));
    CAPTURE(shape_to_string(c.b));
    GraphBuilder b;
    b.output(b.op("MatMul", {b.input("a", c.a, DType::kF16), b.input("b", c.b, DType::kF16)}), "y");
    auto kernel = try_kernel_of(b, device);
    REQUIRE_MESSAGE(kernel.ok(), kernel.status().to_string());
    REQUIRE(kernel->spec.kernel_root == "roots/gemm_coopmat.glsl");
    CHECK(defines_of(kernel->spec, {"VKF_BM", "VKF_BK", "VKF_STAGES"}) == c.defines);
  }
  // A gathered Conv of K 576 (a multiple of 64) on 32x32 tiles: one buffer, so 32 deep.
  GraphBuilder b;
  const Tensor x = b.input("x", {1, 64, 56, 56}, DType::kF16), w = b.input("w", {64, 64, 3, 3}, DType::kF16);
  b.output(b.op("Conv", {x, w}, {{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}}), "y");
  auto kernel = try_kernel_of(b, device);
  REQUIRE_MESSAGE(kernel.ok(), kernel.status().to_string());
  REQUIRE(kernel->spec.kernel_root == "roots/gemm_coopmat.glsl");
  CHECK(defines_of(kernel->spec, {"VKF_BM", "VKF_BK", "VKF_STAGES"}) == "VKF_BM 32u VKF_BK 32u VKF_STAGES 1");
}

TEST_CASE("gathered f16 Convs of long K split or keep their tiles by how many the GPU holds") {
  const DevicePlan device = h100_like_device();
  struct Case {
    Shape x, w;
    const char* defines;
  };
  for (const Case& c : {Case{{1, 512, 7, 7}, {512, 512, 3, 3}, "VKF_BM 32u VKF_BK 128u VKF_WARPS_K 4 VKF_SPLIT_GROUPS 4"},
                        Case{{1, 512, 28, 28}, {512, 512, 3, 3}, "VKF_BM 32u VKF_BK 32u VKF_WARPS_K 1 VKF_SPLIT_GROUPS 8"},
                        Case{{8, 512, 28, 28}, {512, 512, 3, 3}, "VKF_BM 128u VKF_BK 64u VKF_WARPS_K 1 VKF_SPLIT_GROUPS 1"},
                        Case{{1, 128, 26, 26}, {768, 128, 3, 3}, "VKF_BM 32u VKF_BK 32u VKF_WARPS_K 1 VKF_SPLIT_GROUPS 4"}}) {
    CAPTURE(shape_to_string(c.x));
    GraphBuilder b;
    const Tensor x = b.input("x", c.x, DType::kF16), w = b.input("w", c.w, DType::kF16);
    b.output(b.op("Conv", {x, w}, {{"pads", std::vector<std::int64_t>{1, 1, 1, 1}}}), "y");
    auto kernel = try_kernel_of(b, device);
    REQUIRE_MESSAGE(kernel.ok(), kernel.status().to_string());
    REQUIRE(kernel->spec.kernel_root == "roots/gemm_coopmat.glsl");
    CHECK(defines_of(kernel->spec, {"VKF_BM", "VKF_BK", "VKF_WARPS_K", "VKF_SPLIT_GROUPS"}) == c.defines);
  }
}

// A fully connected layer (Gemm with transB: B's K contiguous) on the skinny root reads B, and A where
// it is a plain tensor, as raw 16-byte runs where K and the row strides are whole runs (8 f16, 4 f32),
// element by element where they are not (K 300 in f16) or where B's n is contiguous.
TEST_CASE("the skinny GEMM root reads operands whose K is contiguous as 16-byte runs") {
  const DevicePlan device = small_types_device();
  struct Case {
    std::int64_t k;
    DType dtype;
    float trans_b;
    const char* runs;  // "VKF_A_RUN a VKF_B_RUN b"
  };
  for (const Case& c : {Case{304, DType::kF16, 1, "VKF_A_RUN 8 VKF_B_RUN 8"}, Case{300, DType::kF32, 1, "VKF_A_RUN 4 VKF_B_RUN 4"},
                        Case{300, DType::kF16, 1, "VKF_A_RUN 0 VKF_B_RUN 0"}, Case{304, DType::kF16, 0, "VKF_A_RUN 8 VKF_B_RUN 0"}}) {
    CAPTURE(c.k);
    GraphBuilder b;
    const Tensor x = b.input("x", {2, c.k}, c.dtype);
    const Tensor w = b.input("w", c.trans_b != 0 ? Shape{24, c.k} : Shape{c.k, 24}, c.dtype);
    b.output(b.op("Gemm", {x, w}, {{"transB", c.trans_b}}), "y");
    auto kernel = try_kernel_of(b, device);
    REQUIRE_MESSAGE(kernel.ok(), kernel.status().to_string());
    REQUIRE(kernel->spec.kernel_root == "roots/gemm_skinny.glsl");
    CHECK(defines_of(kernel->spec, {"VKF_A_RUN", "VKF_B_RUN"}) == c.runs);
    compiled_source(kernel->spec);
  }
  // A computed in the loads (a pre-fused Relu) has no raw view: B's runs meet A element by element.
  GraphBuilder b;
  const Tensor x = b.input("x", {2, 304}, DType::kF16), w = b.input("w", {24, 304}, DType::kF16);
  b.output(b.op("Gemm", {b.op("Relu", {x}), w}, {{"transB", 1.0f}}), "y");
  auto kernel = try_kernel_of(b, device);
  REQUIRE_MESSAGE(kernel.ok(), kernel.status().to_string());
  REQUIRE(kernel->spec.kernel_root == "roots/gemm_skinny.glsl");
  const std::string source = compiled_source(kernel->spec);
  CHECK(source.find("#define VKF_B_RUN 8") != std::string::npos);
  CHECK(source.find("#define VKF_IN0_RAW 1") == std::string::npos);
}

// A 1x1 Conv over 1x1 images (a squeeze-and-excitation block's) is a vector times W: the skinny root,
// reading W's rows as runs along C where C is whole 16-byte runs, for up to 4 images; the implicit GEMM
// (or in f16 cooperative matrices, where the device has them) for more, for larger images and for
// grouped Convs.
TEST_CASE("a 1x1 Conv over 1x1 images runs on the skinny GEMM root") {
  const DevicePlan device = small_types_device();
  struct Case {
    Shape x;
    float group;
    DType dtype;
    bool bias;
    const char* root;
    const char* b_run;  // "VKF_B_RUN n" on the skinny root
  };
  for (const Case& c : {Case{{1, 52, 1, 1}, 1, DType::kF32, true, "roots/gemm_skinny.glsl", "VKF_B_RUN 4"},
                        Case{{4, 52, 1, 1}, 1, DType::kF16, true, "roots/gemm_skinny.glsl", "VKF_B_RUN 0"},
                        Case{{2, 64, 1, 1}, 1, DType::kF16, false, "roots/gemm_skinny.glsl", "VKF_B_RUN 8"},
                        Case{{5, 52, 1, 1}, 1, DType::kF32, true, "roots/conv2d.glsl", ""},
                        Case{{1, 52, 2, 1}, 1, DType::kF32, true, "roots/conv2d.glsl", ""},
                        Case{{1, 52, 1, 1}, 2, DType::kF32, true, "roots/conv2d.glsl", ""}}) {
    CAPTURE(shape_to_string(c.x));
    CAPTURE(c.group);
    GraphBuilder b;
    const Tensor x = b.input("x", c.x, c.dtype);
    const Tensor w = b.input("w", {12, c.x[1] / static_cast<std::int64_t>(c.group), 1, 1}, c.dtype);
    std::vector<Tensor> inputs{x, w};
    if (c.bias) inputs.push_back(b.input("bias", {12}, c.dtype));
    b.output(b.op("Conv", inputs, {{"group", c.group}}), "y");
    auto kernel = try_kernel_of(b, device);
    REQUIRE_MESSAGE(kernel.ok(), kernel.status().to_string());
    CHECK(kernel->spec.kernel_root == c.root);
    CHECK(defines_of(kernel->spec, {"VKF_B_RUN"}) == c.b_run);
    compiled_source(kernel->spec);
  }
}

TEST_CASE("f16 and bool tensors need 16- and 8-bit storage buffers") {
  {
    GraphBuilder b;
    b.output(b.op("Neg", {b.input("h", {4}, DType::kF16)}), "y");
    auto kernel = try_kernel_of(b, DevicePlan{});
    REQUIRE_FALSE(kernel.ok());
    CHECK(kernel.status().code() == ErrorCode::kUnsupported);
    CHECK(kernel.status().message() ==
          "group 'Neg': tensor 'h' is f16, which needs storageBuffer16BitAccess; this device does not offer it "
          "(use f32, or Cast inside the graph)");
  }
  {
    GraphBuilder b;
    b.output(b.op("Less", {b.input("x", {4}), b.scalar(0.0f)}), "y");
    auto kernel = try_kernel_of(b, DevicePlan{});
    REQUIRE_FALSE(kernel.ok());
    CHECK(kernel.status().message().find("tensor 'y' is bool, which needs storageBuffer8BitAccess") !=
          std::string::npos);
  }
  {
    // A bool that stays in registers needs no 8-bit storage.
    GraphBuilder b;
    const Tensor x = b.input("x", {4});
    b.output(b.op("Where", {b.op("Less", {x, b.scalar(0.0f)}), b.scalar(0.0f), x}), "y");
    CHECK(try_kernel_of(b, DevicePlan{}).ok());
  }
}

TEST_CASE("a spec the templates cannot express is an error naming the group") {
  KernelSpec spec;
  spec.label = "Bad";
  spec.domain = {8};
  spec.inputs.push_back({DType::kF32, {3}});
  spec.ops.push_back({"Neg", "ops/neg.glsl", "op_neg", {{KernelOperand::Source::kInput, 0}}, {}, DType::kF32});
  spec.outputs.push_back({{KernelOperand::Source::kOp, 0}});
  auto broadcast = build_kernel(spec);
  REQUIRE_FALSE(broadcast.ok());
  CHECK(broadcast.status().message() == "group 'Bad': input of shape [3] does not broadcast to the domain [8]");

  spec.inputs[0].shape = {8};
  spec.ops[0].args[0].index = 1;
  auto operand = build_kernel(spec);
  REQUIRE_FALSE(operand.ok());
  CHECK(operand.status().message() == "group 'Bad': op 0 (Neg) has an operand out of range");

  spec.ops[0].args[0].index = 0;
  spec.ops[0].snippet = "ops/no_such_op.glsl";
  auto snippet = build_kernel(spec);
  REQUIRE_FALSE(snippet.ok());
  CHECK(snippet.status().code() == ErrorCode::kNotFound);
  CHECK(snippet.status().message().find("ops/no_such_op.glsl") != std::string::npos);
}

TEST_CASE("a view folds into the load index of its consumer") {
  //   x[9] ─ Slice(1:9:2) ─┐
  //             y[3,4] ────Add ─ z[3,4]     reads x[1 + 2 * (i % 4)], binds x itself
  GraphBuilder b;
  const Tensor x = b.input("x", {9});
  const Tensor s = b.op("Slice", {x}, {{"start", 1}, {"step", 2}});
  b.output(b.op("Add", {s, b.input("y", {3, 4})}), "z");
  const GroupKernel kernel = kernel_of(b);
  REQUIRE(kernel.spec.inputs.size() == 2);
  CHECK(kernel.spec.inputs[0].shape == Shape{4});
  CHECK(kernel.spec.inputs[0].strides == std::vector<std::int64_t>{2});
  CHECK(kernel.spec.inputs[0].offset == 1);
  CHECK(kernel.bound_values.front() == x.id);
  const std::string source = compiled_source(kernel.spec);
  CHECK(source.find("const float a0 = vkf_b0.d[(i % 4u) * 2u + 1u];") != std::string::npos);
}

TEST_CASE("views of one tensor share one binding") {
  //   x[8] ─┬─ Slice(0:4) ─┐
  //         └─ Slice(4:8) ─Add ─ y[4]      binds x once
  GraphBuilder b;
  const Tensor x = b.input("x", {8});
  const Tensor lo = b.op("Slice", {x}, {{"end", 4}}), hi = b.op("Slice", {x}, {{"start", 4}});
  const Tensor y = b.op("Add", {lo, hi});
  b.output(y, "y");
  const GroupKernel kernel = kernel_of(b);
  CHECK(kernel.bound_values == std::vector<ValueId>{x.id, y.id});
  CHECK(count_bindings(kernel.spec) == 2);
  const std::string source = compiled_source(kernel.spec);
  CHECK(source.find("buffer VkfBuf1 { float d[]; } vkf_out0;") != std::string::npos);  // y is binding 1
  CHECK(source.find("binding = 2") == std::string::npos);
  CHECK(source.find("const vec4 p0 = vec4(vkf_b0v.d[t]);") != std::string::npos);  // x[0:4]: vector loads
  CHECK(source.find("const float a1 = vkf_b0.d[i + 4u];") != std::string::npos);    // x[4:8]: offset 4
}

// How four neighbouring lanes (from a multiple of 4) read an input on the vector paths (the elementwise
// root, VKF_OUT0_X4's post chain, VKF_IN<k>_X4's load chain).
TEST_CASE("vector lanes: a per-channel operand over whole planes loads once, a slice from an aligned offset as a vec4") {
  const auto lanes_of = [](const Shape& domain, KernelInput input) {
    const std::vector<KernelInput> inputs{std::move(input)};
    const std::vector<KernelOp> ops;
    std::map<int, int> shared;
    int next_binding = 0;
    const Stage stage = make_stage(inputs, ops, domain, "", shared, next_binding);
    return std::pair(stage.lane_access(0), stage.vector_loads("base", "t"));
  };
  const auto input = [](Shape shape, std::vector<std::int64_t> strides = {}, std::int64_t offset = 0) {
    KernelInput in;
    in.shape = std::move(shape);
    in.strides = std::move(strides);
    in.offset = offset;
    return in;
  };
  SUBCASE("per channel, planes of 16: one load for the four lanes") {
    const auto [access, loads] = lanes_of({1, 8, 4, 4}, input({8, 1, 1}));
    CHECK(access == LaneAccess::kShared);
    CHECK(loads == "const float p0 = vkf_b0.d[(base / 16u)];\nconst float a0_0 = p0;\nconst float a0_1 = p0;\n"
                   "const float a0_2 = p0;\nconst float a0_3 = p0;\n");
  }
  SUBCASE("per image and channel (a squeeze-and-excitation scale), batch 2") {
    CHECK(lanes_of({2, 8, 4, 4}, input({2, 8, 1, 1})).first == LaneAccess::kShared);
  }
  SUBCASE("planes of 9: four lanes may span two channels") {
    const auto [access, loads] = lanes_of({1, 8, 3, 3}, input({8, 1, 1}));
    CHECK(access == LaneAccess::kEach);
    CHECK(loads.find("(base + 3u)") != std::string::npos);
  }
  SUBCASE("channels 4.. of a 32-channel tensor: one vec4 from the slice's offset") {
    const auto [access, loads] = lanes_of({1, 8, 4, 4}, input({1, 8, 4, 4}, {512, 16, 4, 1}, 64));
    CHECK(access == LaneAccess::kVector);
    CHECK(loads.find("vkf_b0v.d[(base + 64u) / 4u]") != std::string::npos);
    // Batch 2: the images 512 apart, still whole vec4s.
    CHECK(lanes_of({2, 8, 4, 4}, input({2, 8, 4, 4}, {512, 16, 4, 1}, 64)).first == LaneAccess::kVector);
  }
  SUBCASE("a slice from an offset off the vec4s, or with odd outer strides, goes lane by lane") {
    CHECK(lanes_of({1, 8, 4, 4}, input({1, 8, 4, 4}, {512, 16, 4, 1}, 66)).first == LaneAccess::kEach);
    CHECK(lanes_of({2, 8, 4, 4}, input({2, 8, 4, 4}, {514, 16, 4, 1})).first == LaneAccess::kEach);
  }
  SUBCASE("the same layout as the domain, and a scalar") {
    CHECK(lanes_of({1, 8, 4, 4}, input({1, 8, 4, 4})).first == LaneAccess::kVector);
    CHECK(lanes_of({1, 8, 4, 4}, input({1})).first == LaneAccess::kShared);
  }
}

// Pointwise Convs whose planes hold whole vec4s stage X four positions at a time (roots/conv2d.glsl,
// VKF_B_VEC): X's VKF_IN0_X4 is a vec4 view, or the load chain on four lanes, which marks where it
// loads a per-channel operand once for them (VKF_IN0_X4_SHARED).
TEST_CASE("pointwise Convs read X four positions at a time where its planes hold whole vec4s") {
  struct Case {
    const char* what;
    Shape x;
    const char* chain;  // "", "bn" (scale, shift, Relu), "se" (a per-image scale), "relu"
    bool b_vec, shared;
  };
  for (const Case& c : {Case{"plain 8x8", {1, 16, 8, 8}, "", true, false},
                        Case{"BatchNorm and Relu in the loads, 8x8", {1, 16, 8, 8}, "bn", true, true},
                        Case{"a squeeze-and-excitation scale, batch 2", {2, 16, 8, 8}, "se", true, true},
                        Case{"Relu alone", {1, 16, 8, 8}, "relu", true, false},
                        Case{"planes of 25", {1, 16, 5, 5}, "bn", false, false}}) {
    CAPTURE(c.what);
    GraphBuilder b;
    const std::int64_t n = c.x[0], ch = c.x[1];
    Tensor x = b.input("x", c.x);
    const std::string chain = c.chain;
    if (chain == "bn")
      x = b.op("Relu", {b.op("Add", {b.op("Mul", {x, b.input("scale", {ch, 1, 1})}), b.input("shift", {ch, 1, 1})})});
    if (chain == "se") x = b.op("Mul", {x, b.input("se", {n, ch, 1, 1})});
    if (chain == "relu") x = b.op("Relu", {x});
    b.output(b.op("Conv", {x, b.input("w", {24, ch, 1, 1}), b.input("bias", {24})}), "y");
    auto kernel = try_kernel_of(b, h100_like_device());
    REQUIRE_MESSAGE(kernel.ok(), kernel.status().to_string());
    CHECK(kernel->spec.kernel_root == "roots/conv2d.glsl");
    const std::string source = compiled_source(kernel->spec);
    CHECK((source.find("#define VKF_B_VEC 4") != std::string::npos) == c.b_vec);
    CHECK((source.find("#define VKF_IN0_X4(i)") != std::string::npos) == c.b_vec);
    CHECK((source.find("#define VKF_IN0_X4_SHARED 1") != std::string::npos) == c.shared);
  }
}

// Tiles a benchmark may force (conv_tile_usable): the root steps its loads by invocations / BK and
// invocations / BN, so their invocations are a power of two of at least 64.
TEST_CASE("forced Conv tiles: only those the implicit-GEMM root can step through are usable") {
  const DevicePlan device = h100_like_device();
  CHECK(conv_tile_usable(ConvTile{32, 32, 2, 2}, device));
  CHECK(conv_tile_usable(ConvTile{128, 128, 8, 8}, device));
  CHECK(conv_tile_usable(ConvTile{32, 32, 4, 4}, device));  // 64 invocations
  CHECK(conv_tile_usable(ConvTile{32, 32, 2, 2, 4, 8}, device));  // four slices, K over 8 workgroups
  CHECK_FALSE(conv_tile_usable(ConvTile{24, 6, 6, 2}, device));   // 12 invocations
  CHECK_FALSE(conv_tile_usable(ConvTile{48, 32, 2, 2}, device));   // 384 invocations
}

TEST_CASE("broadcast index math") {
  SUBCASE("a trailing vector repeats along the rows") {
    CHECK(index_of({8, 4}, {4}) == "(linear % 4u)");
  }
  SUBCASE("a column repeats along the columns") {
    CHECK(index_of({8, 4}, {8, 1}) == "(linear / 4u)");
  }
  SUBCASE("a broadcast middle axis between two kept ones") {
    const auto map = broadcast_map({2, 3, 4}, {2, 1, 4});
    REQUIRE(map.size() == 3);
    CHECK(map[1].stride == 0);
    CHECK(index_of({2, 3, 4}, {2, 1, 4}) == "(linear % 4u) + (linear / 12u) * 4u");
  }
  SUBCASE("same shape collapses to the linear index") {
    CHECK(broadcast_map({2, 3, 4}, {2, 3, 4}).size() == 1);
    CHECK(index_of({2, 3, 4}, {2, 3, 4}) == "linear");
    CHECK(index_of({2, 3, 4}, {1, 3, 4}) == "(linear % 12u)");  // leading ones collapse too
  }
  SUBCASE("a strided view: every other column from an offset") {
    // Columns 1, 3, 5, 7 of a [3,8] tensor: strides {8, 2}, offset 1; the rows are contiguous in
    // the view's index space, so the two axes collapse into one of stride 2.
    CHECK(index_of({3, 4}, {3, 4}, {8, 2}, 1) == "linear * 2u + 1u");
    CHECK(index_of({3, 4}, {3, 4}, {10, 2}) == "(linear % 4u) * 2u + (linear / 4u) * 10u");
  }
  SUBCASE("a reversed view uses signed arithmetic") {
    // Slice(start 8, end 0, step -2) of [10]: elements 8, 6, 4, 2.
    CHECK(index_of({4}, {4}, {-2}, 8) == "uint(int(linear) * -2 + 8)");
  }
  SUBCASE("a strided view of lower rank than the domain") {
    // broadcast_map reads strides[d - lead] for the leading domain axes the view does not have
    // (an out-of-range index: d - lead wraps). The result must still be the plain broadcast.
    CHECK(index_of({3, 4}, {4}, {2}, 1) == "(linear % 4u) * 2u + 1u");
  }
  SUBCASE("a scalar") {
    CHECK(index_of({8, 4}, {}) == "0u");
    CHECK(index_of({8, 4}, {1, 1}, {}, 5) == "5u");
    // "Empty when the input is a single element" (codegen/broadcast_map.h).
    CHECK(broadcast_map({8, 4}, {}).empty());
    CHECK(broadcast_map({}, {}).empty());
  }
}

}  // namespace vkfuse
