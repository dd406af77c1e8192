#version 450
// vkfuse group: ReduceMean -> Sub -> Mul -> ReduceMean -> Add -> Sqrt -> Div -> Mul
// domain [5,13] reduced to [5,1], 10 ops, 3 bindings
#define VKF_WORKGROUP_SIZE 256
#define VKF_OUTER 5u
#define VKF_INNER 13u
#define VKF_NUM_REDUCTIONS 2
// Prelude: shared by every generated kernel. The code generator emits #version, extensions and the
// VKF_* constants before this file.

// Exact float literal from its IEEE-754 bits (covers inf and NaN, which GLSL cannot spell).
#define VKF_F32(bits) uintBitsToFloat(bits)

// ---- ops/sub.glsl
// Sub: y = a - b
float op_sub(float a, float b) { return a - b; }

// ---- ops/mul.glsl
// Mul: y = a * b
float op_mul(float a, float b) { return a * b; }

// ---- ops/add.glsl
// Add: y = a + b
float op_add(float a, float b) { return a + b; }

// ---- ops/sqrt.glsl
// Sqrt: y = sqrt(x)
float op_sqrt(float x) { return sqrt(x); }

// ---- ops/div.glsl
// Div: y = a / b
float op_div(float a, float b) { return a / b; }

// ---- bindings
layout(std430, set = 0, binding = 0) restrict readonly buffer VkfBuf0 { float d[]; } vkf_b0;
layout(std430, set = 0, binding = 0) restrict readonly buffer VkfBuf0V { vec4 d[]; } vkf_b0v;
layout(std430, set = 0, binding = 1) restrict readonly buffer VkfBuf1 { float d[]; } vkf_b1;
layout(std430, set = 0, binding = 2) writeonly buffer VkfBuf2 { float d[]; } vkf_out0;

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

void vkf_lane0(in float red0, in float red1, in float x0, in float x2, out float y0) {
  const float x1 = VKF_F32(0x3727c5acu) /*1e-05*/;
  const float v0 = op_sub(x0, red0);  // Sub
  const float v1 = op_mul(v0, v0);  // Mul
  const float v2 = op_add(red1, x1);  // Add
  const float v3 = op_sqrt(v2);  // Sqrt
  const float v4 = op_div(v0, v3);  // Div
  const float v5 = op_mul(v4, x2);  // Mul
  y0 = x0;
}
void vkf_lane1(in float red0, in float red1, in float x0, in float x2, out float y0) {
  const float x1 = VKF_F32(0x3727c5acu) /*1e-05*/;
  const float v0 = op_sub(x0, red0);  // Sub
  const float v1 = op_mul(v0, v0);  // Mul
  const float v2 = op_add(red1, x1);  // Add
  const float v3 = op_sqrt(v2);  // Sqrt
  const float v4 = op_div(v0, v3);  // Div
  const float v5 = op_mul(v4, x2);  // Mul
  y0 = v1;
}
void vkf_lane2(in float red0, in float red1, in float x0, in float x2, out float y0) {
  const float x1 = VKF_F32(0x3727c5acu) /*1e-05*/;
  const float v0 = op_sub(x0, red0);  // Sub
  const float v1 = op_mul(v0, v0);  // Mul
  const float v2 = op_add(red1, x1);  // Add
  const float v3 = op_sqrt(v2);  // Sqrt
  const float v4 = op_div(v0, v3);  // Div
  const float v5 = op_mul(v4, x2);  // Mul
  y0 = v5;
}

void vkf_post(in float red0, in float red1) {
  const float px0 = VKF_F32(0x3727c5acu) /*1e-05*/;
  const float pv0 = op_add(red1, px0);  // Add
  const float pv1 = op_sqrt(pv0);  // Sqrt
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
  for (uint row = gl_WorkGroupID.x; row < VKF_OUTER; row += gl_NumWorkGroups.x) {
    // Each walk writes vkf_partial rows of its own reductions only, so a walk's stores never meet the
    // previous walk's read-back of its results.
    float red0 = 0.0;
    float red1 = 0.0;
    // walk 0: folds 1 reduction(s), stores 0 output(s)
    float acc0 = 0.0;
    for (uint k = tid; k < VKF_INNER; k += uint(VKF_WORKGROUP_SIZE)) {
      const uint i = row * VKF_INNER + k;
      const float a0 = vkf_b0.d[i];
      const float a2 = vkf_b1.d[(i % 13u)];
      float r0;
      vkf_lane0(red0, red1, a0, a2, r0);
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
    red0 *= VKF_F32(0x3d9d89d9u) /*0.0769231*/;
    // walk 1: folds 1 reduction(s), stores 0 output(s)
    float acc1 = 0.0;
    for (uint k = tid; k < VKF_INNER; k += uint(VKF_WORKGROUP_SIZE)) {
      const uint i = row * VKF_INNER + k;
      const float a0 = vkf_b0.d[i];
      const float a2 = vkf_b1.d[(i % 13u)];
      float r0;
      vkf_lane1(red0, red1, a0, a2, r0);
      acc1 = vkf_combine_sum(acc1, r0);
    }
    vkf_partial[1][tid] = acc1;
    barrier();
    for (uint s = uint(VKF_WORKGROUP_SIZE) / 2u; s > 0u; s >>= 1u) {
      if (tid < s) {
        vkf_partial[1][tid] = vkf_combine_sum(vkf_partial[1][tid], vkf_partial[1][tid + s]);
      }
      barrier();
    }
    red1 = vkf_partial[1][0];
    red1 *= VKF_F32(0x3d9d89d9u) /*0.0769231*/;
    // walk 2: folds 0 reduction(s), stores 1 output(s)
    for (uint k = tid; k < VKF_INNER; k += uint(VKF_WORKGROUP_SIZE)) {
      const uint i = row * VKF_INNER + k;
      const float a0 = vkf_b0.d[i];
      const float a2 = vkf_b1.d[(i % 13u)];
      float r0;
      vkf_lane2(red0, red1, a0, a2, r0);
      vkf_out0.d[i] = r0;
    }
    if (tid == 0u) {
      vkf_post(red0, red1);
    }
    barrier();  // vkf_partial is reused by the next row
  }
}
