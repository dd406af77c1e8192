// OpDef: one row of the op table. An op is a pure GLSL function in shaders/ops/<snippet>.glsl plus this
// row, which tells the planner its kind, the code generator how to call it, and the tests how to check
// it against a scalar CPU reference. Nothing outside the table names a specific op.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <vkfuse/status.hpp>
#include <vkfuse/types.hpp>
#include <vkfuse/vkfuse.hpp>

#include "codegen/kernel_spec.h"

namespace vkfuse {

enum class OpKind {
  kElementwise,  // out[i] = f(in_0[bcast(i)], ..., in_k[bcast(i)]); fuses into any group
  kReduce,       // a reduction root: chains fuse into its loads and after its result
  kView,         // a layout op: an index map over a stored tensor, never a dispatch
  kKernel,       // its own root template and one dispatch (MatMul, Conv, pooling, ...); reads and
                 // writes contiguous tensors
  kComposite,    // never in a graph: GraphBuilder::op expands it into primitives (Softmax, LayerNorm,
                 // ...), which then fuse like any others
};

struct DevicePlan;

// List-valued attributes (pads, strides, perm, shape, axes), by name.
using AttrLists = std::map<std::string, std::vector<std::int64_t>, std::less<>>;

// A node's attributes as ops see them: scalars in table order (defaults filled in), lists by name.
struct OpAttrs {
  std::span<const float> scalars;
  const AttrLists& lists;

