// The body a kernel root (an op's own template: MatMul, Conv, pooling, ...) is stitched into: the op's
// defines, the bindings of every stage, the VKF_IN<k> load macros and the VKF_OUT0 store macro.
// Internal to codegen/.
#pragma once

#include <string>
#include <vector>

#include <vkfuse/status.hpp>

#include "codegen/kernel_stage.h"

namespace vkfuse {

// Kernel roots: the op's template behind typed load/store macros, so one template serves every dtype.
// VKF_IN<k>(i) is a plain load, a chunk pick (a tensor larger than one binding), or a pre-fused chain
// evaluated at element i (`loads`, in argument order; a chain may start from a producer's element,
// the element template's vkf_element(i)). VKF_OUT0(i, v) is a plain store, or, with post-fusion, a call
// that runs the post stage on v (the anchor's value, `red0`) with the post inputs loaded at i and stores
// every output there. A row chain (`rows`, its stage; null without: the attention and element-rows roots)
// comes as row_chain_code writes it. Fails where an element template is missing.
Result<std::string> kernel_root_body(const KernelSpec& spec, const Stage& pre, const std::vector<LoadStages>& loads,
                                     const Stage* rows, const Stage& post, int first_output_binding);

}  // namespace vkfuse
