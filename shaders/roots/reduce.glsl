// Reduce root. One workgroup folds one row (the trailing axes of the domain) at a time: each
// invocation folds a strided slice of the row through the pre-stage chain into registers, the
// workgroup combines the partial results in shared memory, and invocation 0 runs the post-stage chain
// on the reduced values and stores them. Accumulation is in fp32.
//
// Hooks filled by the code generator:
//   vkf_lane(...)  the pre-stage chain for one element; vkf_post(...) the post-stage chain
//   @vkf_acc_init, @vkf_acc_body, @vkf_acc_share, @vkf_tree_step, @vkf_finish

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

shared float vkf_partial[VKF_NUM_REDUCTIONS][VKF_WORKGROUP_SIZE];

float vkf_combine_sum(float a, float b) { return a + b; }
float vkf_combine_max(float a, float b) { return max(a, b); }
float vkf_combine_min(float a, float b) { return min(a, b); }
float vkf_combine_prod(float a, float b) { return a * b; }

//@vkf_lane_function

//@vkf_post_function

void main() {
  const uint tid = gl_LocalInvocationID.x;
  for (uint row = gl_WorkGroupID.x; row < VKF_OUTER; row += gl_NumWorkGroups.x) {
    //@vkf_acc_init
    for (uint k = tid; k < VKF_INNER; k += uint(VKF_WORKGROUP_SIZE)) {
      const uint i = row * VKF_INNER + k;
      //@vkf_acc_body
    }
    //@vkf_acc_share
    barrier();
    for (uint s = uint(VKF_WORKGROUP_SIZE) / 2u; s > 0u; s >>= 1u) {
      if (tid < s) {
        //@vkf_tree_step
      }
      barrier();
    }
    if (tid == 0u) {
      //@vkf_finish
    }
    barrier();  // vkf_partial is reused by the next row
  }
}
