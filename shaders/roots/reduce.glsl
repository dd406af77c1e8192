// Reduce root. One workgroup folds one row (the trailing axes of the domain) at a time: each
// invocation folds a strided slice of the row through the pre-stage chain into registers, the
// workgroup combines the partial results in shared memory, and invocation 0 runs the post-stage chain
// on the reduced values and stores them. Accumulation is in fp32.
// Where pre-stage ops read reduced values (LayerNormalization's x - mean, Softmax's exp(x - max) / sum),
// the workgroup walks the row again once those exist: walk w folds the reductions and stores the
// outputs that need the results of w earlier walks, which every invocation holds in registers. The row
// is read from memory once per walk; short rows (the planner's row passes) stay in the caches.
//
// Combining: where the device has subgroup arithmetic (DevicePlan::subgroup_arithmetic) each subgroup
// combines its invocations' partials in one operation and every invocation folds the subgroups' results
// from vkf_partial after one barrier; elsewhere a shared-memory tree halves the active invocations each
// step (log2(VKF_WORKGROUP_SIZE) barriers).
//
// Hooks filled by the code generator:
//   vkf_lane<w>(...)  the pre-stage chain of walk w for one element; vkf_post(...) the post-stage chain
//   @vkf_row_walks (every walk: fold, combine through vkf_partial, read back), @vkf_finish

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

shared float vkf_partial[VKF_NUM_REDUCTIONS][VKF_WORKGROUP_SIZE];

float vkf_combine_sum(float a, float b) { return a + b; }
float vkf_combine_max(float a, float b) { return max(a, b); }
float vkf_combine_min(float a, float b) { return min(a, b); }
float vkf_combine_prod(float a, float b) { return a * b; }

//@vkf_lane_functions

//@vkf_post_function

void main() {
  const uint tid = gl_LocalInvocationID.x;
  for (uint row = gl_WorkGroupID.x; row < VKF_OUTER; row += gl_NumWorkGroups.x) {
    // Each walk writes vkf_partial rows of its own reductions only, so a walk's stores never meet the
    // previous walk's read-back of its results.
    //@vkf_row_walks
    if (tid == 0u) {
      //@vkf_finish
    }
    barrier();  // vkf_partial is reused by the next row
  }
}
