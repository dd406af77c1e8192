// The code a vector root (KernelSpec::vector_stages, roots/vector_chain.glsl) is stitched from: the
// stages' vectors in shared memory, their chain functions, and each stage's fold inside the image loop.
// Internal to codegen/.
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel_stage.h"

namespace vkfuse {

// Shared vectors (every stage but the last) and one chain function per stage (vkf_stage<j>).
std::string vector_declarations(const KernelSpec& spec, const std::vector<Stage>& stages);

// The body of the image loop: each stage's fold, chain and store, a barrier after each. `pre` binds
// spec.inputs.
std::string vector_stages_body(const KernelSpec& spec, const Stage& pre, const std::vector<Stage>& stages);

}  // namespace vkfuse
