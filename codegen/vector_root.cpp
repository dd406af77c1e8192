#include "codegen/vector_root.h"

#include <sstream>

namespace vkfuse {
namespace {

std::string uint_literal(std::int64_t v) { return std::to_string(v) + "u"; }

// The statement that folds element e of row r of stage j into acc.
std::string fold_element(const KernelSpec& spec, const Stage& pre, std::size_t j) {
  const VectorStage& s = spec.vector_stages[j];
  if (s.kind == VectorStage::Kind::kReduce)
    return "acc = " +
           combine_expression(s.combine, "acc", glsl_load(spec.inputs[0].dtype,
                             pre.buffer(0) + ".d[(n * " + uint_literal(s.rows) + " + r) * " + uint_literal(s.length) + " + e]")) +
           ";";
  const std::string previous =
      j == 0 ? glsl_load(spec.inputs[0].dtype, pre.buffer(0) + ".d[n * " + uint_literal(s.length) + " + e]")
             : "vkf_vec" + std::to_string(j - 1) + "[e]";
  const std::size_t w = static_cast<std::size_t>(s.weight);
  return "acc = fma(" +
         glsl_load(spec.inputs[w].dtype,
                   pre.buffer(w) + ".d[r * " + uint_literal(s.row_stride) + " + e * " + uint_literal(s.k_stride) + "]") +
         ", " + previous + ", acc);";
}

}  // namespace

std::string vector_declarations(const KernelSpec& spec, const std::vector<Stage>& stages) {
  std::ostringstream out;
  for (std::size_t j = 0; j + 1 < spec.vector_stages.size(); ++j)
    out << "shared float vkf_vec" << j << "[" << spec.vector_stages[j].rows << "];\n";
  for (std::size_t j = 0; j < spec.vector_stages.size(); ++j) {
    const bool last = j + 1 == spec.vector_stages.size();
    const DType dtype = last ? spec.outputs[0].dtype : DType::kF32;
    out << stages[j].function("vkf_stage" + std::to_string(j), {"in float red0"}, {{spec.vector_stages[j].value, dtype}})
        << "\n";
  }
  return out.str();
}

std::string vector_stages_body(const KernelSpec& spec, const Stage& pre, const std::vector<Stage>& stages) {
  std::ostringstream out;
  for (std::size_t j = 0; j < spec.vector_stages.size(); ++j) {
    const VectorStage& s = spec.vector_stages[j];
    const bool last = j + 1 == spec.vector_stages.size();
    out << "// stage " << j << ": " << s.rows << " rows of " << s.length << " ("
        << (s.kind == VectorStage::Kind::kReduce ? "a reduction" : "a product") << ")\n";
    if (s.subgroup_rows)
      out << "for (uint r = gl_SubgroupID; r < " << uint_literal(s.rows) << "; r += gl_NumSubgroups) {\n"
          << "  float acc = " << combine_identity(s.combine) << ";\n"
          << "  for (uint e = gl_SubgroupInvocationID; e < " << uint_literal(s.length) << "; e += gl_SubgroupSize)\n";
    else
      out << "for (uint r = tid; r < " << uint_literal(s.rows) << "; r += uint(VKF_WORKGROUP_SIZE)) {\n"
          << "  float acc = " << combine_identity(s.combine) << ";\n"
          << "  " << (s.length <= 256 ? "[[unroll]] " : "") << "for (uint e = 0u; e < " << uint_literal(s.length) << "; ++e)\n";
    out << "    " << fold_element(spec, pre, j) << "\n";
    if (s.subgroup_rows) out << "  acc = " << subgroup_combine_name(s.combine) << "(acc);\n  if (subgroupElect()) {\n";
    else out << "  {\n";
    if (s.mean) out << "    acc *= " << glsl_float_literal(1.0 / static_cast<double>(s.length)) << ";\n";
    if (s.bias >= 0) {
      const std::size_t b = static_cast<std::size_t>(s.bias);
      out << "    acc += " << glsl_load(spec.inputs[b].dtype, pre.buffer(b) + ".d[r]") << ";\n";
    }
    const std::string at = "(n * " + uint_literal(s.rows) + " + r)";  // parenthesized: the loads index it
    std::istringstream loads(stages[j].scalar_loads(at));
    for (std::string line; std::getline(loads, line);) out << "    " << line << "\n";
    std::vector<std::string> args{"acc"};
    for (const std::string& a : stages[j].call_inputs("")) args.push_back(a);
    args.push_back("value");
    out << "    " << glsl_register_type(last ? spec.outputs[0].dtype : DType::kF32) << " value;\n"
        << "    " << join_call("vkf_stage" + std::to_string(j), args) << "\n";
    if (last)
      out << "    vkf_out0.d[" << at << "] = " << glsl_store(spec.outputs[0].dtype, "value") << ";\n";
    else
      out << "    vkf_vec" << j << "[r] = value;\n";
    out << "  }\n}\nbarrier();\n";
  }
  return out.str();
}

}  // namespace vkfuse
