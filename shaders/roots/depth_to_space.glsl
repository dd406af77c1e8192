// DepthToSpace root: one invocation per output element [n, c, y, x] of [N, VKF_C_OUT, VKF_H * b,
// VKF_W * b] (b = VKF_BLOCK). With i = y % b and j = x % b, it reads input channel (i b + j) VKF_C_OUT + c
// (DCR, VKF_CRD 0) or (c b + i) b + j (CRD, VKF_CRD 1) at [y / b, x / b].
// Defines: VKF_NUMEL, VKF_C, VKF_C_OUT, VKF_H, VKF_W, VKF_BLOCK, VKF_CRD.

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

void main() {
  const uint stride = gl_NumWorkGroups.x * uint(VKF_WORKGROUP_SIZE);
  const uint out_w = VKF_W * VKF_BLOCK, out_h = VKF_H * VKF_BLOCK;
  for (uint o = gl_GlobalInvocationID.x; o < VKF_NUMEL; o += stride) {
    const uint x = o % out_w;
    const uint y = (o / out_w) % out_h;
    const uint c = (o / (out_w * out_h)) % VKF_C_OUT;
    const uint n = o / (out_w * out_h * VKF_C_OUT);
    const uint i = y % VKF_BLOCK, j = x % VKF_BLOCK;
#if VKF_CRD
    const uint channel = (c * VKF_BLOCK + i) * VKF_BLOCK + j;
#else
    const uint channel = (i * VKF_BLOCK + j) * VKF_C_OUT + c;
#endif
    VKF_OUT0(o, VKF_IN0(((n * VKF_C + channel) * VKF_H + y / VKF_BLOCK) * VKF_W + x / VKF_BLOCK));
  }
}
