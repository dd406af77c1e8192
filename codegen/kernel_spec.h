// KernelSpec: everything the code generator needs to emit one fused group's compute shader. It is
// built by the host from a FusionGroup and the op table; codegen knows no op by name.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <vkfuse/types.hpp>

namespace vkfuse {

// A tensor sampled from an image instead of read from a buffer: a graph input the application feeds
// as a VkImage, its pre-processing done in the loads. Element i of the tensor as stored ([1, C, H, W],
// or [1, H, W, C] with nhwc) is, for pixel (x, y) and channel c: the image sampled bilinearly at
// uv = ((x, y) + 0.5) * uv_scale + uv_offset (normalized coordinates), its component component[c],
// times mul[c] plus add[c]; `pad` where uv falls outside the image (a letterbox's border).
struct KernelImage {
  std::int64_t channels = 3, height = 1, width = 1;
  bool nhwc = false;
  std::array<float, 2> uv_scale{1.0f, 1.0f}, uv_offset{0.0f, 0.0f};
  std::array<int, 4> component{0, 1, 2, 3};
  std::array<float, 4> mul{1.0f, 1.0f, 1.0f, 1.0f}, add{0.0f, 0.0f, 0.0f, 0.0f};
  float pad = 0.0f;
};

// A tensor the group reads. Bound as a storage buffer unless it is a baked scalar literal (or an image).
struct KernelInput {
  DType dtype = DType::kF32;
  Shape shape;            // broadcasts (numpy rules) to the group's domain
  // A strided view of the bound buffer (a layout op folded into the load): element strides per
  // dimension of `shape` and an element offset. Empty strides: contiguous from offset 0.
  std::vector<std::int64_t> strides;
  std::int64_t offset = 0;
  int buffer = -1;          // inputs with the same id >= 0 share one binding (views of one tensor)
  bool is_literal = false;  // a scalar constant baked into the shader; no binding
  double literal = 0.0;
  // Kernel roots only: a tensor larger than one storage-buffer binding is bound as consecutive chunks
  // of this many elements, one binding each (0: one binding). VKF_IN<k>(i) picks the chunk.
  std::int64_t chunk_elements = 0;
  // Kernel roots only (pre-fusion): the argument is computed in the loads by KernelSpec::loads[load]
  // instead of being read from a binding of its own (-1).
  int load = -1;
  // Sampled from an image bound at its binding (a combined image sampler) instead of a storage buffer.
  std::optional<KernelImage> image;

  std::uint32_t bindings() const;  // storage buffers (or the image) this input binds (0 for a literal)
};

// An operand: a group input, the result of an earlier op, or (after a reduction) a reduced value.
// In the post-reduction stage, kInput and kOp refer to post_inputs and post_ops.
struct KernelOperand {
  enum class Source { kInput, kOp, kReduced };
  Source source = Source::kInput;
  int index = 0;
};

struct KernelOp {
  std::string op_name;   // for comments and labels only
  std::string snippet;   // path under shaders/, e.g. "ops/add.glsl"
  std::string function;  // resolved GLSL function name
  std::vector<KernelOperand> args;
  std::vector<float> attrs;  // trailing float arguments, baked
  DType dtype = DType::kF32;  // result type
};

// Where a tensor's elements lie in a larger one it is part of (a Concat written in place: each input is
// a slice of the result; a copy written in place: its source reordered): element i at offset + i, or,
// with slice > 0, at (i / slice) * stride + offset + i % slice (runs of `slice` elements, `stride`
// apart). With `blocks`, the runs group further, innermost first: blocks[0] = {B, S} takes runs B / slice
// at a time, and such blocks lie S apart, so element i is at offset + i % slice + ((i % B) / slice) *
// stride + (i / B) * S; blocks[1] groups those blocks, and so on (a transpose: vit_b_16's heads merged
// back, a channels-last result read channels-first, one more block per image of a batch). The
// defaults put element i at i.
struct ElementPlacement {
  std::int64_t offset = 0, slice = 0, stride = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> blocks;  // {elements per block, stride between blocks}

