// ImagePalette root: one invocation per pixel of the class scores [1, C, H, W] (VKF_NHWC: [1, H, W, C])
// finds the first channel of the largest score and stores that class's palette entry (input 1, [K, 4],
// class % K) as the texel at (x, y).
// Defines: VKF_PIXELS (H * W), VKF_WIDTH, VKF_CHANNELS, VKF_NHWC, VKF_PALETTE_SIZE (K).

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

uint vkf_score_index(uint p, uint c) {
#if VKF_NHWC
  return p * VKF_CHANNELS + c;
#else
  return c * VKF_PIXELS + p;
#endif
}

void main() {
  const uint stride = gl_NumWorkGroups.x * uint(VKF_WORKGROUP_SIZE);
  for (uint p = gl_GlobalInvocationID.x; p < VKF_PIXELS; p += stride) {
    float best = float(VKF_IN0(vkf_score_index(p, 0u)));
    uint best_c = 0u;
    for (uint c = 1u; c < VKF_CHANNELS; ++c) {
      const float v = float(VKF_IN0(vkf_score_index(p, c)));
      if (v > best) {
        best = v;
        best_c = c;
      }
    }
    const uint e = (best_c % VKF_PALETTE_SIZE) * 4u;
    const vec4 t = vec4(float(VKF_IN1(e)), float(VKF_IN1(e + 1u)), float(VKF_IN1(e + 2u)), float(VKF_IN1(e + 3u)));
    VKF_OUT0_TEXEL(uvec2(p % VKF_WIDTH, p / VKF_WIDTH), t);
  }
}
