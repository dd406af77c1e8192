// The code a row chain (KernelSpec::row_chain) is stitched from, for the roots that hold rows in shared
// memory and walk them: roots/attention.glsl (rows of scores) and roots/element_rows.glsl (rows of an
// element computed there). Internal to codegen/.
#pragma once

#include <string>

#include "codegen/kernel_stage.h"

namespace vkfuse {

// `vkf_s` (VKF_BQ rows of VKF_ROW_N floats, VKF_ROW_PITCH apart), one lane function per walk over a row,
// and `void vkf_row_passes(uint row, uint r)`: one subgroup walks row `row` of the chain's domain, held
// in vkf_s row `r`, folding each walk's reductions with subgroup operations, and hands each element's
// value to vkf_row_value(r, n, v), which the root defines. `rows` binds spec.row_chain's inputs.
std::string row_chain_code(const KernelSpec& spec, const Stage& rows);

}  // namespace vkfuse
