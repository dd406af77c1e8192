// MaxPool, AveragePool (ONNX, 2-D, NCHW) on roots/pool2d.glsl: one invocation per output element, fp32
// accumulation; their elements alone (elements/pool2d.glsl) run in the loads of a 1x1 Conv after them. GlobalAveragePool and GlobalMaxPool (any spatial rank) are composites: ReduceMean and
// ReduceMax over every spatial axis, which run on the parallel reduce root and fuse with the chains
// around them (a squeeze-excite block's pooling reads 112x112 planes: one invocation per plane would
// add them up serially). Their references stay here, with the windowed pools'.
//
// Decisions where ONNX leaves room (both follow onnxruntime's CPU kernels):
// - AveragePool with count_include_pad divides by the taps inside the padded input [-pad_begin,
//   in + pad_end): the extra cells a ceil_mode window reaches past the end pad are never counted.
// - A MaxPool window that holds no input element (only padding) yields -FLT_MAX; an AveragePool one 0.
#include <algorithm>
#include <limits>

#include "host/graph.h"
#include "host/op_registry.h"
#include "host/ops/composite_support.h"
#include "host/ops/kernel_support.h"
#include "host/ops/nn_support.h"

namespace vkfuse {
namespace {

constexpr AttrDef kMaxPoolAttrs[] = {{"ceil_mode", 0.0f}};
constexpr AttrDef kAveragePoolAttrs[] = {{"ceil_mode", 0.0f}, {"count_include_pad", 0.0f}};
constexpr std::string_view kMaxPoolLists[] = {"kernel_shape", "pads", "strides", "dilations"};
constexpr std::string_view kAveragePoolLists[] = {"kernel_shape", "pads", "strides"};
constexpr const char* kAxisNames[] = {"height", "width"};

enum class PoolKind { kMax, kAverage, kGlobalMax, kGlobalAverage };

bool is_max(PoolKind kind) { return kind == PoolKind::kMax || kind == PoolKind::kGlobalMax; }

// X seen as [planes, h, w] pooled to [planes, oh, ow].
struct PoolShape {
  std::int64_t planes = 1, h = 1, w = 1, oh = 1, ow = 1;
  std::array<WindowAxis, 2> axes;
  bool count_include_pad = false;
  Shape out;
};

Result<PoolShape> pool_shape(PoolKind kind, const TensorInfo& in, const OpAttrs& attrs) {
  const Shape& x = in.shape;
  PoolShape s;
  if (kind == PoolKind::kGlobalMax || kind == PoolKind::kGlobalAverage) {
    if (x.size() < 3)
      return make_error(ErrorCode::kInvalidArgument, "X must be [N, C, spatial...] (rank >= 3), got " + shape_to_string(x));
    s.planes = x[0] * x[1];
    s.w = shape_numel(Shape(x.begin() + 2, x.end()));
    s.axes[1].kernel = s.w;
    s.out = x;
    std::fill(s.out.begin() + 2, s.out.end(), 1);
    return s;
  }
  VKFUSE_TRY(require_nchw(in, "X", "2-D pooling only"));
  const bool max = is_max(kind);
  VKFUSE_ASSIGN_OR_RETURN(auto kernel, nn_list(attrs, "kernel_shape", 2, 1, {}));
  VKFUSE_ASSIGN_OR_RETURN(s.axes, read_window(attrs, {kernel[0], kernel[1]}, max));
  VKFUSE_ASSIGN_OR_RETURN(bool ceil_mode, nn_flag(attrs, 0, "ceil_mode"));
  if (!max) {
    VKFUSE_ASSIGN_OR_RETURN(s.count_include_pad, nn_flag(attrs, 1, "count_include_pad"));
  }
  s.planes = x[0] * x[1];
  s.h = x[2];
  s.w = x[3];
  VKFUSE_ASSIGN_OR_RETURN(s.oh, window_output(s.h, s.axes[0], ceil_mode, kAxisNames[0]));
  VKFUSE_ASSIGN_OR_RETURN(s.ow, window_output(s.w, s.axes[1], ceil_mode, kAxisNames[1]));
  s.out = {x[0], x[1], s.oh, s.ow};
  return s;
}

template <PoolKind kKind>
Result<TensorInfo> infer_pool(std::span<const TensorInfo> in, const OpAttrs& attrs) {
  VKFUSE_TRY(require_float(in, 0, "X"));
  VKFUSE_ASSIGN_OR_RETURN(PoolShape s, pool_shape(kKind, in[0], attrs));
  return TensorInfo{s.out, in[0].dtype};
}

// The window's constants (VKF_E_*, elements/pool2d.glsl's), for the root and for a consumer's loads.
std::vector<std::pair<std::string, std::string>> pool_defines(PoolKind kind, const PoolShape& s) {
  const WindowAxis& ah = s.axes[0];
  const WindowAxis& aw = s.axes[1];
  const std::pair<const char*, std::string> values[] = {{"H", glsl_int(s.h)},
                                                        {"W", glsl_int(s.w)},
                                                        {"OH", glsl_uint(s.oh)},
                                                        {"OW", glsl_uint(s.ow)},
                                                        {"KH", glsl_int(ah.kernel)},
                                                        {"KW", glsl_int(aw.kernel)},
                                                        {"SH", glsl_int(ah.stride)},
                                                        {"SW", glsl_int(aw.stride)},
                                                        {"DH", glsl_int(ah.dilation)},
                                                        {"DW", glsl_int(aw.dilation)},
                                                        {"PT", glsl_int(ah.pad_begin)},
                                                        {"PL", glsl_int(aw.pad_begin)},
                                                        {"H_END", glsl_int(s.h + ah.pad_end)},
                                                        {"W_END", glsl_int(s.w + aw.pad_end)},
                                                        {"POOL_MAX", is_max(kind) ? "1" : "0"},
                                                        {"COUNT_INCLUDE_PAD", s.count_include_pad ? "1" : "0"}};
  std::vector<std::pair<std::string, std::string>> defines;
  for (const auto& [name, value] : values) defines.emplace_back(std::string("VKF_E_") + name, value);
  return defines;
}

template <PoolKind kKind>
Result<KernelLaunch> launch_pool(std::span<const TensorInfo> in, const TensorInfo&, const OpAttrs& attrs,
                                 const DevicePlan& device) {
  VKFUSE_ASSIGN_OR_RETURN(PoolShape s, pool_shape(kKind, in[0], attrs));
  KernelLaunch launch;
  launch.root = "roots/pool2d.glsl";
  launch.element = "elements/pool2d.glsl";
  launch.workgroup_size = device.elementwise_workgroup;
  launch.defines = {{"VKF_OUTPUTS", glsl_uint(s.planes * s.oh * s.ow)}};
  for (auto& define : pool_defines(kKind, s)) launch.defines.push_back(std::move(define));
  launch.workgroups = {grid_for(s.planes * s.oh * s.ow, launch.workgroup_size, device), 1, 1};
  return launch;
}

// A pool's output element alone (shaders/elements/pool2d.glsl), for a consumer's loads (a MaxPool
// computed in the loads of the 1x1 Conv after it: googlenet's pool branches, squeezenet's fire
// modules); its cost is its window's taps.
template <PoolKind kKind>
Result<ElementLaunch> pool_element(std::span<const TensorInfo> in, const TensorInfo&, const OpAttrs& attrs) {
  VKFUSE_ASSIGN_OR_RETURN(PoolShape s, pool_shape(kKind, in[0], attrs));
  ElementLaunch element;
  element.root = "elements/pool2d.glsl";
  element.defines = pool_defines(kKind, s);
  element.cost = static_cast<float>(s.axes[0].kernel * s.axes[1].kernel);
  return element;
}

// One axis of a window: the input positions it reads, and how many of its taps lie inside the padded
// input (the count_include_pad divisor's factor).
struct AxisTaps {
  std::vector<std::int64_t> inside;
  std::int64_t padded = 0;
};

AxisTaps axis_taps(const WindowAxis& a, std::int64_t in, std::int64_t out_index) {
  AxisTaps taps;
  const std::int64_t start = out_index * a.stride - a.pad_begin;
  for (std::int64_t k = 0; k < a.kernel; ++k) {
    const std::int64_t p = start + k * a.dilation;
    if (p < in + a.pad_end) ++taps.padded;
    if (p >= 0 && p < in) taps.inside.push_back(p);
  }
  return taps;
}

template <PoolKind kKind>
Status reference_pool(std::span<const RefTensor> in, const OpAttrs& attrs, RefTensor& out) {
  VKFUSE_ASSIGN_OR_RETURN(PoolShape s, pool_shape(kKind, {in[0].shape, DType::kF32}, attrs));
  const std::vector<double>& x = in[0].data;
  for (std::int64_t plane = 0; plane < s.planes; ++plane)
    for (std::int64_t oy = 0; oy < s.oh; ++oy) {
      const AxisTaps rows = axis_taps(s.axes[0], s.h, oy);
      for (std::int64_t ox = 0; ox < s.ow; ++ox) {
        const AxisTaps cols = axis_taps(s.axes[1], s.w, ox);
        double result = 0.0;
        if (is_max(kKind)) {
          result = std::numeric_limits<float>::lowest();
          for (std::int64_t y : rows.inside)
            for (std::int64_t xx : cols.inside)
              result = std::max(result, x[static_cast<std::size_t>((plane * s.h + y) * s.w + xx)]);
        } else {
          for (std::int64_t y : rows.inside)
            for (std::int64_t xx : cols.inside) result += x[static_cast<std::size_t>((plane * s.h + y) * s.w + xx)];
          const std::int64_t count = s.count_include_pad ? rows.padded * cols.padded
                                                         : static_cast<std::int64_t>(rows.inside.size() * cols.inside.size());
          if (!rows.inside.empty() && !cols.inside.empty()) result /= static_cast<double>(count);
        }
        out.data[static_cast<std::size_t>((plane * s.oh + oy) * s.ow + ox)] = result;
      }
    }
  return {};
}

constexpr TestDomain kDomain{-4.0f, 4.0f, 0.0f, false};

// Global pools: a reduction over axes [2, rank), keeping them.
template <PoolKind kind>
Result<Tensor> expand_global_pool(GraphBuilder& b, std::span<const Tensor> in, const OpAttrs&, const std::string& name) {
  const Shape shape = b.shape(in[0]);
  if (shape.size() < 3)
    return make_error(ErrorCode::kInvalidArgument, "X must be [N, C, spatial...] (rank >= 3), got " + shape_to_string(shape));
  const char* reduce = kind == PoolKind::kGlobalMax ? "ReduceMax" : "ReduceMean";
  return expanded(b, b.op(reduce, {in[0]}, {{"axis", 2.0f}, {"keepdims", 1.0f}}, name));
}

#define VKFUSE_GLOBAL_POOL_ROW(op_name, op_kind)                                                                     \
  {.name = op_name, .kind = OpKind::kComposite, .arity = 1, .input_class = {InputClass::kFloat},                     \
   .type_rule = TypeRule::kSameAsFirst, .cost = 0.0f, .tolerance = Tolerance::kExact, .domain = kDomain,             \
   .reference_kernel = reference_pool<op_kind>, .expand = expand_global_pool<op_kind>}

#define VKFUSE_POOL_ROW(op_name, op_kind, op_attrs, op_lists)                                                        \
  {.name = op_name, .kind = OpKind::kKernel, .arity = 1, .input_class = {InputClass::kFloat},                        \
   .type_rule = TypeRule::kSameAsFirst, .attrs = op_attrs, .cost = 0.0f, .tolerance = Tolerance::kExact,             \
   .domain = kDomain, .list_attrs = op_lists, .infer = infer_pool<op_kind>, .launch = launch_pool<op_kind>,          \
   .reference_kernel = reference_pool<op_kind>, .element = pool_element<op_kind>}

const OpDef kPoolOps[] = {
    VKFUSE_POOL_ROW("MaxPool", PoolKind::kMax, kMaxPoolAttrs, kMaxPoolLists),
    VKFUSE_POOL_ROW("AveragePool", PoolKind::kAverage, kAveragePoolAttrs, kAveragePoolLists),
    VKFUSE_GLOBAL_POOL_ROW("GlobalAveragePool", PoolKind::kGlobalAverage),
    VKFUSE_GLOBAL_POOL_ROW("GlobalMaxPool", PoolKind::kGlobalMax),
};

#undef VKFUSE_POOL_ROW
#undef VKFUSE_GLOBAL_POOL_ROW

}  // namespace

std::span<const OpDef> pool_ops() { return kPoolOps; }

}  // namespace vkfuse