  bool identity() const { return offset == 0 && slice == 0; }
  // Whether the two put every element at the same index (the strides matter only between runs).
  bool operator==(const ElementPlacement& o) const {
    return offset == o.offset && slice == o.slice && (slice == 0 || stride == o.stride) && blocks == o.blocks;
  }
  std::int64_t at(std::int64_t i) const;          // the index of element `i`
  std::string index(const std::string& i) const;  // GLSL: the index of element `i`
  bool whole_vec4s() const;  // 4 consecutive elements from a multiple of 4 land as one aligned vec4
};

// A value the group writes. Elementwise roots: `value` is a pre-stage operand with the domain's shape.
// Reduce roots: `pre_stage` outputs are domain-shaped values stored while folding; the others are
// post-stage operands (kReduced or kOp of post_ops) with the reduced shape. `placement`: where its
// elements go in the bound buffer.
struct KernelOutput {
  KernelOperand value;
  DType dtype = DType::kF32;
  bool pre_stage = true;
  ElementPlacement placement;
  // Kernel roots whose template folds its result over planes (KernelLaunch::plane_sums: a depthwise
  // Conv's, each workgroup whole planes): `value` (a post-stage operand) summed over each plane (n, m)
  // of the root's result as the root stores it, times `plane_scale` (1 / the plane's size: a mean),
  // stored once per plane at the plane's index. At most one such output, not the first.
  bool plane_sum = false;
  double plane_scale = 1.0;
  // Kernel roots that write texels (roots/image_*.glsl): the output is a storage image of this GLSL
  // format ("rgba8", "rgba16f", "rgba32f") written through VKF_OUT<k>_TEXEL(xy, v), not a buffer.
  std::string image_format;
};

enum class KernelCombine { kSum, kMax, kMin, kProd };

// A producer kernel op evaluated one element at a time inside a load (tensor -> element -> tensor: a
// depthwise Conv computed in a pointwise Conv's loads). Its template `root` defines
// `float vkf_element(uint i)`, element i of the op's output, from its `inputs` (contiguous stored
// tensors, bound whole, read through VKF_E_IN<k>(i)) and constants `defines` (VKF_E_*).
struct KernelElement {
  Shape shape;       // the op's output: the argument's shape (element i of one is element i of the other)
  std::string root;  // "elements/conv2d_depthwise.glsl"
  std::vector<std::pair<std::string, std::string>> defines;
  std::vector<KernelInput> inputs;
};

// Pre-fusion: a kernel root's argument computed where the template loads it. VKF_IN<k>(i) loads
// `inputs` at element i of the argument's shape (they broadcast to it), runs `ops` and yields `value`.
// With an `element`, the chain starts from that element at i: ops read it (and `value` may be) the
// reduced operand 0, as a kernel root's post stage reads the root's result. At most one load of a
// kernel has an element.
struct KernelLoad {
  std::vector<KernelInput> inputs;
  std::vector<KernelOp> ops;
  KernelOperand value;
  std::optional<KernelElement> element;
};

// One reduction of a reduce root: folds `operand` (a pre-stage operand) over the trailing axes.
struct KernelReduction {
  KernelOperand operand;
  KernelCombine combine = KernelCombine::kSum;
  bool mean = false;  // divide by the number of folded elements
};

// One stage of a vector root (KernelSpec::vector_stages). Per image, `rows` values, each folding a row of
// `length` elements: a reduction of the image's rows of inputs[0] (kReduce: sum, max, or mean), or a
// product (kProduct): row o of the matrix inputs[weight] (W[o, k] at o * row_stride + k * k_stride) times
// the previous stage's vector (stage 0: the image's row of inputs[0]), plus inputs[bias][o] where bias >= 0.
// Then the stage's chain (`post_inputs` and `post_ops` over `shape`, [images, ...], reading the folded
// value as reduced operand 0) yields `value`: in shared memory for the next stage, stored by the last.
// With `subgroup_rows`, a subgroup folds each row together (long rows); else each invocation folds rows
// of its own.
struct VectorStage {
  enum class Kind { kReduce, kProduct };
  Kind kind = Kind::kProduct;
  KernelCombine combine = KernelCombine::kSum;  // kReduce (a product's sums)
  bool mean = false;                            // kReduce: divide by `length`
  int weight = -1, bias = -1;                   // kProduct: indices into KernelSpec::inputs
  std::int64_t row_stride = 0, k_stride = 0;    // kProduct
  std::int64_t rows = 0, length = 0;
  bool subgroup_rows = false;
  Shape shape;
  std::vector<KernelInput> post_inputs;
  std::vector<KernelOp> post_ops;
  KernelOperand value{KernelOperand::Source::kReduced, 0};
};

// The row chain of a root that holds rows in shared memory (roots/attention.glsl: the first product's
// result S; roots/element_rows.glsl: the element op's result through a view): each row (of `domain`'s
// last axis) runs through `ops` over `inputs` (broadcast to `domain`) and folds `reductions`, walking
// the row again where an op reads a reduction (as the reduce root does); `value`, per element, is what
// the root keeps (the second product's left operand) or stores. Operands: kInput and kOp as in a
// stage; kReduced r is reduction r's value for the row, and kReduced reductions.size() is the held
// element itself.
struct RowChain {
  Shape domain;
  std::vector<KernelInput> inputs;
  std::vector<KernelOp> ops;
  std::vector<KernelReduction> reductions;
  KernelOperand value;
};

struct KernelSpec {
  std::string label;   // "Sub -> Mul -> Add"
  Shape domain;        // the iteration space of the pre stage (elementwise: every output's shape)
  std::vector<KernelInput> inputs;  // pre stage, broadcast to `domain`
  std::vector<KernelOp> ops;        // pre stage, in evaluation order
  std::vector<KernelOutput> outputs;
  uint32_t workgroup_size = 256;
  // Declare SignedZeroInfNanPreserve for fp32 (the device must offer it): NaN and Inf propagate as
  // IEEE arithmetic does instead of x - x being folded to 0.
  bool preserve_inf_nan = false;