  // The list, or `fallback` when the node does not have it.
  std::vector<std::int64_t> list(std::string_view name, std::vector<std::int64_t> fallback = {}) const {
    auto it = lists.find(name);
    return it == lists.end() ? fallback : it->second;
  }
  bool has_list(std::string_view name) const { return lists.find(name) != lists.end(); }
};

struct TensorInfo {
  Shape shape;
  DType dtype = DType::kF32;
  // kKernel launches: the cost of one element where the template loads it, when it is computed there
  // (an ElementLauncher's element); 0 for a plain load. Launchers may then favour parallelism over reuse.
  float load_cost = 0.0f;
  // Ops with OpDef::reads_in_place: an input that is a view is read in place, from its stored tensor
  // (bound whole), at `offset` + sum of index * stride over its dimensions; empty strides: stored
  // contiguous from element 0.
  std::vector<std::int64_t> strides;
  std::int64_t offset = 0;
  // kKernel launches, the output: the group also sums the result over each plane (the last two axes)
  // as the template stores it (KernelLaunch::plane_sums says whether the template does); with
  // `pooled_only`, the sums are all it stores (nothing else reads the result: a network's final pooling).
  bool plane_sums = false;
  bool pooled_only = false;
};

// kKernel ops: the output's shape and dtype from the inputs (errors say what is wrong, without the
// node: the caller adds it).
using KernelInfer = Result<TensorInfo> (*)(std::span<const TensorInfo> inputs, const OpAttrs& attrs);

// kKernel ops: whether input k of `inputs` (a view, with its strides) is read where it lies (OpDef::
// reads_in_place).
using StridedReader = bool (*)(std::span<const TensorInfo> inputs, std::size_t k);

// kKernel ops: the root template, its constants and the dispatch geometry. The template reads input k
// with VKF_IN<k>(index) and writes with VKF_OUT0(index, value) (both in register types: float for
// f32/f16), and finds every define given here plus VKF_WORKGROUP_SIZE.
struct KernelLaunch {
  std::string root;                                          // "roots/matmul.glsl"
  // An element template (shaders/elements/, as ElementLaunch's) placed before the root, which computes
  // each output with vkf_element(i); the template reads the root's inputs (VKF_E_IN<k> is VKF_IN<k>)
  // and finds its VKF_E_* constants among `defines`. The op's own dispatch and a consumer's loads then
  // share one formula (roots/pool2d.glsl). Such a root takes no element in its loads. Empty: none.
  std::string element;
  std::vector<std::pair<std::string, std::string>> defines;  // {"VKF_M", "128u"}, ...
  std::uint32_t workgroup_size = 256;                        // local_size_x
  std::array<std::uint32_t, 3> workgroups{1, 1, 1};          // within the device's limits
  // Split K across workgroups (roots/gemm_tiled.glsl, VKF_SPLIT_GROUPS): the root binds two scratch
  // buffers the session shares between such groups, after its outputs: `split_counters` uints, zero
  // when the dispatch starts and left zero when it ends, and `split_partial_bytes` of partial sums it
  // writes before it reads them. 0: none.
  std::uint32_t split_counters = 0;
  std::uint64_t split_partial_bytes = 0;
  // Per input, how many times the template loads each of its elements (a 1x1 Conv's X: once per tile of
  // output channels); 0, or no entry: not known. The planner computes a producer's elements in these
  // loads (ElementLauncher) only where it is known and small.
  std::vector<std::int64_t> input_reads;
  // Per input, the most a chain computed in its loads may cost per element (the planner's units: an Add
  // or a Mul 1), where that is less than the planner's own budget (no entry, or a negative one: the
  // planner's). The cooperative-matrix root stages a computed operand element by element, each loading
  // the chain's constants again: host/ops/kernel_support.cpp, gemm_launch.
  std::vector<float> chain_budgets;
  // Per input, whether the template loads it, stored, in whole 16-byte runs (no entry: false; set by
  // the GEMM roots that stage their slices so: roots/gemm_tiled.glsl's vec4s, roots/gemm_coopmat.glsl's
  // 16-byte units; roots/gemm_skinny.glsl, which streams its rows, reports none). A chain computed
  // there is loaded element by element instead; the planner computes no copy of a strided view there
  // (host/fusion_planner.cpp, pre-fusion), which its own dispatch stores once for the runs.
  std::vector<bool> run_inputs;
  // Per input, whether the template reads it four elements at a time through VKF_IN<k>_X4 where the
  // group gives that form (no entry: false; roots/conv2d.glsl asks it of a pointwise Conv's X).
  std::vector<bool> vec4_inputs;
  // Asked for plane sums (TensorInfo::plane_sums on the output): the template's workgroups take whole
  // planes and fold each plane's stores (roots/conv2d_depthwise.glsl, VKF_PLANE_SUMS); false where it
  // cannot, or where that would leave the GPU idle.
  bool plane_sums = false;
  // The template loads each element of its inputs once, as an elementwise group does (the image
  // stores): a chain computed in its loads gets the planner's recompute budget, not the smaller one of
  // the tiled anchors that load elements several times.
  bool loads_once = false;
};
using KernelLauncher = Result<KernelLaunch> (*)(std::span<const TensorInfo> inputs, const TensorInfo& output,
                                                 const OpAttrs& attrs, const DevicePlan& device);

// kKernel ops whose output elements can each be computed alone and cheaply (a depthwise Conv): the
// element template (shaders/elements/, defining `float vkf_element(uint i)`), its constants, and its cost
// per element in the planner's units. A consumer anchor may then evaluate it in its loads instead of
// reading the stored result (host/fusion_planner.cpp, elements in loads). An error: not for these inputs.
struct ElementLaunch {
  std::string root;                                          // "elements/conv2d_depthwise.glsl"
  std::vector<std::pair<std::string, std::string>> defines;  // {"VKF_E_KH", "3"}, ...
  float cost = 0.0f;
  // > 0: the template also defines vkf_element_run(i, v), VKF_E_RUN neighbouring outputs at once (i a
  // multiple of VKF_E_RUN, which divides this: the outputs of one row, which a run does not leave).
  std::int64_t run_row = 0;
  // Computed only in the loads of templates that load each element once (KernelLaunch::loads_once:
  // an image store reading a segmentation's upsampled scores), whatever its output's size; a tiled
  // anchor's repeated loads of it were never measured.
  bool loads_once_only = false;
};
using ElementLauncher = Result<ElementLaunch> (*)(std::span<const TensorInfo> inputs, const TensorInfo& output,
                                                   const OpAttrs& attrs);

// kKernel ops whose output, image by image (the first axis), is a matrix times the image's input vector
// plus a bias: Y[n, o] = B[o] + sum_k W[o, k] * X[n, k] (a 1x1 Conv over 1x1 images, a Gemm). Chains of
// them after a reduction (a squeeze-and-excitation block: pooling, two such products and their
// activations) may run as one vector group, one workgroup per image (host/fusion_planner.cpp, vector
// chains). W[o, k] lies at o * row_stride + k * k_stride of input `weight`. An error: not for these inputs.
struct VectorProduct {
  std::size_t weight = 1;
  int bias = -1;                      // the input holding B[o], or -1
  std::int64_t in = 0, out = 0;       // K and O, per image
  std::int64_t row_stride = 0, k_stride = 0;
};
using VectorProductLauncher = Result<VectorProduct> (*)(std::span<const TensorInfo> inputs, const TensorInfo& output,
                                                         const OpAttrs& attrs);

// kKernel ops that are batched matrix products, Y[b] = A[b] * B[b] (MatMul): how they address their
// operands, for templates that compute such a product inside another (roots/attention.glsl). Element
// (m, k) of batch b's A lies at a_batch + m * a_stride_m + k * a_stride_k of input 0, (k, n) of B at
// b_batch + k * b_stride_k + n * b_stride_n of input 1 (the batch offsets are GLSL over `(b)`, the
// output's batch index; views read in place included). An error: not for these inputs.
struct MatrixProduct {
  std::int64_t batch = 1, m = 0, k = 0, n = 0;
  std::int64_t a_stride_m = 0, a_stride_k = 0, b_stride_k = 0, b_stride_n = 0;
  std::string a_batch = "0u", b_batch = "0u";
};
using MatrixProductLayout = Result<MatrixProduct> (*)(std::span<const TensorInfo> inputs);

// kKernel ops whose output is their inputs laid side by side (Concat): where each input's elements lie
// in the output. The fusion planner then has the inputs' producers store there, and the op itself does
// not run (host/fusion_planner.cpp, Concat in place). nullopt: not expressible for these attributes.
using InputPlacer = std::optional<std::vector<ElementPlacement>> (*)(std::span<const TensorInfo> inputs,
                                                                     const TensorInfo& output, const OpAttrs& attrs);

// kKernel ops: the CPU reference over whole tensors (row-major, in double). `output.shape` is set.
struct RefTensor {
  Shape shape;
  std::vector<double> data;
};
using KernelReference = Status (*)(std::span<const RefTensor> inputs, const OpAttrs& attrs, RefTensor& output);

// How a kReduce op combines (its GLSL lives in shaders/roots/reduce.glsl, keyed by this).
enum class ReduceCombine { kSum, kMean, kMax, kMin, kProd };

// A strided view of a stored tensor: element (i_0..i_n) is at offset + sum(i_d * strides[d]).
struct StridedLayout {
  Shape shape;
  std::vector<std::int64_t> strides;  // in elements
  std::int64_t offset = 0;            // in elements
};

// For kView ops: rewrites `layout` (the input's view) into the output's view, or explains why not.
// ErrorCode::kUnsupported means "not as a view of this layout": the builder then copies the input into
// a contiguous tensor first and tries again.
using ViewTransform = Status (*)(StridedLayout& layout, const OpAttrs& attrs);

// For kComposite ops: builds the op out of primitives with `b` (node names start with `node_name`) and
// returns the result. The inputs' count and dtypes are already checked against the row, and the
// attributes are the row's (defaults filled in). Errors say what is wrong without the node: the
// builder adds it.
using CompositeExpand = Result<Tensor> (*)(GraphBuilder& b, std::span<const Tensor> inputs, const OpAttrs& attrs,
                                          const std::string& node_name);


// Which dtypes an input accepts. The GLSL register type follows the dtype: float for f32/f16,
// int for i32, bool for bool.
enum class InputClass {
  kFloat,  // f32, f16
  kBool,   // bool
  kAny,    // any dtype (Cast, Identity, the two branches of Where)
};

// How the output dtype follows from the inputs and attributes.
enum class TypeRule {
  kSameAsFirst,   // output dtype = dtype of input 0
  kSameAsSecond,  // output dtype = dtype of input 1 (Where)
  kBool,          // comparisons and logic
  kCastAttr,      // attribute "to" holds the DType as a number (static_cast<float>(DType))
};

// How closely the GPU result must match the scalar reference (computed in double).
enum class Tolerance {
  kExact,   // float32 rounding of the exact result: atol 1e-6, rtol 1e-6
  kSmooth,  // transcendental approximations: atol 1e-5, rtol 1e-4
};

// A float attribute with its default. Integer and enum attributes are stored as floats too.
struct AttrDef {
  std::string_view name;
  float default_value;
};

// The range test inputs are drawn from (per op, for every input of kind kFloat).
struct TestDomain {
  float lo = -4.0f;
  float hi = 4.0f;
  float min_magnitude = 0.0f;  // |x| is kept >= this (e.g. divisors)
  bool integers = false;       // draw whole numbers (e.g. Pow exponents, Equal operands)
};

// Scalar reference: inputs and attributes in, result out. Bools are 0.0 / 1.0.
using ScalarReference = double (*)(std::span<const double> inputs, std::span<const float> attrs);

struct OpDef {
  std::string_view name;           // ONNX op type, e.g. "HardSigmoid"
  OpKind kind;
  int arity;                       // number of inputs (the most, when min_arity is set)
  std::string_view snippet;        // shaders/ops/<snippet>.glsl
  // GLSL function called with the inputs then the attributes, in table order. "{out}" is replaced with
  // the output dtype's name ("f32", "f16", "i32", "bool"), which lets Cast pick its target.
  std::string_view glsl_function;
  InputClass input_class[3];       // first `arity` entries are used (kKernel ops check their own)
  TypeRule type_rule;
  std::span<const AttrDef> attrs;
  ScalarReference reference;
  float cost;                      // rough ALU cost in "adds" (Add = 1, Exp ~ 8), for recompute choices
  Tolerance tolerance;
  TestDomain domain;
  ReduceCombine combine = ReduceCombine::kSum;  // kReduce only
  ViewTransform view = nullptr;                 // kView only
  std::span<const std::string_view> list_attrs = {};  // list attributes the op accepts
  int min_arity = -1;                           // fewest inputs (-1: exactly `arity`)
  KernelInfer infer = nullptr;                  // kKernel only
  KernelLauncher launch = nullptr;              // kKernel only
  KernelReference reference_kernel = nullptr;   // kKernel; kComposite and kReduce: the whole-tensor
                                                // ONNX reference the tests check the expansion against
  CompositeExpand expand = nullptr;             // kComposite only
  // kKernel: storage buffers its launch may bind after the group's outputs (KernelLaunch::split_counters:
  // 2 for the GEMM roots' split K across workgroups), on devices that allow kMinBindingsForScratch
  // per group; the planner reserves them (scratch_bindings below).
  std::uint32_t scratch = 0;
  InputPlacer place_inputs = nullptr;           // kKernel: see InputPlacer
  ElementLauncher element = nullptr;            // kKernel: see ElementLauncher
  VectorProductLauncher vector_product = nullptr;  // kKernel: see VectorProductLauncher
  MatrixProductLayout matrix_product = nullptr;    // kKernel: see MatrixProduct
  // kKernel: whether the launch reads input k, a strided view (TensorInfo::strides and offset: a
  // transpose, a slice, a head split), in place; where it does not, or the op has none of this, the
  // GraphBuilder copies such a view first (Identity) and the op reads a contiguous tensor.
  StridedReader reads_in_place = nullptr;
  // kElementwise: the output is the input (Identity). Where it copies a view that reorders a tensor
  // only it reads, that tensor's producers may store into the copy instead (host/fusion_planner.cpp,
  // copies in place).
  bool copies_input = false;
  // Bit k: the op is linear in input k. kElementwise (Mul: either input, Div: its first) where the other
  // input is a scalar constant, op(x) = x * s; kKernel (MatMul) for each input alone. A product whose
  // operand such a scale computes, read by it alone, scales its result instead and reads the operand's
  // source in place (host/fusion_planner.cpp, operand scales).
  std::uint8_t linear_inputs = 0;
};

// A kernel launch binds scratch buffers only on devices that allow at least this many storage buffers
// per group, so that the op alone, with its scratch, always fits (the Vulkan minimum is 4).
inline constexpr std::uint32_t kMinBindingsForScratch = 8;

// The storage buffers `op`'s launch may add on `device`: what the planner reserves for it.
std::uint32_t scratch_bindings(const OpDef& op, const DevicePlan& device);

}  // namespace vkfuse
