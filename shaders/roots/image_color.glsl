// ImageColor root: one invocation per pixel of the output [1, C, H, W] (VKF_NHWC: [1, H, W, C]) reads the
// channels each texel component takes (VKF_SRC<i>, -1: none), scales and offsets them (VKF_MUL<i>,
// VKF_ADD<i>), clamps to 0..1 where VKF_CLAMP is 1 (UNORM images) and stores the texel at (x, y).
// Defines: VKF_PIXELS (H * W), VKF_WIDTH, VKF_CHANNELS, VKF_NHWC, VKF_SRC0..3, VKF_MUL0..3,
// VKF_ADD0..3, VKF_CLAMP.

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

float vkf_channel(uint p, int c) {
  if (c < 0) return 0.0;
#if VKF_NHWC
  return float(VKF_IN0(p * VKF_CHANNELS + uint(c)));
#else
  return float(VKF_IN0(uint(c) * VKF_PIXELS + p));
#endif
}

void main() {
  const uint stride = gl_NumWorkGroups.x * uint(VKF_WORKGROUP_SIZE);
  for (uint p = gl_GlobalInvocationID.x; p < VKF_PIXELS; p += stride) {
    vec4 t = vec4(vkf_channel(p, VKF_SRC0), vkf_channel(p, VKF_SRC1), vkf_channel(p, VKF_SRC2), vkf_channel(p, VKF_SRC3)) *
                 vec4(VKF_MUL0, VKF_MUL1, VKF_MUL2, VKF_MUL3) + vec4(VKF_ADD0, VKF_ADD1, VKF_ADD2, VKF_ADD3);
#if VKF_CLAMP
    t = clamp(t, 0.0, 1.0);
#endif
    VKF_OUT0_TEXEL(uvec2(p % VKF_WIDTH, p / VKF_WIDTH), t);
  }
}