  // Reduce root (when `reductions` is not empty): the trailing axes [reduce_axis, rank) of `domain`
  // are folded; `reduced` is the reductions' output shape (numel = product of the leading axes).
  std::vector<KernelReduction> reductions;
  int reduce_axis = 0;
  Shape reduced;
  std::vector<KernelInput> post_inputs;  // broadcast to `reduced`
  // Combine each walk's partial results with subgroup operations (DevicePlan::subgroup_arithmetic).
  bool subgroup_reduce = false;
  std::vector<KernelOp> post_ops;

  // Kernel root (when `kernel_root` is set): an op's own template (MatMul, Conv, ...) that reads the
  // contiguous `inputs` through VKF_IN<k>(i) and writes outputs[0] through VKF_OUT0(i, v).
  std::string kernel_root;                                          // "roots/gemm_tiled.glsl"
  std::vector<std::pair<std::string, std::string>> kernel_defines;  // the op's constants
  std::string kernel_element;  // KernelLaunch::element: placed before the root, over the root's inputs
  // KernelLaunch::vec4_inputs: inputs the root reads through VKF_IN<k>_X4 too, given where the input is a
  // float tensor of one binding, or a load chain without an element template.
  std::vector<bool> kernel_vec4_inputs;
  std::array<std::uint32_t, 3> kernel_workgroups{1, 1, 1};
  std::vector<KernelLoad> loads;  // arguments computed in the loads (inputs[k].load indexes this)
  // Attention and element-rows roots: the chain over their rows (attention: between its two products,
  // inputs 0 and 1 the first's operands, input 2 the second's right operand, the chain's value its
  // left; element rows: over the element's result, the value stored). Needs subgroup arithmetic.
  std::optional<RowChain> row_chain;
  // Split K across workgroups (KernelLaunch says how): two more bindings after the outputs, the
  // counters (uint) and the partial sums (vec4), both coherent.
  std::uint32_t split_counters = 0;
  std::uint64_t split_partial_bytes = 0;

  // Vector root (when `vector_stages` is not empty): one workgroup per image (`images`, the first axis of
  // inputs[0] and of outputs[0]) runs the stages in order, their vectors in shared memory; inputs[0] is
  // the first stage's source, the others the products' matrices and biases, bound whole and contiguous;
  // outputs[0] is the last stage's value. The reduce-root fields stay empty.
  std::vector<VectorStage> vector_stages;
  std::int64_t images = 0;

  bool is_reduce() const { return !reductions.empty(); }
  bool is_kernel() const { return !kernel_root.empty(); }
  bool is_vector() const { return !vector_stages.empty(); }
};

// Storage buffers the kernel binds, in binding order: the distinct buffers of the non-literal inputs,
// then of each load's element inputs and inputs, then of the row chain's inputs, then of the post
// inputs (a vector root: of each stage's post inputs, stage by stage; all in order of first use), then
// the outputs, then (split K across workgroups) the split counters and partial sums.
uint32_t count_bindings(const KernelSpec& spec);
// The bindings of count_bindings that are combined image samplers (KernelInput::image), ascending.
std::vector<uint32_t> image_bindings(const KernelSpec& spec);
// The bindings of count_bindings that are storage images (KernelOutput::image_format), ascending.
std::vector<uint32_t> storage_image_bindings(const KernelSpec& spec);

}  // namespace vkfuse
