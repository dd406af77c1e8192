#version 450
#extension GL_EXT_spirv_intrinsics : require
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4466], 4461, 32);
// vkfuse group: MaxPool -> Mul -> Add -> Relu
// output [1,3,3,2], 3 ops, 5 bindings
#define VKF_WORKGROUP_SIZE 256
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

#define VKF_OUTPUTS 18u
#define VKF_E_H 6
#define VKF_E_W 5
#define VKF_E_OH 3u
#define VKF_E_OW 2u
#define VKF_E_KH 2
#define VKF_E_KW 2
#define VKF_E_SH 2
#define VKF_E_SW 2
#define VKF_E_DH 1
#define VKF_E_DW 1
#define VKF_E_PT 0
#define VKF_E_PL 0
#define VKF_E_H_END 6
#define VKF_E_W_END 5
#define VKF_E_POOL_MAX 1
#define VKF_E_COUNT_INCLUDE_PAD 0
layout(std430, set = 0, binding = 0) restrict readonly buffer VkfBuf0 { float d[]; } vkf_b0;
layout(std430, set = 0, binding = 1) restrict readonly buffer VkfBuf1 { float d[]; } vkf_b1;
layout(std430, set = 0, binding = 2) restrict readonly buffer VkfBuf2 { float d[]; } vkf_b2;
layout(std430, set = 0, binding = 2) restrict readonly buffer VkfBuf2V { vec4 d[]; } vkf_b2v;
layout(std430, set = 0, binding = 3) restrict writeonly buffer VkfBuf3 { float d[]; } vkf_out0;
layout(std430, set = 0, binding = 3) restrict writeonly buffer VkfBuf3V { vec4 d[]; } vkf_out0v;
layout(std430, set = 0, binding = 4) restrict writeonly buffer VkfBuf4 { float d[]; } vkf_out1;
layout(std430, set = 0, binding = 4) restrict writeonly buffer VkfBuf4V { vec4 d[]; } vkf_out1v;
#define VKF_IN0(i) vkf_b0.d[i]
void vkf_post(in float red0, in float px0, in float px1, out float py0, out float py1) {
  const float pv0 = op_mul(red0, px0);  // Mul
  const float pv1 = op_add(pv0, px1);  // Add
  const float pv2 = op_relu(pv1);  // Relu
  py0 = red0;
  py1 = pv2;
}
void vkf_store0(uint i, float v) {
  const float pa0 = vkf_b1.d[(i / 6u)];
  const float pa1 = vkf_b2.d[i];
  float o0;
  float o1;
  vkf_post(v, pa0, pa1, o0, o1);
  vkf_out0.d[i] = o0;
  vkf_out1.d[i] = o1;
}
#define VKF_OUT0(i, v) vkf_store0((i), (v))
void vkf_store0_x4(uint i, vec4 v) {
  const float pa0_0 = vkf_b1.d[((i + 0u) / 6u)];
  const float pa0_1 = vkf_b1.d[((i + 1u) / 6u)];
  const float pa0_2 = vkf_b1.d[((i + 2u) / 6u)];
  const float pa0_3 = vkf_b1.d[((i + 3u) / 6u)];
  const vec4 pp1 = vec4(vkf_b2v.d[i / 4u]);
  const float pa1_0 = pp1.x;
  const float pa1_1 = pp1.y;
  const float pa1_2 = pp1.z;
  const float pa1_3 = pp1.w;
  float o0_0;
  float o0_1;
  float o0_2;
  float o0_3;
  float o1_0;
  float o1_1;
  float o1_2;
  float o1_3;
  vkf_post(v.x, pa0_0, pa1_0, o0_0, o1_0);
  vkf_post(v.y, pa0_1, pa1_1, o0_1, o1_1);
  vkf_post(v.z, pa0_2, pa1_2, o0_2, o1_2);
  vkf_post(v.w, pa0_3, pa1_3, o0_3, o1_3);
  vkf_out0v.d[i / 4u] = vec4(o0_0, o0_1, o0_2, o0_3);
  vkf_out1v.d[i / 4u] = vec4(o1_0, o1_1, o1_2, o1_3);
}
#define VKF_OUT0_X4(i, v) vkf_store0_x4((i), (v))
#define VKF_E_IN0(i) VKF_IN0(i)
// ---- elements/pool2d.glsl
// Element of a MaxPool or AveragePool (2-D, over planes), alone: output element i = Y[plane, oh, ow],
// the max or the fp32 sum of the window's taps inside the input (roots/pool2d.glsl gives the divisor),
// for a consumer kernel that computes it where it loads it (KernelElement) and for the pool's own root,
// which stores each. The window is a loop (a 7x7 or larger one stays small code). X is VKF_E_IN0.
// Defines (u: uint, else int): VKF_E_OH u, VKF_E_OW u, VKF_E_H, VKF_E_W, VKF_E_KH, VKF_E_KW, VKF_E_SH,
// VKF_E_SW, VKF_E_DH, VKF_E_DW, VKF_E_PT, VKF_E_PL, VKF_E_H_END, VKF_E_W_END, VKF_E_POOL_MAX (0/1),
// VKF_E_COUNT_INCLUDE_PAD (0/1).
float vkf_element(uint i) {
  const uint ow = i % VKF_E_OW;
  const uint oh = (i / VKF_E_OW) % VKF_E_OH;
  const uint x_plane = (i / (VKF_E_OW * VKF_E_OH)) * uint(VKF_E_H * VKF_E_W);
  const int ih0 = int(oh) * VKF_E_SH - VKF_E_PT;
  const int iw0 = int(ow) * VKF_E_SW - VKF_E_PL;
#if VKF_E_POOL_MAX
  float acc = VKF_F32(0xff7fffffu);  // -FLT_MAX
#else
  float acc = 0.0;
#endif
  int rows_inside = 0, rows_padded = 0, cols_inside = 0, cols_padded = 0;
  for (int kw = 0; kw < VKF_E_KW; ++kw) {
    const int iw = iw0 + kw * VKF_E_DW;
    cols_padded += iw < VKF_E_W_END ? 1 : 0;
    cols_inside += uint(iw) < uint(VKF_E_W) ? 1 : 0;
  }
  for (int kh = 0; kh < VKF_E_KH; ++kh) {
    const int ih = ih0 + kh * VKF_E_DH;
    rows_padded += ih < VKF_E_H_END ? 1 : 0;
    if (uint(ih) >= uint(VKF_E_H)) continue;
    ++rows_inside;
    for (int kw = 0; kw < VKF_E_KW; ++kw) {
      const int iw = iw0 + kw * VKF_E_DW;
      if (uint(iw) >= uint(VKF_E_W)) continue;
      const float v = VKF_E_IN0(x_plane + uint(ih * VKF_E_W + iw));
#if VKF_E_POOL_MAX
      acc = max(acc, v);
#else
      acc += v;
#endif
    }
  }
#if !VKF_E_POOL_MAX
#if VKF_E_COUNT_INCLUDE_PAD
  const int count = rows_padded * cols_padded;
#else
  const int count = rows_inside * cols_inside;
#endif
  if (rows_inside > 0 && cols_inside > 0) acc /= float(count);
#endif
  return acc;
}

// ---- roots/pool2d.glsl
// Pool root (2-D over planes): one invocation per output element Y[plane, oh, ow], computed by
// elements/pool2d.glsl's vkf_element (KernelLaunch::element: the code generator places it before this
// root, reading VKF_IN0), the formula a consumer's loads run too: the max or the fp32 sum of the
// window's taps inside the input. A global pool is the window 1 x (whole flattened spatial extent).
// Average divisor: the taps inside the input, or with VKF_E_COUNT_INCLUDE_PAD the taps inside the padded
// input (rows < VKF_E_H_END, columns < VKF_E_W_END; a ceil_mode window may reach past both). A window
// with no input tap yields -FLT_MAX (max) or 0 (average).
// Defines: VKF_OUTPUTS u (planes x OH x OW), and elements/pool2d.glsl's.

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

void main() {
  const uint stride = gl_NumWorkGroups.x * uint(VKF_WORKGROUP_SIZE);
  for (uint o = gl_GlobalInvocationID.x; o < VKF_OUTPUTS; o += stride) VKF_OUT0(o, vkf_element(o));
}
