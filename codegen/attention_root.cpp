#include "codegen/attention_root.h"

#include <algorithm>
#include <sstream>
#include <vector>

namespace vkfuse {
namespace {

// The walk over the row in which `operand` exists: inputs and S's element in every walk, an op in the
// walk of its latest operand, a reduction's value in the walk after the one that folds it.
int walk_of(const RowChain& chain, const std::vector<int>& op_walk, const KernelOperand& operand) {
  switch (operand.source) {
    case KernelOperand::Source::kOp: return op_walk[static_cast<std::size_t>(operand.index)];
    case KernelOperand::Source::kReduced:
      if (static_cast<std::size_t>(operand.index) == chain.reductions.size()) return 0;  // S's element
      return walk_of(chain, op_walk, chain.reductions[static_cast<std::size_t>(operand.index)].operand) + 1;
    case KernelOperand::Source::kInput: break;
  }
  return 0;
}

const char* combine_function(KernelCombine combine) {
  switch (combine) {
    case KernelCombine::kMax: return "max";
    case KernelCombine::kMin: return "min";
    default: return "";
  }
}

// acc folded with v.
std::string fold(KernelCombine combine, const std::string& acc, const std::string& v) {
  if (combine == KernelCombine::kSum) return acc + " + " + v;
  if (combine == KernelCombine::kProd) return acc + " * " + v;
  return std::string(combine_function(combine)) + "(" + acc + ", " + v + ")";
}

}  // namespace

std::string attention_row_code(const KernelSpec& spec, const Stage& rows) {
  const RowChain& chain = *spec.row_chain;
  const std::size_t reductions = chain.reductions.size();
  std::vector<int> op_walk(chain.ops.size(), 0);
  for (std::size_t j = 0; j < chain.ops.size(); ++j)
    for (const KernelOperand& arg : chain.ops[j].args) op_walk[j] = std::max(op_walk[j], walk_of(chain, op_walk, arg));
  std::vector<int> reduction_walk;
  int walks = walk_of(chain, op_walk, chain.value) + 1;
  for (const KernelReduction& r : chain.reductions) {
    reduction_walk.push_back(walk_of(chain, op_walk, r.operand));
    walks = std::max(walks, reduction_walk.back() + 1);
  }
  const int value_walk = walks - 1;  // the value is stored by the last walk (it reads what the others fold)
  std::vector<std::string> params, args;
  for (std::size_t r = 0; r <= reductions; ++r) {
    params.push_back("in float red" + std::to_string(r));
    args.push_back("red" + std::to_string(r));
  }
  const double inverse_length = 1.0 / static_cast<double>(chain.domain.back());

  std::ostringstream out;
  out << "shared float vkf_s[VKF_BQ * VKF_ROW_N];  // a query block's scores\n"
      << "void vkf_row_value(uint r, uint n, float v);  // the root keeps the chain's value of row r, key n\n";
  std::ostringstream passes;
  passes << "void vkf_row_passes(uint row, uint r) {\n";
  for (std::size_t r = 0; r < reductions; ++r) passes << "  float red" << r << " = 0.0;\n";
  for (int w = 0; w < walks; ++w) {
    std::vector<std::size_t> folded;
    for (std::size_t r = 0; r < reductions; ++r)
      if (reduction_walk[r] == w) folded.push_back(r);
    std::vector<std::pair<KernelOperand, DType>> results;
    for (std::size_t r : folded) results.push_back({chain.reductions[r].operand, DType::kF32});
    if (w == value_walk) results.push_back({chain.value, DType::kF32});
    const std::string lane = "vkf_row_lane" + std::to_string(w);
    out << rows.function(lane, params, results) << "\n";
    passes << "  // walk " << w << ": folds " << folded.size() << " reduction(s)"
           << (w == value_walk ? ", hands on the chain's value" : "") << "\n";
    for (std::size_t r : folded) passes << "  float acc" << r << " = " << combine_identity(chain.reductions[r].combine) << ";\n";
    passes << "  for (uint j = gl_SubgroupInvocationID; j < VKF_ROW_N; j += gl_SubgroupSize) {\n"
           << "    const uint i = row * VKF_ROW_N + j;\n"
           << "    const float red" << reductions << " = vkf_s[r * VKF_ROW_N + j];\n";
    std::istringstream loads(rows.scalar_loads("i"));
    for (std::string line; std::getline(loads, line);) passes << "    " << line << "\n";
    std::vector<std::string> call = args;
    for (const std::string& a : rows.call_inputs("")) call.push_back(a);
    for (std::size_t j = 0; j < results.size(); ++j) {
      passes << "    float y" << j << ";\n";
      call.push_back("y" + std::to_string(j));
    }
    passes << "    " << join_call(lane, call) << "\n";
    for (std::size_t j = 0; j < folded.size(); ++j)
      passes << "    acc" << folded[j] << " = " << fold(chain.reductions[folded[j]].combine, "acc" + std::to_string(folded[j]), "y" + std::to_string(j)) << ";\n";
    if (w == value_walk) passes << "    vkf_row_value(r, j, y" << folded.size() << ");\n";
    passes << "  }\n";
    for (std::size_t r : folded) {
      passes << "  red" << r << " = " << subgroup_combine_name(chain.reductions[r].combine) << "(acc" << r << ")";
      if (chain.reductions[r].mean) passes << " * " << glsl_float_literal(inverse_length);
      passes << ";\n";
    }
  }
  passes << "}\n";
  out << passes.str();
  return out.str();
}

}  // namespace vkfuse
