// Pool root (straightforward, 2-D over planes): one invocation per output element Y[plane, oh, ow], the
// max or the fp32 sum of the window's taps that fall inside the input. A global pool is the window
// 1 x (whole flattened spatial extent).
// Average divisor: the taps inside the input, or with VKF_COUNT_INCLUDE_PAD the taps inside the padded
// input (rows < VKF_H_END, columns < VKF_W_END; a ceil_mode window may reach past both). A window with
// no input tap yields -FLT_MAX (max) or 0 (average).
// Defines (u: uint, else int): VKF_PLANES u, VKF_H, VKF_W, VKF_OH u, VKF_OW u, VKF_KH, VKF_KW, VKF_SH,
// VKF_SW, VKF_DH, VKF_DW, VKF_PT, VKF_PL, VKF_H_END, VKF_W_END, VKF_POOL_MAX (0/1),
// VKF_COUNT_INCLUDE_PAD (0/1).

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

void main() {
  const uint total = VKF_PLANES * VKF_OH * VKF_OW;
  const uint stride = gl_NumWorkGroups.x * uint(VKF_WORKGROUP_SIZE);
  for (uint o = gl_GlobalInvocationID.x; o < total; o += stride) {
    const uint ow = o % VKF_OW;
    const uint oh = (o / VKF_OW) % VKF_OH;
    const uint plane = o / (VKF_OW * VKF_OH);
    const uint x_plane = plane * uint(VKF_H * VKF_W);
    const int ih0 = int(oh) * VKF_SH - VKF_PT;
    const int iw0 = int(ow) * VKF_SW - VKF_PL;
#if VKF_POOL_MAX
    float acc = VKF_F32(0xff7fffffu);  // -FLT_MAX
#else
    float acc = 0.0;
#endif
    int rows_inside = 0, rows_padded = 0, cols_inside = 0, cols_padded = 0;
    for (int kw = 0; kw < VKF_KW; ++kw) {
      const int iw = iw0 + kw * VKF_DW;
      cols_padded += iw < VKF_W_END ? 1 : 0;
      cols_inside += iw >= 0 && iw < VKF_W ? 1 : 0;
    }
    for (int kh = 0; kh < VKF_KH; ++kh) {
      const int ih = ih0 + kh * VKF_DH;
      rows_padded += ih < VKF_H_END ? 1 : 0;
      if (ih < 0 || ih >= VKF_H) continue;
      ++rows_inside;
      for (int kw = 0; kw < VKF_KW; ++kw) {
        const int iw = iw0 + kw * VKF_DW;
        if (iw < 0 || iw >= VKF_W) continue;
        const float v = VKF_IN0(x_plane + uint(ih * VKF_W + iw));
#if VKF_POOL_MAX
        acc = max(acc, v);
#else
        acc += v;
#endif
      }
    }
#if !VKF_POOL_MAX
#if VKF_COUNT_INCLUDE_PAD
    const int count = rows_padded * cols_padded;
#else
    const int count = rows_inside * cols_inside;
#endif
    if (rows_inside > 0 && cols_inside > 0) acc /= float(count);
#endif
    VKF_OUT0(o, acc);
  }
}
