#version 450
// vkfuse group: Mul -> Add -> Relu
// domain [6,5], 3 ops, 3 bindings
#define VKF_WORKGROUP_SIZE 256
#define VKF_VEC 4u
#define VKF_NUMEL 30u
#define VKF_NUM_VECS 8u
// Prelude: shared by every generated kernel. The code generator emits #version, extensions and the
// VKF_* constants before this file.

// Exact float literal from its IEEE-754 bits (covers inf and NaN, which GLSL cannot spell).
#define VKF_F32(bits) uintBitsToFloat(bits)

// ---- ops/mul.glsl
// Mul: y = a * b
float op_mul(float a, float b) { return a * b; }

// ---- ops/add.glsl
// Add: y = a + b
float op_add(float a, float b) { return a + b; }

// ---- ops/relu.glsl
// Relu: y = max(0, x)
float op_relu(float x) { return max(x, 0.0); }

// ---- bindings
layout(std430, set = 0, binding = 0) restrict readonly buffer VkfBuf0 { float d[]; } vkf_b0;
layout(std430, set = 0, binding = 0) restrict readonly buffer VkfBuf0V { vec4 d[]; } vkf_b0v;
layout(std430, set = 0, binding = 1) restrict readonly buffer VkfBuf1 { float d[]; } vkf_b1;
layout(std430, set = 0, binding = 2) writeonly buffer VkfBuf2 { float d[]; } vkf_out0;
layout(std430, set = 0, binding = 2) writeonly buffer VkfBuf2V { vec4 d[]; } vkf_out0v;

// ---- roots/elementwise.glsl
// Elementwise root. Each invocation computes VKF_VEC consecutive elements of the group's domain:
// inputs and outputs with the domain's own shape move as vectors, broadcast inputs are gathered per
// lane, and the last partial vector takes the scalar path. A grid-stride loop lets any size run
// within the device's workgroup-count limit.
//
// Hooks filled by the code generator:
//   vkf_lane(...)      the fused chain for one element (inputs in, outputs out)
//   @vkf_vector_body   loads VKF_VEC lanes, calls vkf_lane per lane, stores vectors
//   @vkf_scalar_body   same for one element `i`

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

void vkf_lane(in float x0, in float x2, out float y0) {
  const float x1 = VKF_F32(0x3dcccccdu) /*0.1*/;
  const float v0 = op_mul(x0, x1);  // Mul
  const float v1 = op_add(v0, x2);  // Add
  const float v2 = op_relu(v1);  // Relu
  y0 = v2;
}

void main() {
  const uint vkf_stride = gl_NumWorkGroups.x * uint(VKF_WORKGROUP_SIZE);
  for (uint t = gl_GlobalInvocationID.x; t < VKF_NUM_VECS; t += vkf_stride) {
    const uint base = t * VKF_VEC;
    if (base + VKF_VEC <= VKF_NUMEL) {
      const vec4 p0 = vec4(vkf_b0v.d[t]);
      const float a0_0 = p0.x;
      const float a0_1 = p0.y;
      const float a0_2 = p0.z;
      const float a0_3 = p0.w;
      const float a2_0 = vkf_b1.d[((base + 0u) % 5u)];
      const float a2_1 = vkf_b1.d[((base + 1u) % 5u)];
      const float a2_2 = vkf_b1.d[((base + 2u) % 5u)];
      const float a2_3 = vkf_b1.d[((base + 3u) % 5u)];
      float r0_0;
      float r0_1;
      float r0_2;
      float r0_3;
      vkf_lane(a0_0, a2_0, r0_0);
      vkf_lane(a0_1, a2_1, r0_1);
      vkf_lane(a0_2, a2_2, r0_2);
      vkf_lane(a0_3, a2_3, r0_3);
      vkf_out0v.d[t] = vec4(r0_0, r0_1, r0_2, r0_3);
    } else {
      for (uint l = 0u; l < VKF_VEC; ++l) {
        const uint i = base + l;
        if (i < VKF_NUMEL) {
          const float a0 = vkf_b0.d[i];
          const float a2 = vkf_b1.d[(i % 5u)];
          float r0;
          vkf_lane(a0, a2, r0);
          vkf_out0.d[i] = r0;
        }
      }
    }
  }
}
