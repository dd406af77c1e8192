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
