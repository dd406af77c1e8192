// ConvTranspose root (straightforward, 2-D, NCHW), gathered: one invocation per output element
// Y[n, m, oh, ow] sums X[n, c, ih, iw] * W[c, m % MG, kh, kw] over the group's input channels c and
// the taps with ih * SH - PT + kh * DH == oh (and the same for w), in fp32.
// Defines (u: uint, else int): VKF_N u, VKF_C u, VKF_H, VKF_W, VKF_M u, VKF_OH u, VKF_OW u, VKF_CG u
// (input channels per group), VKF_MG u (output channels per group), VKF_KH, VKF_KW, VKF_SH, VKF_SW,
// VKF_DH, VKF_DW, VKF_PT, VKF_PL (top and left pads), VKF_HAS_BIAS (0/1; the bias is input 2).

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
    const uint ml = m % VKF_MG;
    const int th0 = int(oh) + VKF_PT;
    const int tw0 = int(ow) + VKF_PL;
    float acc = 0.0;
    for (uint ci = 0u; ci < VKF_CG; ++ci) {
      const uint x_plane = (n * VKF_C + c0 + ci) * uint(VKF_H * VKF_W);
      const uint w_plane = ((c0 + ci) * VKF_MG + ml) * uint(VKF_KH * VKF_KW);
      for (int kh = 0; kh < VKF_KH; ++kh) {
        const int th = th0 - kh * VKF_DH;  // = ih * SH when this tap reaches oh
        if (th < 0 || th % VKF_SH != 0 || th / VKF_SH >= VKF_H) continue;
        const int ih = th / VKF_SH;
        for (int kw = 0; kw < VKF_KW; ++kw) {
          const int tw = tw0 - kw * VKF_DW;
          if (tw < 0 || tw % VKF_SW != 0 || tw / VKF_SW >= VKF_W) continue;
          const int iw = tw / VKF_SW;
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
