// Vector root: a chain of small stages over one image's vectors, run by one workgroup per image (the
// squeeze-and-excitation tail: pool the image's channels, two products with their activations). Stage
// j folds `rows` rows of `length` elements each: a reduction of the image's rows of the source
// tensor, or row o of a matrix times the previous stage's vector (plus a bias); the stage's chain
// (post-fusion ops) then runs on each folded value, which lands in shared memory (vkf_vec<j>) for the
// next stage, or, from the last, in the output. A barrier separates the stages. Each invocation folds
// rows of its own, or (long rows) each subgroup folds one row at a time, its invocations striding
// along the row and adding up with one subgroup operation. fp32 accumulation.
// The code generator declares the vectors and the stages' chain functions, and fills the hook with
// the stages' code (codegen/vector_root.cpp). Defines: VKF_IMAGES u.

#extension GL_EXT_control_flow_attributes : enable

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

void main() {
  const uint tid = gl_LocalInvocationID.x;
  for (uint n = gl_WorkGroupID.x; n < VKF_IMAGES; n += gl_NumWorkGroups.x) {
    //@vkf_vector_stages
  }
}
