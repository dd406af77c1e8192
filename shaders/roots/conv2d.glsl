// Conv root (straightforward, 2-D, NCHW): one invocation per output element Y[n, m, oh, ow], an fp32
// sum over the group's input channels and the kernel window; taps in the padding are skipped.
// Defines (u: uint, else int): VKF_N u, VKF_C u, VKF_H, VKF_W, VKF_M u, VKF_OH u, VKF_OW u, VKF_CG u
// (input channels per group), VKF_MG u (output channels per group), VKF_KH, VKF_KW, VKF_SH, VKF_SW,
// VKF_DH, VKF_DW, VKF_PT, VKF_PL (top and left pads), VKF_HAS_BIAS (0/1; the bias is input 2).
// The tiled version replaces this in the anchors issue.

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

void main() {
  const uint total = VKF_N * VKF_M * VKF_OH * VKF_OW;
  const uint stride = gl_NumWorkGroups.x * uint(VKF_WORKGROUP_SIZE);
  for (uint o = gl_GlobalInvocationID.x; o < total; o += stride) {
    const uint ow = o % VKF_OW;
    const uint oh = (o / VKF_OW) % VKF_OH;
    const uint m = (o / (VKF_OW * VKF_OH)) % VKF_M;
    const uint n = o / (VKF_OW * VKF_OH * VKF_M);
    const uint c0 = (m / VKF_MG) * VKF_CG;
    const int ih0 = int(oh) * VKF_SH - VKF_PT;
    const int iw0 = int(ow) * VKF_SW - VKF_PL;
    float acc = 0.0;
    for (uint ci = 0u; ci < VKF_CG; ++ci) {
      const uint x_plane = (n * VKF_C + c0 + ci) * uint(VKF_H * VKF_W);
      const uint w_plane = (m * VKF_CG + ci) * uint(VKF_KH * VKF_KW);
      for (int kh = 0; kh < VKF_KH; ++kh) {
        const int ih = ih0 + kh * VKF_DH;
        if (ih < 0 || ih >= VKF_H) continue;
        for (int kw = 0; kw < VKF_KW; ++kw) {
          const int iw = iw0 + kw * VKF_DW;
          if (iw < 0 || iw >= VKF_W) continue;
          acc = fma(VKF_IN0(x_plane + uint(ih * VKF_W + iw)), VKF_IN1(w_plane + uint(kh * VKF_KW + kw)), acc);
        }
      }
    }
#if VKF_HAS_BIAS
    acc += VKF_IN2(m);
#endif
    VKF_OUT0(o, acc);
  }
}
