// Stage: one stage of a generated kernel (the pre stage over the domain, a kernel root's load chain, the
// post stage over the reduced shape or in a kernel root's stores): its inputs with their access
// pattern and bindings, and the GLSL that declares the bindings, loads the inputs and evaluates the
// stage's chain as one function. Internal to codegen/: kernel_builder.cpp and kernel_root.cpp use it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "codegen/broadcast_map.h"
#include "codegen/glsl_types.h"
#include "codegen/kernel_spec.h"

namespace vkfuse {

// Elements per vector on the vector paths (the elementwise root's VKF_VEC, the kernel roots' VKF_OUT0_X4).
inline constexpr std::uint32_t kStageVec = 4;

enum class InputAccess { kLiteral, kScalar, kFull, kBroadcast };

// How kStageVec neighbouring lanes, from a multiple of kStageVec, read an input: one element for all
// lanes (a scalar input, or a broadcast input that repeats each element over a run of the domain a
// multiple of kStageVec long: a per-channel operand over whole planes), one vec4 of the binding's vec4
// view (the input steps with the domain over such runs, from a multiple of kStageVec), or lane by lane.
enum class LaneAccess { kNone, kShared, kVector, kEach };

// The combined image sampler at `binding` and vkf_img<binding>_at(i), element i of `input` sampled from
// it (KernelInput::image: coordinates, channel, normalization).
std::string image_declaration(int binding, const KernelInput& input);

// How a stage reads an input over a domain of `domain_numel` elements.
InputAccess classify(const KernelInput& input, std::int64_t domain_numel);

// numpy broadcasting of `from` onto `to`.
bool broadcasts_to(const Shape& from, const Shape& to);

// One stage's tensors: the pre stage reads `inputs` over the domain, the post stage reads
// `post_inputs` over the reduced shape. Names: x/v/a (pre) and px/pv/pa (post).
struct Stage {
  const std::vector<KernelInput>& inputs;
  const std::vector<KernelOp>& ops;
  Shape shape;
  std::string prefix;  // "" or "p"
  std::vector<InputAccess> access;
  std::vector<int> binding;

  std::string buffer(std::size_t k) const { return "vkf_b" + std::to_string(binding[k]); }
  std::string operand(const KernelOperand& op) const {
    switch (op.source) {
      case KernelOperand::Source::kInput: return prefix + "x" + std::to_string(op.index);
      case KernelOperand::Source::kOp: return prefix + "v" + std::to_string(op.index);
      case KernelOperand::Source::kReduced: return "red" + std::to_string(op.index);
    }
    return "?";
  }
  DType operand_dtype(const KernelOperand& op) const {
    if (op.source == KernelOperand::Source::kInput) return inputs[static_cast<std::size_t>(op.index)].dtype;
    if (op.source == KernelOperand::Source::kOp) return ops[static_cast<std::size_t>(op.index)].dtype;
    return DType::kF32;
  }
  std::string load(std::size_t k, const std::string& linear) const {
    std::string index;
    switch (access[k]) {
      case InputAccess::kScalar: index = std::to_string(inputs[k].offset) + "u"; break;
      case InputAccess::kFull: index = linear; break;
      default:
        index = broadcast_index_glsl(broadcast_map(shape, inputs[k].shape, inputs[k].strides), linear, inputs[k].offset);
        break;
    }
    if (inputs[k].image) return image_load(k, index);
    return glsl_load(inputs[k].dtype, buffer(k) + ".d[" + index + "]");
  }
  // Input k sampled from its image at element `index` of the tensor (KernelInput::image).
  std::string image_load(std::size_t k, const std::string& index) const {
    return "vkf_img" + std::to_string(binding[k]) + "_at(" + index + ")";
  }

  // How the kStageVec lanes from a multiple of kStageVec read input k on the vector paths.
  LaneAccess lane_access(std::size_t k) const;
  // Where lane_access(k) is kVector: the index in input k's vec4 view of the lanes from `base`
  // (`vector`, base / 4, where the input is laid out like the domain).
  std::string vector_index(std::size_t k, const std::string& base, const std::string& vector) const;

