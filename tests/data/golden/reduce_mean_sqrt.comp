#version 450
// vkfuse group: Mul -> ReduceMean -> Sqrt
// domain [4,16] reduced to [4], 3 ops, 2 bindings
#define VKF_WORKGROUP_SIZE 256
#define VKF_OUTER 4u
#define VKF_INNER 16u
#define VKF_NUM_REDUCTIONS 1
// Prelude: shared by every generated kernel. The code generator emits #version, extensions and the
// VKF_* constants before this file.

// Exact float literal from its IEEE-754 bits (covers inf and NaN, which GLSL cannot spell).
#define VKF_F32(bits) uintBitsToFloat(bits)

// ---- ops/mul.glsl
// Mul: y = a * b
float op_mul(float a, float b) { return a * b; }

// ---- ops/sqrt.glsl
// Sqrt: y = sqrt(x)
float op_sqrt(float x) { return sqrt(x); }

// ---- bindings
layout(std430, set = 0, binding = 0) restrict readonly buffer VkfBuf0 { float d[]; } vkf_b0;
layout(std430, set = 0, binding = 0) restrict readonly buffer VkfBuf0V { vec4 d[]; } vkf_b0v;
layout(std430, set = 0, binding = 1) writeonly buffer VkfBuf1 { float d[]; } vkf_out0;

// ---- roots/reduce.glsl
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

void vkf_lane0(in float red0, in float x0, out float y0) {
  const float v0 = op_mul(x0, x0);  // Mul
  y0 = v0;
}

void vkf_post(in float red0, out float py0) {
  const float pv0 = op_sqrt(red0);  // Sqrt
  py0 = pv0;
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
  for (uint row = gl_WorkGroupID.x; row < VKF_OUTER; row += gl_NumWorkGroups.x) {
    // Each walk writes vkf_partial rows of its own reductions only, so a walk's stores never meet the
    // previous walk's read-back of its results.
    float red0 = 0.0;
    // walk 0: folds 1 reduction(s), stores 0 output(s)
    float acc0 = 0.0;
    for (uint k = tid; k < VKF_INNER; k += uint(VKF_WORKGROUP_SIZE)) {
      const uint i = row * VKF_INNER + k;
      const float a0 = vkf_b0.d[i];
      float r0;
      vkf_lane0(red0, a0, r0);
      acc0 = vkf_combine_sum(acc0, r0);
    }
    vkf_partial[0][tid] = acc0;
    barrier();
    for (uint s = uint(VKF_WORKGROUP_SIZE) / 2u; s > 0u; s >>= 1u) {
      if (tid < s) {
        vkf_partial[0][tid] = vkf_combine_sum(vkf_partial[0][tid], vkf_partial[0][tid + s]);
      }
      barrier();
    }
    red0 = vkf_partial[0][0];
    red0 *= VKF_F32(0x3d800000u) /*0.0625*/;
    if (tid == 0u) {
      float o0;
      vkf_post(red0, o0);
      vkf_out0.d[row] = o0;
    }
    barrier();  // vkf_partial is reused by the next row
  }
}
