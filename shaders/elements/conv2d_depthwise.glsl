// Element of a depthwise Conv (2-D, NCHW, one input channel per group), alone: output element i,
//   Y[n, m, oh, ow] = B[m] + sum_{kh, kw} X[n, m / MG, oh*SH - PT + kh*DH, ow*SW - PL + kw*DW] * W[m, 0, kh, kw],
// summed in fp32 in the order roots/conv2d_depthwise.glsl sums it, for a consumer kernel that computes
// it where it loads it (KernelElement). The window is unrolled; taps in the padding are skipped. X is VKF_E_IN0, W VKF_E_IN1, B VKF_E_IN2.
// Defines (u: uint, else int): VKF_E_C u, VKF_E_H, VKF_E_W, VKF_E_M u, VKF_E_OH u, VKF_E_OW u,
// VKF_E_MG u, VKF_E_KH, VKF_E_KW, VKF_E_SH, VKF_E_SW, VKF_E_DH, VKF_E_DW, VKF_E_PT, VKF_E_PL,
// VKF_E_HAS_BIAS (0/1); VKF_E_RUN u (vkf_element_run's outputs; 1 where not given).
#extension GL_EXT_control_flow_attributes : enable

#ifndef VKF_E_RUN
#define VKF_E_RUN 1u
#endif

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

// Outputs i .. i + VKF_E_RUN - 1 into v, each summed as vkf_element sums it; the caller keeps them in one
// row of one plane (i a multiple of VKF_E_RUN, which divides VKF_E_OW). The run loads its KH x KW weights
// once and each input row segment once for all its outputs, as roots/conv2d_depthwise.glsl does.
void vkf_element_run(uint i, out float v[VKF_E_RUN]) {
  const uint ow0 = i % VKF_E_OW;
  const uint oh = (i / VKF_E_OW) % VKF_E_OH;
  const uint nm = i / (VKF_E_OW * VKF_E_OH);
  const uint m = nm % VKF_E_M;
  const uint plane = ((nm / VKF_E_M) * VKF_E_C + m / VKF_E_MG) * uint(VKF_E_H * VKF_E_W);
  const int ih0 = int(oh) * VKF_E_SH - VKF_E_PT;
  const int iw0 = int(ow0) * VKF_E_SW - VKF_E_PL;
  const int span = (int(VKF_E_RUN) - 1) * VKF_E_SW + (VKF_E_KW - 1) * VKF_E_DW + 1;
  float weight[VKF_E_KH * VKF_E_KW];
  [[unroll]] for (int t = 0; t < VKF_E_KH * VKF_E_KW; ++t) weight[t] = VKF_E_IN1(m * uint(VKF_E_KH * VKF_E_KW) + uint(t));
  [[unroll]] for (uint r = 0u; r < VKF_E_RUN; ++r) v[r] = 0.0;
  [[unroll]] for (int kh = 0; kh < VKF_E_KH; ++kh) {
    const int ih = ih0 + kh * VKF_E_DH;
    if (uint(ih) >= uint(VKF_E_H)) continue;
    float row[(int(VKF_E_RUN) - 1) * VKF_E_SW + (VKF_E_KW - 1) * VKF_E_DW + 1];
    [[unroll]] for (int t = 0; t < span; ++t)
      row[t] = uint(iw0 + t) < uint(VKF_E_W) ? VKF_E_IN0(plane + uint(ih * VKF_E_W + iw0 + t)) : 0.0;
    [[unroll]] for (int kw = 0; kw < VKF_E_KW; ++kw)
      [[unroll]] for (uint r = 0u; r < VKF_E_RUN; ++r) v[r] = fma(row[int(r) * VKF_E_SW + kw * VKF_E_DW], weight[kh * VKF_E_KW + kw], v[r]);
  }
#if VKF_E_HAS_BIAS
  [[unroll]] for (uint r = 0u; r < VKF_E_RUN; ++r) v[r] += VKF_E_IN2(m);
#endif
}
