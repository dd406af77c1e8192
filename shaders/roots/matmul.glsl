// MatMul root (straightforward): one invocation per output element, a K loop in fp32, batch
// dimensions broadcast through VKF_A_BATCH / VKF_B_BATCH (element offsets of a batch's matrix).
// Defines: VKF_BATCH, VKF_M, VKF_N, VKF_K, VKF_A_BATCH(b), VKF_B_BATCH(b).
// The shared-memory tiled version replaces this in the anchors issue.

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

void main() {
  const uint total = VKF_BATCH * VKF_M * VKF_N;
  const uint stride = gl_NumWorkGroups.x * uint(VKF_WORKGROUP_SIZE);
  for (uint o = gl_GlobalInvocationID.x; o < total; o += stride) {
    const uint n = o % VKF_N;
    const uint m = (o / VKF_N) % VKF_M;
    const uint b = o / (VKF_N * VKF_M);
    const uint a = VKF_A_BATCH(b) + m * VKF_K;
    const uint bb = VKF_B_BATCH(b) + n;
    float acc = 0.0;
    for (uint k = 0u; k < VKF_K; ++k) acc = fma(VKF_IN0(a + k), VKF_IN1(bb + k * VKF_N), acc);
    VKF_OUT0(o, acc);
  }
}
