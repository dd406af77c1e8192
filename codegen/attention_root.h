// The code an attention root (KernelSpec::row_chain, roots/attention.glsl) is stitched from: the shared
// rows of scores and vkf_row_passes, which runs the row chain over one row. Internal to codegen/.
#pragma once

#include <string>

#include "codegen/kernel_stage.h"

namespace vkfuse {

// `vkf_s` (VKF_BQ rows of VKF_ROW_N floats: a query block's scores), one lane function per walk over a
// row, and `void vkf_row_passes(uint row, uint r)`: one subgroup walks row `row` of the chain's domain,
// held in vkf_s row `r`, folding each walk's reductions with subgroup operations, and hands each
// element's value to vkf_row_value(r, n, v), which the root defines. `rows` binds spec.row_chain's
// inputs.
std::string attention_row_code(const KernelSpec& spec, const Stage& rows);

}  // namespace vkfuse
