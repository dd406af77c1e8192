#include "codegen/kernel_builder.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include "codegen/broadcast_map.h"
#include "codegen/glsl_types.h"
#include "codegen/kernel_root.h"
#include "codegen/vector_root.h"
#include "codegen/kernel_stage.h"
#include "codegen/shader_library.h"

namespace vkfuse {
namespace {

void replace_hook(std::string& text, const std::string& hook, const std::string& code) {
  const std::string marker = "//@" + hook;
  const std::size_t at = text.find(marker);
  if (at == std::string::npos) return;
  const std::size_t line_start = text.rfind('\n', at) + 1;
  const std::string indent(at - line_start, ' ');
  std::string indented;
  std::istringstream lines(code);
  std::string line;
  bool first = true;
  while (std::getline(lines, line)) {
    indented += (first ? "" : "\n" + indent) + line;
    first = false;
  }
  text.replace(at, marker.size(), indented);
}


Status check_operands(const KernelSpec& spec, const std::vector<KernelOp>& ops, std::size_t inputs,
                      std::size_t reduced) {
  for (std::size_t j = 0; j < ops.size(); ++j)
    for (const KernelOperand& arg : ops[j].args) {
      std::size_t limit = j;
      if (arg.source == KernelOperand::Source::kInput) limit = inputs;
      if (arg.source == KernelOperand::Source::kReduced) limit = reduced;
      if (arg.index < 0 || static_cast<std::size_t>(arg.index) >= limit)
        return make_error(ErrorCode::kInternal, "group '" + spec.label + "': op " + std::to_string(j) + " (" +
                                                    ops[j].op_name + ") has an operand out of range");
    }
  return {};
}

// A vector root: whole contiguous inputs, one output of the last stage's values, stages that index
// inputs that exist and chains whose operands do.
Status check_vector_spec(const KernelSpec& spec) {
  auto fail = [&](const std::string& what) {
    return make_error(ErrorCode::kInternal, "group '" + spec.label + "': " + what);
  };
  if (spec.is_kernel() || spec.is_reduce() || !spec.ops.empty() || !spec.post_ops.empty() || !spec.loads.empty())
    return fail("a vector root has no other root's stages");
  if (spec.images <= 0 || spec.inputs.empty() || spec.outputs.size() != 1 || spec.outputs[0].placement.slice != 0 ||
      spec.outputs[0].placement.offset != 0)
    return fail("a vector root reads its source and stores one output, whole");
  for (const KernelInput& input : spec.inputs)
    if (input.is_literal || !input.strides.empty() || input.offset != 0 || input.chunk_elements != 0)
      return fail("a vector root reads whole contiguous tensors of one binding");
  const auto in_range = [&](int k) { return k >= 0 && static_cast<std::size_t>(k) < spec.inputs.size(); };
  for (std::size_t j = 0; j < spec.vector_stages.size(); ++j) {
    const VectorStage& s = spec.vector_stages[j];
    if (s.rows <= 0 || s.length <= 0 || shape_numel(s.shape) != spec.images * s.rows)
      return fail("vector stage " + std::to_string(j) + " has " + std::to_string(s.rows) + " rows for shape " +
                  shape_to_string(s.shape));
    if (s.kind == VectorStage::Kind::kReduce ? j != 0 : !in_range(s.weight) || (s.bias >= 0 && !in_range(s.bias)))
      return fail("vector stage " + std::to_string(j) + " reads inputs it does not have");
    if (j > 0 && spec.vector_stages[j - 1].rows != s.length)
      return fail("vector stage " + std::to_string(j) + " folds rows of " + std::to_string(s.length) + ", the stage before has " +
                  std::to_string(spec.vector_stages[j - 1].rows));
    for (const KernelInput& input : s.post_inputs)
      if (!input.is_literal && !broadcasts_to(input.shape, s.shape))
        return fail("a stage input of shape " + shape_to_string(input.shape) + " does not broadcast to " +
                    shape_to_string(s.shape));
    VKFUSE_TRY(check_operands(spec, s.post_ops, s.post_inputs.size(), 1));
    const std::size_t limit = s.value.source == KernelOperand::Source::kOp      ? s.post_ops.size()
                              : s.value.source == KernelOperand::Source::kInput ? s.post_inputs.size()
                                                                                : 1;
    if (s.value.index < 0 || static_cast<std::size_t>(s.value.index) >= limit)
      return fail("vector stage " + std::to_string(j) + " yields a value it does not compute");
  }
  return {};
}

Status check_spec(const KernelSpec& spec) {
  auto fail = [&](const std::string& what) {
    return make_error(ErrorCode::kInternal, "group '" + spec.label + "': " + what);
  };
  if (spec.outputs.empty()) return fail("no outputs");
  if (shape_numel(spec.domain) <= 0) return fail("empty domain " + shape_to_string(spec.domain));
  if (spec.is_vector()) return check_vector_spec(spec);
  if (spec.is_kernel()) {
    for (const KernelInput& input : spec.inputs)
      if (input.is_literal || !input.strides.empty() || input.offset != 0)
        return fail("kernel roots read whole contiguous tensors");
      else if (input.load >= 0 && static_cast<std::size_t>(input.load) >= spec.loads.size())
        return fail("an argument's load is out of range");
    if (!spec.ops.empty() || spec.is_reduce()) return fail("kernel roots have no pre stage");
    // Loads: one per computed argument, in argument order, each a well-formed chain over inputs
    // that broadcast to the argument.
    std::size_t computed = 0, elements = 0;
    for (const KernelInput& input : spec.inputs) {
      if (input.load < 0) continue;
      if (input.load != static_cast<int>(computed++)) return fail("loads out of argument order");
      const KernelLoad& load = spec.loads[static_cast<std::size_t>(input.load)];
      for (const KernelInput& in : load.inputs)
        if (!in.is_literal && !broadcasts_to(in.shape, input.shape))
          return fail("load input of shape " + shape_to_string(in.shape) + " does not broadcast to the argument " +
                      shape_to_string(input.shape));
      VKFUSE_TRY(check_operands(spec, load.ops, load.inputs.size(), load.element ? 1 : 0));
      if (load.value.source == KernelOperand::Source::kReduced && (!load.element || load.value.index != 0))
        return fail("a load's value is an element it does not compute");
      if (!load.element) continue;
      if (++elements > 1) return fail("more than one load computes an element");
      if (!spec.kernel_element.empty()) return fail("a root with its own element computes none in its loads");
      if (load.element->shape != input.shape)
        return fail("an element of shape " + shape_to_string(load.element->shape) + " for an argument of shape " +
                    shape_to_string(input.shape));
      for (const KernelInput& in : load.element->inputs)
        if (in.is_literal || !in.strides.empty() || in.offset != 0 || in.chunk_elements != 0)
          return fail("an element reads whole contiguous tensors of one binding");
    }
    if (computed != spec.loads.size()) return fail("a load no argument uses");
    if ((spec.split_counters > 0) != (spec.split_partial_bytes > 0)) return fail("split K needs counters and partials");
    if (spec.row_chain) {
      const RowChain& chain = *spec.row_chain;
      if (!spec.subgroup_reduce) return fail("a row chain folds its rows with subgroup operations");
      for (const KernelInput& in : chain.inputs)
        if (!in.is_literal && !broadcasts_to(in.shape, chain.domain))
          return fail("row input of shape " + shape_to_string(in.shape) + " does not broadcast to " + shape_to_string(chain.domain));
      VKFUSE_TRY(check_operands(spec, chain.ops, chain.inputs.size(), chain.reductions.size() + 1));
      const std::size_t limit = chain.value.source == KernelOperand::Source::kOp      ? chain.ops.size()
                                : chain.value.source == KernelOperand::Source::kInput ? chain.inputs.size()
                                                                                      : chain.reductions.size() + 1;
      if (chain.value.index < 0 || static_cast<std::size_t>(chain.value.index) >= limit)
        return fail("the row chain yields a value it does not compute");
    }
    if (spec.reduced != spec.domain) return fail("a kernel root's post stage runs over its output");
    for (const KernelOutput& output : spec.outputs)
      if (output.pre_stage) return fail("kernel roots store through their post stage");
  }
  for (const KernelInput& input : spec.inputs)
    if (!spec.is_kernel() && input.chunk_elements != 0) return fail("only kernel roots read chunked inputs");
  for (const KernelInput& input : spec.inputs)
    if (!spec.is_kernel() && !input.is_literal && !broadcasts_to(input.shape, spec.domain))
      return fail("input of shape " + shape_to_string(input.shape) + " does not broadcast to the domain " +
                  shape_to_string(spec.domain));
  for (const KernelInput& input : spec.post_inputs)
    if (!input.is_literal && !broadcasts_to(input.shape, spec.reduced))
      return fail("post input of shape " + shape_to_string(input.shape) + " does not broadcast to " +
                  shape_to_string(spec.reduced));
  // A reduce root's pre stage may read reduced values in later walks over the row (roots/reduce.glsl).
  VKFUSE_TRY(check_operands(spec, spec.ops, spec.inputs.size(), spec.reductions.size()));
  VKFUSE_TRY(check_operands(spec, spec.post_ops, spec.post_inputs.size(),
                            spec.is_kernel() ? 1 : spec.reductions.size()));
  if (spec.is_reduce() && (spec.reduce_axis < 0 || spec.reduce_axis >= static_cast<int>(spec.domain.size())))
    return fail("reduce axis out of range");
  return {};
}

// Storage bindings of the outputs, declared with a scalar and a vec4 view.
std::string output_declarations(const KernelSpec& spec, int first_binding) {
  std::ostringstream out;
  for (std::size_t k = 0; k < spec.outputs.size(); ++k) {
    const DType dtype = spec.outputs[k].dtype;
    const int b = first_binding + static_cast<int>(k);
    out << "layout(std430, set = 0, binding = " << b << ") writeonly buffer VkfBuf" << b << " { "
        << glsl_storage_type(dtype) << " d[]; } vkf_out" << k << ";\n";
    if (!spec.is_reduce())
      out << "layout(std430, set = 0, binding = " << b << ") writeonly buffer VkfBuf" << b << "V { "
          << glsl_storage_vec4(dtype) << " d[]; } vkf_out" << k << "v;\n";
  }
  return out.str();
}

std::string elementwise_vector_body(const KernelSpec& spec, const Stage& pre) {
  static_assert(kElementwiseVec == kStageVec);
  return pre.vector_chain("vkf_lane", {}, spec.outputs, "r", "base", "t");
}

std::string elementwise_scalar_body(const KernelSpec& spec, const Stage& pre) {
  std::ostringstream out;
  out << pre.scalar_loads("i");
  std::vector<std::string> args = pre.call_inputs("");
  for (std::size_t k = 0; k < spec.outputs.size(); ++k) {
    out << glsl_register_type(spec.outputs[k].dtype) << " r" << k << ";\n";
    args.push_back("r" + std::to_string(k));
  }
  out << join_call("vkf_lane", args) << "\n";
  for (std::size_t k = 0; k < spec.outputs.size(); ++k)
    out << "vkf_out" << k << ".d[" << spec.outputs[k].placement.index("i") << "] = "
        << glsl_store(spec.outputs[k].dtype, "r" + std::to_string(k)) << ";\n";
  return out.str();
}

const char* combine_name(KernelCombine combine) {
  switch (combine) {
    case KernelCombine::kSum: return "vkf_combine_sum";
    case KernelCombine::kMax: return "vkf_combine_max";
    case KernelCombine::kMin: return "vkf_combine_min";
    case KernelCombine::kProd: return "vkf_combine_prod";
  }
  return "vkf_combine_sum";
}


std::int64_t reduce_inner(const KernelSpec& spec) {
  std::int64_t inner = 1;
  for (std::size_t d = static_cast<std::size_t>(spec.reduce_axis); d < spec.domain.size(); ++d) inner *= spec.domain[d];
  return inner;
}

// A reduce root walks each row once per level of reductions that read each other's results: walk w
// folds the reductions whose operands need the results of w earlier walks, and stores the pre-stage
// outputs that need them (one walk when no pre-stage op reads a reduced value).
struct RowWalks {
  int count = 1;
  std::vector<int> reduction;  // the walk that folds each reduction
  std::vector<int> output;     // the walk that stores each pre-stage output (-1: a post-stage output)
};

RowWalks row_walks(const KernelSpec& spec) {
  RowWalks walks;
  // Ops are in evaluation order: an op's operands, and the operands of the reductions it reads, come first.
  const std::vector<int> op_walk = op_walks(spec.ops, spec.reductions);
  for (const KernelReduction& r : spec.reductions) {
    walks.reduction.push_back(operand_walk(spec.reductions, op_walk, r.operand));
    walks.count = std::max(walks.count, walks.reduction.back() + 1);
  }
  for (const KernelOutput& output : spec.outputs) {
    walks.output.push_back(output.pre_stage ? operand_walk(spec.reductions, op_walk, output.value) : -1);
    walks.count = std::max(walks.count, walks.output.back() + 1);
  }
  return walks;
}

}  // namespace

std::uint32_t KernelInput::bindings() const {
  if (is_literal || load >= 0) return 0;
  if (chunk_elements <= 0) return 1;
  return static_cast<std::uint32_t>((shape_numel(shape) + chunk_elements - 1) / chunk_elements);
}

std::uint64_t elementwise_num_vectors(std::int64_t numel) {
  return (static_cast<std::uint64_t>(numel) + kElementwiseVec - 1) / kElementwiseVec;
}

std::int64_t ElementPlacement::at(std::int64_t i) const {
  if (slice == 0) return offset + i;
  std::int64_t index = offset + i % slice, inner = slice, step = stride;
  for (const auto& [size, block_stride] : blocks) {
    index += i % size / inner * step;
    inner = size;
    step = block_stride;
  }
  return index + i / inner * step;
}

std::string ElementPlacement::index(const std::string& i) const {
  if (identity()) return i;
  const std::string at = offset == 0 ? "" : " + " + std::to_string(offset) + "u";
  if (slice == 0) return "(" + i + at + ")";
  auto u = [](std::int64_t v) { return std::to_string(v) + "u"; };
  std::string terms;  // the levels below the outermost (i / inner), innermost first
  std::int64_t inner = slice, step = stride;
  for (const auto& [size, block_stride] : blocks) {
    terms += " + (" + i + ") % " + u(size) + " / " + u(inner) + " * " + u(step);
    inner = size;
    step = block_stride;
  }
  return "((" + i + ") / " + u(inner) + " * " + u(step) + terms + at + " + (" + i + ") % " + u(slice) + ")";
}

bool ElementPlacement::whole_vec4s() const {
  bool whole = offset % 4 == 0 && slice % 4 == 0 && stride % 4 == 0;
  for (const auto& [size, block_stride] : blocks) whole = whole && size % 4 == 0 && block_stride % 4 == 0;
  return whole;
}

// The chain names of vector stage j ("s0x0", ...).
std::string vector_stage_prefix(std::size_t j) {
  std::string prefix = "s";
  prefix += std::to_string(j);
  return prefix;
}

namespace {

// Every stage of the kernel in binding order (as build_kernel makes them), each with its bindings.
std::vector<Stage> binding_stages(const KernelSpec& spec, int& next_binding) {
  std::map<int, int> shared;
  std::vector<Stage> stages;
  stages.push_back(make_stage(spec.inputs, spec.ops, spec.domain, "", shared, next_binding));
  for (const KernelLoad& load : spec.loads) {
    LoadStages made = make_load_stages(load, {}, shared, next_binding);
    if (made.element) stages.push_back(std::move(*made.element));
    stages.push_back(std::move(made.chain));
  }
  if (spec.row_chain)
    stages.push_back(make_stage(spec.row_chain->inputs, spec.row_chain->ops, spec.row_chain->domain, "r", shared, next_binding));
  stages.push_back(make_stage(spec.post_inputs, spec.post_ops, spec.reduced, "p", shared, next_binding));
  for (std::size_t j = 0; j < spec.vector_stages.size(); ++j)
    stages.push_back(make_stage(spec.vector_stages[j].post_inputs, spec.vector_stages[j].post_ops,
                                spec.vector_stages[j].shape, vector_stage_prefix(j), shared, next_binding));
  return stages;
}

}  // namespace

uint32_t count_bindings(const KernelSpec& spec) {
  int next_binding = 0;
  (void)binding_stages(spec, next_binding);
  return static_cast<uint32_t>(next_binding) + static_cast<uint32_t>(spec.outputs.size()) +
         (spec.split_counters > 0 ? 2u : 0u);
}

std::vector<uint32_t> image_bindings(const KernelSpec& spec) {
  int next_binding = 0;
  std::vector<uint32_t> images;
  for (const Stage& stage : binding_stages(spec, next_binding))
    for (std::size_t k = 0; k < stage.inputs.size(); ++k)
      if (stage.inputs[k].image && stage.binding[k] >= 0 &&
          std::find(images.begin(), images.end(), static_cast<uint32_t>(stage.binding[k])) == images.end())
        images.push_back(static_cast<uint32_t>(stage.binding[k]));
  std::sort(images.begin(), images.end());
  return images;
}

std::vector<uint32_t> storage_image_bindings(const KernelSpec& spec) {
  int next_binding = 0;
  (void)binding_stages(spec, next_binding);
  std::vector<uint32_t> images;
  for (std::size_t k = 0; k < spec.outputs.size(); ++k)
    if (!spec.outputs[k].image_format.empty()) images.push_back(static_cast<uint32_t>(next_binding) + static_cast<uint32_t>(k));
  return images;
}

std::array<std::uint64_t, 3> kernel_workgroups(const KernelSpec& spec) {
  if (spec.is_kernel()) return {spec.kernel_workgroups[0], spec.kernel_workgroups[1], spec.kernel_workgroups[2]};
  if (spec.is_vector()) return {static_cast<std::uint64_t>(spec.images), 1, 1};
  if (spec.is_reduce()) return {static_cast<std::uint64_t>(shape_numel(spec.domain) / reduce_inner(spec)), 1, 1};
  return {(elementwise_num_vectors(shape_numel(spec.domain)) + spec.workgroup_size - 1) / spec.workgroup_size, 1, 1};
}


Result<std::string> build_kernel(const KernelSpec& spec) {
  VKFUSE_TRY(check_spec(spec));
  std::map<int, int> shared;
  int next_binding = 0;
  const Stage pre = make_stage(spec.inputs, spec.ops, spec.domain, "", shared, next_binding);
  std::vector<LoadStages> loads;
  for (std::size_t k = 0; k < spec.inputs.size(); ++k)
    if (const int l = spec.inputs[k].load; l >= 0)
      loads.push_back(make_load_stages(spec.loads[static_cast<std::size_t>(l)], spec.inputs[k].shape, shared, next_binding));
  std::optional<Stage> rows;
  if (spec.row_chain)
    rows.emplace(make_stage(spec.row_chain->inputs, spec.row_chain->ops, spec.row_chain->domain, "r", shared, next_binding));
  const Stage post = make_stage(spec.post_inputs, spec.post_ops, spec.reduced, "p", shared, next_binding);
  std::vector<Stage> vector_stages;
  for (std::size_t j = 0; j < spec.vector_stages.size(); ++j)
    vector_stages.push_back(make_stage(spec.vector_stages[j].post_inputs, spec.vector_stages[j].post_ops,
                                       spec.vector_stages[j].shape, vector_stage_prefix(j), shared, next_binding));
  const int first_output_binding = next_binding;

  bool uses_f16 = false, uses_u8 = false;
  auto note = [&](DType dtype) {
    uses_f16 |= dtype == DType::kF16;
    uses_u8 |= dtype == DType::kBool || dtype == DType::kU8;
  };
  for (const KernelInput& input : spec.inputs) if (input.bindings() > 0) note(input.dtype);
  for (const KernelLoad& load : spec.loads) {
    for (const KernelInput& input : load.inputs) if (!input.is_literal) note(input.dtype);
    if (load.element)
      for (const KernelInput& input : load.element->inputs) note(input.dtype);
  }
  for (const KernelInput& input : spec.post_inputs) if (!input.is_literal) note(input.dtype);
  if (spec.row_chain)
    for (const KernelInput& input : spec.row_chain->inputs) if (!input.is_literal) note(input.dtype);
  for (const VectorStage& stage : spec.vector_stages)
    for (const KernelInput& input : stage.post_inputs) if (!input.is_literal) note(input.dtype);
  for (const KernelOutput& output : spec.outputs) note(output.dtype);

  VKFUSE_ASSIGN_OR_RETURN(std::string_view prelude, find_shader("common/prelude.glsl"));
  const std::string root_path = spec.is_kernel()   ? spec.kernel_root
                                : spec.is_vector() ? "roots/vector_chain.glsl"
                                : spec.is_reduce() ? "roots/reduce.glsl"
                                                   : "roots/elementwise.glsl";
  VKFUSE_ASSIGN_OR_RETURN(std::string_view root, find_shader(root_path));

  const std::int64_t numel = shape_numel(spec.domain);
  std::ostringstream src;
  src << "#version 450\n";
  if (uses_f16) src << "#extension GL_EXT_shader_16bit_storage : require\n";
  if (uses_u8) src << "#extension GL_EXT_shader_8bit_storage : require\n";
  if (spec.subgroup_reduce) src << "#extension GL_KHR_shader_subgroup_arithmetic : require\n";
  if (spec.preserve_inf_nan) {
    // SignedZeroInfNanPreserve (execution mode 4461) for 32-bit floats, capability 4466.
    src << "#extension GL_EXT_spirv_intrinsics : require\n"
        << "spirv_execution_mode(extensions = [\"SPV_KHR_float_controls\"], capabilities = [4466], 4461, 32);\n";
  }
  src << "// vkfuse group: " << spec.label << "\n";
  src << "// " << (spec.is_kernel() ? "output " : "domain ") << shape_to_string(spec.domain);
  if (spec.is_reduce()) src << " reduced to " << shape_to_string(spec.reduced);
  std::size_t op_count = spec.ops.size() + spec.reductions.size() + spec.post_ops.size();
  for (const VectorStage& stage : spec.vector_stages) op_count += 1 + stage.post_ops.size();
  src << ", " << op_count << " ops, " << count_bindings(spec)
      << " bindings\n";
  src << "#define VKF_WORKGROUP_SIZE " << spec.workgroup_size << "\n";
  if (spec.is_kernel()) {
    // The template's own constants follow the prelude (kernel_root_body).
  } else if (spec.is_vector()) {
    src << "#define VKF_IMAGES " << spec.images << "u\n";
  } else if (spec.is_reduce()) {
    src << "#define VKF_OUTER " << numel / reduce_inner(spec) << "u\n";
    src << "#define VKF_INNER " << reduce_inner(spec) << "u\n";
    src << "#define VKF_NUM_REDUCTIONS " << spec.reductions.size() << "\n";
  } else {
    src << "#define VKF_VEC " << kElementwiseVec << "u\n";
    src << "#define VKF_NUMEL " << numel << "u\n";
    src << "#define VKF_NUM_VECS " << elementwise_num_vectors(numel) << "u\n";
  }
  src << prelude << "\n";
  std::set<std::string> included;
  std::vector<const std::vector<KernelOp>*> op_lists{&spec.ops, &spec.post_ops};
  if (spec.row_chain) op_lists.push_back(&spec.row_chain->ops);
  for (const KernelLoad& load : spec.loads) op_lists.push_back(&load.ops);
  for (const VectorStage& stage : spec.vector_stages) op_lists.push_back(&stage.post_ops);
  for (const auto* ops : op_lists)
    for (const KernelOp& op : *ops) {
      if (!included.insert(op.snippet).second) continue;
      VKFUSE_ASSIGN_OR_RETURN(std::string_view snippet, find_shader(op.snippet));
      src << "// ---- " << op.snippet << "\n" << snippet << "\n";
    }
  if (spec.is_kernel()) {
    VKFUSE_ASSIGN_OR_RETURN(std::string body,
                            kernel_root_body(spec, pre, loads, rows ? &*rows : nullptr, post, first_output_binding));
    src << body;
    if (!spec.kernel_element.empty()) {
      // The root's own element template, over the root's inputs (KernelLaunch::element).
      for (std::size_t k = 0; k < spec.inputs.size(); ++k) src << "#define VKF_E_IN" << k << "(i) VKF_IN" << k << "(i)\n";
      VKFUSE_ASSIGN_OR_RETURN(std::string_view element, find_shader(spec.kernel_element));
      src << "// ---- " << spec.kernel_element << "\n" << element << "\n";
    }
    src << "// ---- " << root_path << "\n" << root;
    return src.str();
  }
  std::ostringstream declarations;
  std::set<std::pair<int, bool>> declared;
  pre.declare(declarations, declared);
  post.declare(declarations, declared);
  for (const Stage& stage : vector_stages) stage.declare(declarations, declared);
  src << "// ---- bindings\n" << declarations.str() << output_declarations(spec, first_output_binding) << "\n";
  if (spec.is_vector()) {
    std::string body(root);
    replace_hook(body, "vkf_vector_stages", vector_stages_body(spec, pre, vector_stages));
    src << vector_declarations(spec, vector_stages) << "// ---- " << root_path << "\n" << body;
    return src.str();
  }

  std::string body(root);
  if (!spec.is_reduce()) {
    std::vector<std::pair<KernelOperand, DType>> results;
    for (const KernelOutput& output : spec.outputs) results.push_back({output.value, output.dtype});
    replace_hook(body, "vkf_lane_function", pre.function("vkf_lane", {}, results));
    replace_hook(body, "vkf_vector_body", elementwise_vector_body(spec, pre));
    replace_hook(body, "vkf_scalar_body", elementwise_scalar_body(spec, pre));
    src << "// ---- roots/elementwise.glsl\n" << body;
    return src.str();
  }

  // Reduce root: walks over each row (row_walks); a lane function per walk yields the operands of the
  // reductions folded in it, then the pre-stage outputs stored in it.
  const RowWalks walks = row_walks(spec);
  std::vector<std::size_t> post_outputs;
  for (std::size_t k = 0; k < spec.outputs.size(); ++k)
    if (!spec.outputs[k].pre_stage) post_outputs.push_back(k);
  std::vector<std::pair<KernelOperand, DType>> post_results;
  for (std::size_t k : post_outputs) post_results.push_back({spec.outputs[k].value, spec.outputs[k].dtype});
  std::vector<std::string> reduced_params, reduced_args;
  for (std::size_t r = 0; r < spec.reductions.size(); ++r) {
    reduced_params.push_back("in float red" + std::to_string(r));
    reduced_args.push_back("red" + std::to_string(r));
  }
  std::ostringstream lane_functions, passes;
  for (std::size_t r = 0; r < spec.reductions.size(); ++r) passes << "float red" << r << " = 0.0;\n";
  for (int w = 0; w < walks.count; ++w) {
    std::vector<std::size_t> folded, stored;
    for (std::size_t r = 0; r < spec.reductions.size(); ++r)
      if (walks.reduction[r] == w) folded.push_back(r);
    for (std::size_t k = 0; k < spec.outputs.size(); ++k)
      if (spec.outputs[k].pre_stage && walks.output[k] == w) stored.push_back(k);
    std::vector<std::pair<KernelOperand, DType>> results;
    for (std::size_t r : folded) results.push_back({spec.reductions[r].operand, DType::kF32});
    for (std::size_t k : stored) results.push_back({spec.outputs[k].value, spec.outputs[k].dtype});
    const std::string lane = "vkf_lane" + std::to_string(w);
    lane_functions << pre.function(lane, reduced_params, results) << "\n";

    passes << "// walk " << w << ": folds " << folded.size() << " reduction(s), stores " << stored.size() << " output(s)\n";
    for (std::size_t r : folded)
      passes << "float acc" << r << " = " << combine_identity(spec.reductions[r].combine) << ";\n";
    passes << "for (uint k = tid; k < VKF_INNER; k += uint(VKF_WORKGROUP_SIZE)) {\n"
           << "  const uint i = row * VKF_INNER + k;\n";
    std::istringstream element_loads(pre.scalar_loads("i"));
    for (std::string line; std::getline(element_loads, line);) passes << "  " << line << "\n";
    std::vector<std::string> args = reduced_args;
    for (const std::string& a : pre.call_inputs("")) args.push_back(a);
    for (std::size_t j = 0; j < results.size(); ++j) {
      passes << "  " << glsl_register_type(results[j].second) << " r" << j << ";\n";
      args.push_back("r" + std::to_string(j));
    }
    passes << "  " << join_call(lane, args) << "\n";
    for (std::size_t j = 0; j < folded.size(); ++j)
      passes << "  acc" << folded[j] << " = " << combine_name(spec.reductions[folded[j]].combine) << "(acc" << folded[j]
             << ", r" << j << ");\n";
    for (std::size_t j = 0; j < stored.size(); ++j)
      passes << "  vkf_out" << stored[j] << ".d[" << spec.outputs[stored[j]].placement.index("i") << "] = "
             << glsl_store(spec.outputs[stored[j]].dtype, "r" + std::to_string(folded.size() + j)) << ";\n";
    passes << "}\n";
    if (folded.empty()) continue;
    // The workgroup combines the walk's partial results; every invocation then holds them.
    if (spec.subgroup_reduce) {
      // Each subgroup combines its own, its first invocation leaves the result in vkf_partial, and every
      // invocation folds the subgroups' results in subgroup order.
      for (std::size_t r : folded)
        passes << "acc" << r << " = " << subgroup_combine_name(spec.reductions[r].combine) << "(acc" << r << ");\n";
      passes << "if (subgroupElect()) {\n";
      for (std::size_t r : folded) passes << "  vkf_partial[" << r << "][gl_SubgroupID] = acc" << r << ";\n";
      passes << "}\nbarrier();\n";
      for (std::size_t r : folded) passes << "red" << r << " = vkf_partial[" << r << "][0];\n";
      passes << "for (uint s = 1u; s < gl_NumSubgroups; ++s) {\n";
      for (std::size_t r : folded)
        passes << "  red" << r << " = " << combine_name(spec.reductions[r].combine) << "(red" << r << ", vkf_partial[" << r
               << "][s]);\n";
      passes << "}\n";
    } else {
      for (std::size_t r : folded) passes << "vkf_partial[" << r << "][tid] = acc" << r << ";\n";
      passes << "barrier();\n"
             << "for (uint s = uint(VKF_WORKGROUP_SIZE) / 2u; s > 0u; s >>= 1u) {\n"
             << "  if (tid < s) {\n";
      for (std::size_t r : folded)
        passes << "    vkf_partial[" << r << "][tid] = " << combine_name(spec.reductions[r].combine) << "(vkf_partial[" << r
               << "][tid], vkf_partial[" << r << "][tid + s]);\n";
      passes << "  }\n  barrier();\n}\n";
      for (std::size_t r : folded) passes << "red" << r << " = vkf_partial[" << r << "][0];\n";
    }
    for (std::size_t r : folded)
      if (spec.reductions[r].mean)
        passes << "red" << r << " *= " << glsl_float_literal(1.0 / static_cast<double>(reduce_inner(spec))) << ";\n";
  }
  replace_hook(body, "vkf_lane_functions", lane_functions.str());
  replace_hook(body, "vkf_post_function", post.function("vkf_post", reduced_params, post_results));

  std::ostringstream finish;
  std::vector<std::string> post_args = reduced_args;
  finish << post.scalar_loads("row");
  for (const std::string& a : post.call_inputs("")) post_args.push_back(a);
  for (std::size_t j = 0; j < post_outputs.size(); ++j) {
    finish << glsl_register_type(spec.outputs[post_outputs[j]].dtype) << " o" << j << ";\n";
    post_args.push_back("o" + std::to_string(j));
  }
  finish << join_call("vkf_post", post_args) << "\n";
  for (std::size_t j = 0; j < post_outputs.size(); ++j)
    finish << "vkf_out" << post_outputs[j] << ".d[" << spec.outputs[post_outputs[j]].placement.index("row") << "] = "
           << glsl_store(spec.outputs[post_outputs[j]].dtype, "o" + std::to_string(j)) << ";\n";
  replace_hook(body, "vkf_row_walks", passes.str());
  replace_hook(body, "vkf_finish", finish.str());
  src << "// ---- roots/reduce.glsl\n" << body;
  return src.str();
}

}  // namespace vkfuse