  // Declares each binding once (a scalar view, plus a vec4 view where an input loads vectors).
  void declare(std::ostringstream& out, std::set<std::pair<int, bool>>& declared) const {
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      if (binding[k] < 0) continue;
      if (inputs[k].image) {
        if (declared.insert({binding[k], false}).second) out << image_declaration(binding[k], inputs[k]);
        continue;
      }
      const DType dtype = inputs[k].dtype;
      // restrict: inputs are never written by the group, so loads may be batched ahead of stores.
      if (declared.insert({binding[k], false}).second)
        out << "layout(std430, set = 0, binding = " << binding[k] << ") restrict readonly buffer VkfBuf" << binding[k]
            << " { " << glsl_storage_type(dtype) << " d[]; } " << buffer(k) << ";\n";
      if (lane_access(k) == LaneAccess::kVector) declare_vec4_view(out, declared, k);
    }
  }

  // Declares input k's binding once more as vec4s (`buffer(k)`v), once per binding.
  void declare_vec4_view(std::ostringstream& out, std::set<std::pair<int, bool>>& declared, std::size_t k) const {
    if (declared.insert({binding[k], true}).second)
      out << "layout(std430, set = 0, binding = " << binding[k] << ") restrict readonly buffer VkfBuf" << binding[k]
          << "V { " << glsl_storage_vec4(inputs[k].dtype) << " d[]; } " << buffer(k) << "v;\n";
  }

  // A chain function: non-literal inputs (after `leading` parameters) in, `results` out.
  std::string function(const std::string& name, const std::vector<std::string>& leading,
                       const std::vector<std::pair<KernelOperand, DType>>& results) const {
    std::ostringstream out;
    std::vector<std::string> params = leading;
    for (std::size_t k = 0; k < inputs.size(); ++k)
      if (access[k] != InputAccess::kLiteral)
        params.push_back("in " + std::string(glsl_register_type(inputs[k].dtype)) + " " + prefix + "x" +
                         std::to_string(k));
    for (std::size_t r = 0; r < results.size(); ++r)
      params.push_back("out " + std::string(glsl_register_type(results[r].second)) + " " + prefix + "y" +
                       std::to_string(r));
    out << "void " << name << "(";
    for (std::size_t p = 0; p < params.size(); ++p) out << (p ? ", " : "") << params[p];
    out << ") {\n";
    for (std::size_t k = 0; k < inputs.size(); ++k)
      if (access[k] == InputAccess::kLiteral)
        out << "  const " << glsl_register_type(inputs[k].dtype) << " " << prefix << "x" << k << " = "
            << glsl_literal(inputs[k].dtype, inputs[k].literal) << ";\n";
    for (std::size_t j = 0; j < ops.size(); ++j) {
      const KernelOp& op = ops[j];
      out << "  const " << glsl_register_type(op.dtype) << " " << prefix << "v" << j << " = " << op.function << "(";
      for (std::size_t a = 0; a < op.args.size(); ++a) out << (a ? ", " : "") << operand(op.args[a]);
      for (std::size_t a = 0; a < op.attrs.size(); ++a)
        out << ((a || !op.args.empty()) ? ", " : "") << glsl_float_literal(op.attrs[a]);
      out << ");  // " << op.op_name << "\n";
    }
    for (std::size_t r = 0; r < results.size(); ++r)
      out << "  " << prefix << "y" << r << " = " << operand(results[r].first) << ";\n";
    out << "}";
    return out.str();
  }

