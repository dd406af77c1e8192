#include "codegen/row_chain.h"

#include <algorithm>
#include <sstream>
#include <vector>

namespace vkfuse {

std::string row_chain_code(const KernelSpec& spec, const Stage& rows) {
  const RowChain& chain = *spec.row_chain;
  const std::size_t reductions = chain.reductions.size();
  // kReduced `reductions` (the product's element) is held in every walk (operand_walk).
  const std::vector<int> op_walk = op_walks(chain.ops, chain.reductions);
  std::vector<int> reduction_walk;
  int walks = operand_walk(chain.reductions, op_walk, chain.value) + 1;
  for (const KernelReduction& r : chain.reductions) {
    reduction_walk.push_back(operand_walk(chain.reductions, op_walk, r.operand));
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
  out << "shared float vkf_s[VKF_BQ * VKF_ROW_PITCH];  // the block's rows\n"
      << "void vkf_row_value(uint r, uint n, float v);  // the root keeps the chain's value of row r, element n\n";
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
           << "    const float red" << reductions << " = vkf_s[r * VKF_ROW_PITCH + j];\n";
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
      passes << "    acc" << folded[j] << " = "
             << combine_expression(chain.reductions[folded[j]].combine, "acc" + std::to_string(folded[j]), "y" + std::to_string(j))
             << ";\n";
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
