#include "codegen/kernel_stage.h"

#include <algorithm>
#include <sstream>

namespace vkfuse {
namespace {

bool is_contiguous(const KernelInput& input) {
  if (input.strides.empty()) return true;
  std::int64_t expected = 1;
  for (std::size_t d = input.shape.size(); d-- > 0;) {
    if (input.shape[d] != 1 && input.strides[d] != expected) return false;
    expected *= input.shape[d];
  }
  return true;
}

std::string float_literal(float v) {
  std::ostringstream out;
  out.precision(9);
  out << std::showpoint << v;
  return out.str();
}

}  // namespace

std::string image_declaration(int binding, const KernelInput& input) {
  const KernelImage& m = *input.image;
  const std::string b = std::to_string(binding);
  const std::string w = std::to_string(m.width) + "u", h = std::to_string(m.height) + "u",
                    c = std::to_string(m.channels) + "u";
  std::ostringstream out;
  out << "layout(set = 0, binding = " << b << ") uniform sampler2D vkf_img" << b << ";\n"
      << "// Element i of the input sampled from its image: pixel, channel, normalization.\n"
      << glsl_register_type(input.dtype) << " vkf_img" << b << "_at(uint i) {\n";
  if (m.nhwc)
    out << "  const uint c = i % " << c << ", x = (i / " << c << ") % " << w << ", y = (i / (" << c << " * " << w
        << ")) % " << h << ";\n";
  else
    out << "  const uint x = i % " << w << ", y = (i / " << w << ") % " << h << ", c = (i / (" << w << " * " << h
        << ")) % " << c << ";\n";
  out << "  const vec2 uv = (vec2(float(x), float(y)) + 0.5) * vec2(" << float_literal(m.uv_scale[0]) << ", "
      << float_literal(m.uv_scale[1]) << ") + vec2(" << float_literal(m.uv_offset[0]) << ", "
      << float_literal(m.uv_offset[1]) << ");\n"
      << "  float v = " << float_literal(m.pad) << ";\n"
      << "  if (all(greaterThanEqual(uv, vec2(0.0))) && all(lessThanEqual(uv, vec2(1.0)))) {\n"
      << "    const vec4 t = textureLod(vkf_img" << b << ", uv, 0.0);\n"
      << "    const vec4 mul = vec4(" << float_literal(m.mul[0]) << ", " << float_literal(m.mul[1]) << ", "
      << float_literal(m.mul[2]) << ", " << float_literal(m.mul[3]) << ");\n"
      << "    const vec4 add = vec4(" << float_literal(m.add[0]) << ", " << float_literal(m.add[1]) << ", "
      << float_literal(m.add[2]) << ", " << float_literal(m.add[3]) << ");\n"
      << "    const uvec4 component = uvec4(" << m.component[0] << "u, " << m.component[1] << "u, " << m.component[2]
      << "u, " << m.component[3] << "u);\n"
      << "    v = t[component[c]] * mul[c] + add[c];\n  }\n"
      << "  return " << glsl_register_type(input.dtype) << "(v);\n}\n";
  return out.str();
}

InputAccess classify(const KernelInput& input, std::int64_t domain_numel) {
  if (input.is_literal) return InputAccess::kLiteral;
  const std::int64_t numel = shape_numel(input.shape);
  if (numel == 1) return InputAccess::kScalar;
  // Vector loads need the domain's own layout, starting at the binding.
  if (numel == domain_numel && is_contiguous(input) && input.offset == 0)
    return InputAccess::kFull;
  return InputAccess::kBroadcast;
}

bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  const std::size_t lead = to.size() - from.size();
  for (std::size_t d = 0; d < from.size(); ++d)
    if (from[d] != 1 && from[d] != to[d + lead]) return false;
  return true;
}