  // Arguments for a call: the non-literal inputs as `a<k><suffix>` (scalars without suffix).
  std::vector<std::string> call_inputs(const std::string& suffix) const {
    std::vector<std::string> args;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      if (access[k] == InputAccess::kLiteral) continue;
      args.push_back(prefix + "a" + std::to_string(k) + (access[k] == InputAccess::kScalar ? "" : suffix));
    }
    return args;
  }

  // Loads of every non-literal input at the kStageVec elements from `base` (a multiple of kStageVec)
  // into `<prefix>a<k>_<lane>` (scalar inputs into `<prefix>a<k>`): inputs laid out like the domain as
  // one vec4 load, `vector` being its index in the vec4 view (`base` / 4), others lane by lane.
  std::string vector_loads(const std::string& base, const std::string& vector) const;

  // A chain's vector path over the kStageVec elements from `base`: vector_loads, then per lane `function`
  // (leading[lane] first where `leading` is given, then the lane's inputs, then `<result><k>_<lane>` for
  // each output k), then each output's lanes stored to vkf_out<k> through store_lanes.
  std::string vector_chain(const std::string& function, const std::vector<std::string>& leading,
                           const std::vector<KernelOutput>& outputs, const std::string& result, const std::string& base,
                           const std::string& vector) const;

  // Loads of every non-literal input at `linear` into `a<k>`.
  std::string scalar_loads(const std::string& linear) const {
    std::ostringstream out;
    for (std::size_t k = 0; k < inputs.size(); ++k)
      if (access[k] != InputAccess::kLiteral)
        out << "const " << glsl_register_type(inputs[k].dtype) << " " << prefix << "a" << k << " = "
            << load(k, linear) << ";\n";
    return out.str();
  }
};

// Stores kStageVec register lanes, elements `base` .. `base` + 3 of an output (`base` a multiple of 4), to
// `out` (its scalar view; `out`v its vec4 view) through `placement`: one vec4 store where the placement
// keeps whole vec4s (`vector`, the vec4 index of `base`, where it is the identity), else lane by lane.
std::string store_lanes(const std::string& out, DType dtype, const ElementPlacement& placement, const std::string& base,
                        const std::string& vector, const std::string (&lanes)[kStageVec]);

// "name(a, b);"
std::string join_call(const std::string& name, const std::vector<std::string>& args);

// A reduction's combine as a subgroup operation ("subgroupAdd", ...), and its identity as a GLSL float
// expression (the reduce root and the vector root fold with them).
const char* subgroup_combine_name(KernelCombine combine);
std::string combine_identity(KernelCombine combine);
// GLSL: `acc` folded with `v` by `combine` ("max(acc, v)", "acc + v", ...).
std::string combine_expression(KernelCombine combine, const std::string& acc, const std::string& v);

// Walks over a row (the reduce root's, a row chain's): the walk in which `operand`
// exists, given each op's walk (`op_walk`, of the ops before it): inputs in every walk, an op in the
// walk of its latest operand, reduction r's value in the walk after the one that folds it; a kReduced
// index past `reductions` is a value every walk holds (the row chain's product element).
int operand_walk(const std::vector<KernelReduction>& reductions, const std::vector<int>& op_walk,
                 const KernelOperand& operand);
// Each op's walk, in evaluation order.
std::vector<int> op_walks(const std::vector<KernelOp>& ops, const std::vector<KernelReduction>& reductions);

// A kernel root's pre-fused argument: its chain's stage and, where the chain starts from a producer's
// element (KernelLoad::element), the element's inputs (prefix "e"), which bind first.
struct LoadStages {
  std::optional<Stage> element;
  Stage chain;
};

// Assigns bindings in order of first use (from next_binding on); inputs naming the same buffer share
// one, through `shared` (buffer id -> binding), which spans every stage of a kernel.
Stage make_stage(const std::vector<KernelInput>& inputs, const std::vector<KernelOp>& ops, const Shape& shape,
                 std::string prefix, std::map<int, int>& shared, int& next_binding);
// The stages of `load`, an argument of shape `shape`, with bindings as make_stage assigns them.
LoadStages make_load_stages(const KernelLoad& load, const Shape& shape, std::map<int, int>& shared, int& next_binding);

}  // namespace vkfuse
