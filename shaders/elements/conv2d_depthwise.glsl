// Element of a depthwise Conv (2-D, NCHW, one input channel per group), alone: output element i,
//   Y[n, m, oh, ow] = B[m] + sum_{kh, kw} X[n, m / MG, oh*SH - PT + kh*DH, ow*SW - PL + kw*DW] * W[m, 0, kh, kw],
// summed in fp32 in the order roots/conv2d_depthwise.glsl sums it, for a consumer kernel that computes
// it where it loads it (KernelElement). The window is unrolled; taps in the padding are skipped. X is VKF_E_IN0, W VKF_E_IN1, B VKF_E_IN2.
// Defines (u: uint, else int): VKF_E_C u, VKF_E_H, VKF_E_W, VKF_E_M u, VKF_E_OH u, VKF_E_OW u,
// VKF_E_MG u, VKF_E_KH, VKF_E_KW, VKF_E_SH, VKF_E_SW, VKF_E_DH, VKF_E_DW, VKF_E_PT, VKF_E_PL,
// VKF_E_HAS_BIAS (0/1).
#extension GL_EXT_control_flow_attributes : enable

float vkf_element(uint i) {
  const uint ow = i % VKF_E_OW;
  const uint oh = (i / VKF_E_OW) % VKF_E_OH;
  const uint nm = i / (VKF_E_OW * VKF_E_OH);  // n * M + m
  const uint m = nm % VKF_E_M;
  const uint plane = ((nm / VKF_E_M) * VKF_E_C + m / VKF_E_MG) * uint(VKF_E_H * VKF_E_W);
  const int ih0 = int(oh) * VKF_E_SH - VKF_E_PT;
  const int iw0 = int(ow) * VKF_E_SW - VKF_E_PL;
  float acc = 0.0;
  [[unroll]] for (int kh = 0; kh < VKF_E_KH; ++kh) {
    const int ih = ih0 + kh * VKF_E_DH;
    if (uint(ih) >= uint(VKF_E_H)) continue;
    [[unroll]] for (int kw = 0; kw < VKF_E_KW; ++kw) {
      const int iw = iw0 + kw * VKF_E_DW;
      if (uint(iw) < uint(VKF_E_W))
        acc = fma(VKF_E_IN0(plane + uint(ih * VKF_E_W + iw)), VKF_E_IN1(m * uint(VKF_E_KH * VKF_E_KW) + uint(kh * VKF_E_KW + kw)), acc);
    }
  }
#if VKF_E_HAS_BIAS
  acc += VKF_E_IN2(m);  // after the window, as roots/conv2d_depthwise.glsl adds it
#endif
  return acc;
}