LaneAccess Stage::lane_access(std::size_t k) const {
  if (inputs[k].image) return access[k] == InputAccess::kScalar ? LaneAccess::kShared : LaneAccess::kEach;
  switch (access[k]) {
    case InputAccess::kLiteral: return LaneAccess::kNone;
    case InputAccess::kScalar: return LaneAccess::kShared;
    case InputAccess::kFull: return LaneAccess::kVector;
    case InputAccess::kBroadcast: break;
  }
  const KernelInput& input = inputs[k];
  // An input of higher rank than the stage's domain is not broadcast over it (a root's operand read
  // through its own indexing, such as a Gemm's flattened A): element by element.
  if (input.shape.size() > shape.size()) return LaneAccess::kEach;
  const std::vector<BroadcastDim> map = broadcast_map(shape, input.shape, input.strides);
  if (map.empty() || map[0].extent % kStageVec != 0) return LaneAccess::kEach;
  if (map[0].stride == 0) return LaneAccess::kShared;
  // A run the input steps through with the domain: the lanes' first element is then a multiple of
  // kStageVec (as the offset and the outer strides are), so they are one vec4 of the vec4 view.
  const bool aligned = input.offset % kStageVec == 0 && std::all_of(map.begin() + 1, map.end(), [](const BroadcastDim& d) {
    return d.stride >= 0 && d.stride % kStageVec == 0;
  });
  return map[0].stride == 1 && aligned ? LaneAccess::kVector : LaneAccess::kEach;
}

std::string Stage::vector_index(std::size_t k, const std::string& base, const std::string& vector) const {
  if (access[k] == InputAccess::kFull) return vector;
  const std::string first = broadcast_index_glsl(broadcast_map(shape, inputs[k].shape, inputs[k].strides), base, inputs[k].offset);
  return "(" + first + ") / " + std::to_string(kStageVec) + "u";
}

std::string Stage::vector_loads(const std::string& base, const std::string& vector) const {
  static const char* kLanes[] = {"x", "y", "z", "w"};
  std::ostringstream out;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const DType dtype = inputs[k].dtype;
    const char* type = glsl_register_type(dtype);
    const std::string name = prefix + "a" + std::to_string(k);
    const std::string packed = prefix + "p" + std::to_string(k);
    switch (lane_access(k)) {
      case LaneAccess::kNone: break;
      case LaneAccess::kShared:
        if (access[k] == InputAccess::kScalar) {
          out << "const " << type << " " << name << " = " << load(k, "0u") << ";\n";
          break;
        }
        // One element for every lane (a per-channel operand over whole planes).
        out << "const " << type << " " << packed << " = " << load(k, base) << ";\n";
        for (std::uint32_t l = 0; l < kStageVec; ++l)
          out << "const " << type << " " << name << "_" << l << " = " << packed << ";\n";
        break;
      case LaneAccess::kVector:
        out << "const " << glsl_wide_vec4(dtype) << " " << packed << " = " << glsl_wide_vec4(dtype) << "(" << buffer(k)
            << "v.d[" << vector_index(k, base, vector) << "]);\n";
        for (std::uint32_t l = 0; l < kStageVec; ++l)
          out << "const " << type << " " << name << "_" << l << " = "
              << glsl_wide_lane(dtype, packed + "." + kLanes[l]) << ";\n";
        break;
      case LaneAccess::kEach:
        for (std::uint32_t l = 0; l < kStageVec; ++l)
          out << "const " << type << " " << name << "_" << l << " = "
              << load(k, "(" + base + " + " + std::to_string(l) + "u)") << ";\n";
        break;
    }
  }
  return out.str();
}

std::string Stage::vector_chain(const std::string& function, const std::vector<std::string>& leading,
                                const std::vector<KernelOutput>& outputs, const std::string& result,
                                const std::string& base, const std::string& vector) const {
  std::ostringstream out;
  out << vector_loads(base, vector);
  auto name = [&](std::size_t k, std::uint32_t l) { return result + std::to_string(k) + "_" + std::to_string(l); };
  for (std::size_t k = 0; k < outputs.size(); ++k)
    for (std::uint32_t l = 0; l < kStageVec; ++l) out << glsl_register_type(outputs[k].dtype) << " " << name(k, l) << ";\n";
  for (std::uint32_t l = 0; l < kStageVec; ++l) {
    std::vector<std::string> args;
    if (!leading.empty()) args.push_back(leading[l]);
    for (const std::string& a : call_inputs("_" + std::to_string(l))) args.push_back(a);
    for (std::size_t k = 0; k < outputs.size(); ++k) args.push_back(name(k, l));
    out << join_call(function, args) << "\n";
  }
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    std::string lanes[kStageVec];
    for (std::uint32_t l = 0; l < kStageVec; ++l) lanes[l] = name(k, l);
    out << store_lanes("vkf_out" + std::to_string(k), outputs[k].dtype, outputs[k].placement, base, vector, lanes);
  }
  return out.str();
}

