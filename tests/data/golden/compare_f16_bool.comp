#version 450
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
// vkfuse group: Abs -> Greater
// domain [3,5], 2 ops, 3 bindings
#define VKF_WORKGROUP_SIZE 256
#define VKF_VEC 4u
#define VKF_NUMEL 15u
#define VKF_NUM_VECS 4u
// Prelude: shared by every generated kernel. The code generator emits #version, extensions and the
// VKF_* constants before this file.

// Exact float literal from its IEEE-754 bits (covers inf and NaN, which GLSL cannot spell).
#define VKF_F32(bits) uintBitsToFloat(bits)

// ---- ops/abs.glsl
// Abs: y = |x|
float op_abs(float x) { return abs(x); }

// ---- ops/compare.glsl
// Equal / Greater / Less / GreaterOrEqual / LessOrEqual: y = a == b, a > b, a < b, a >= b, a <= b
bool op_equal(float a, float b) { return a == b; }
bool op_greater(float a, float b) { return a > b; }
bool op_less(float a, float b) { return a < b; }
bool op_greater_or_equal(float a, float b) { return a >= b; }
bool op_less_or_equal(float a, float b) { return a <= b; }

// ---- bindings
layout(std430, set = 0, binding = 0) restrict readonly buffer VkfBuf0 { float16_t d[]; } vkf_b0;
layout(std430, set = 0, binding = 0) restrict readonly buffer VkfBuf0V { f16vec4 d[]; } vkf_b0v;
layout(std430, set = 0, binding = 1) restrict readonly buffer VkfBuf1 { float16_t d[]; } vkf_b1;
layout(std430, set = 0, binding = 2) writeonly buffer VkfBuf2 { uint8_t d[]; } vkf_out0;
layout(std430, set = 0, binding = 2) writeonly buffer VkfBuf2V { u8vec4 d[]; } vkf_out0v;

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

void vkf_lane(in float x0, in float x1, out bool y0) {
  const float v0 = op_abs(x0);  // Abs
  const bool v1 = op_greater(v0, x1);  // Greater
  y0 = v1;
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
      const float a1_0 = float(vkf_b1.d[((base + 0u) % 5u)]);
      const float a1_1 = float(vkf_b1.d[((base + 1u) % 5u)]);
      const float a1_2 = float(vkf_b1.d[((base + 2u) % 5u)]);
      const float a1_3 = float(vkf_b1.d[((base + 3u) % 5u)]);
      bool r0_0;
      bool r0_1;
      bool r0_2;
      bool r0_3;
      vkf_lane(a0_0, a1_0, r0_0);
      vkf_lane(a0_1, a1_1, r0_1);
      vkf_lane(a0_2, a1_2, r0_2);
      vkf_lane(a0_3, a1_3, r0_3);
      vkf_out0v.d[t] = u8vec4(uvec4((r0_0 ? 1u : 0u), (r0_1 ? 1u : 0u), (r0_2 ? 1u : 0u), (r0_3 ? 1u : 0u)));
    } else {
      for (uint l = 0u; l < VKF_VEC; ++l) {
        const uint i = base + l;
        if (i < VKF_NUMEL) {
          const float a0 = float(vkf_b0.d[i]);
          const float a1 = float(vkf_b1.d[(i % 5u)]);
          bool r0;
          vkf_lane(a0, a1, r0);
          vkf_out0.d[i] = uint8_t(r0 ? 1u : 0u);
        }
      }
    }
  }
}