std::string store_lanes(const std::string& out, DType dtype, const ElementPlacement& placement, const std::string& base,
                        const std::string& vector, const std::string (&lanes)[kStageVec]) {
  if (placement.whole_vec4s()) {
    const std::string at = placement.identity() ? vector : placement.index(base) + " / 4u";
    return out + "v.d[" + at + "] = " + glsl_store_vec4(dtype, lanes) + ";\n";
  }
  std::string stores;  // a slice whose vec4s straddle its runs
  for (std::uint32_t l = 0; l < kStageVec; ++l)
    stores += out + ".d[" + placement.index("(" + base + " + " + std::to_string(l) + "u)") + "] = " +
              glsl_store(dtype, lanes[l]) + ";\n";
  return stores;
}

const char* subgroup_combine_name(KernelCombine combine) {
  switch (combine) {
    case KernelCombine::kSum: return "subgroupAdd";
    case KernelCombine::kMax: return "subgroupMax";
    case KernelCombine::kMin: return "subgroupMin";
    case KernelCombine::kProd: return "subgroupMul";
  }
  return "subgroupAdd";
}

std::string combine_identity(KernelCombine combine) {
  switch (combine) {
    case KernelCombine::kSum: return "0.0";
    case KernelCombine::kMax: return "VKF_F32(0xff800000u)";  // -inf
    case KernelCombine::kMin: return "VKF_F32(0x7f800000u)";  // +inf
    case KernelCombine::kProd: return "1.0";
  }
  return "0.0";
}

std::string combine_expression(KernelCombine combine, const std::string& acc, const std::string& v) {
  switch (combine) {
    case KernelCombine::kMax: return "max(" + acc + ", " + v + ")";
    case KernelCombine::kMin: return "min(" + acc + ", " + v + ")";
    case KernelCombine::kProd: return acc + " * " + v;
    case KernelCombine::kSum: break;
  }
  return acc + " + " + v;
}

int operand_walk(const std::vector<KernelReduction>& reductions, const std::vector<int>& op_walk,
                 const KernelOperand& operand) {
  const auto index = static_cast<std::size_t>(operand.index);
  switch (operand.source) {
    case KernelOperand::Source::kOp: return op_walk[index];
    case KernelOperand::Source::kReduced:
      return index < reductions.size() ? operand_walk(reductions, op_walk, reductions[index].operand) + 1 : 0;
    case KernelOperand::Source::kInput: break;
  }
  return 0;
}

std::vector<int> op_walks(const std::vector<KernelOp>& ops, const std::vector<KernelReduction>& reductions) {
  std::vector<int> op_walk(ops.size(), 0);
  for (std::size_t j = 0; j < ops.size(); ++j)
    for (const KernelOperand& arg : ops[j].args) op_walk[j] = std::max(op_walk[j], operand_walk(reductions, op_walk, arg));
  return op_walk;
}

std::string join_call(const std::string& name, const std::vector<std::string>& args) {
  std::string call = name + "(";
  for (std::size_t i = 0; i < args.size(); ++i) call += (i ? ", " : "") + args[i];
  return call + ");";
}

Stage make_stage(const std::vector<KernelInput>& inputs, const std::vector<KernelOp>& ops, const Shape& shape,
                 std::string prefix, std::map<int, int>& shared, int& next_binding) {
  Stage stage{inputs, ops, shape, std::move(prefix), {}, {}};
  for (const KernelInput& input : inputs) {
    stage.access.push_back(classify(input, shape_numel(shape)));
    int b = -1;
    if (input.bindings() > 0) {
      auto it = input.buffer < 0 ? shared.end() : shared.find(input.buffer);
      if (it != shared.end()) {
        b = it->second;
      } else {
        b = next_binding;
        next_binding += static_cast<int>(input.bindings());
        if (input.buffer >= 0) shared[input.buffer] = b;
      }
    }
    stage.binding.push_back(b);
  }
  return stage;
}

LoadStages make_load_stages(const KernelLoad& load, const Shape& shape, std::map<int, int>& shared, int& next_binding) {
  static const std::vector<KernelOp> kNoOps;
  std::optional<Stage> element;
  if (load.element) element.emplace(make_stage(load.element->inputs, kNoOps, shape, "e", shared, next_binding));
  return {std::move(element), make_stage(load.inputs, load.ops, shape, "l", shared, next_binding)};
}

}  // namespace vkfuse
