// Gemm root (straightforward): Y[m, n] = alpha * sum_k A'[m, k] B'[k, n] + beta * C[m, n], one invocation
// per output element, the K loop in fp32. Transposes are folded into the index macros; C broadcasts
// through VKF_C_INDEX.
// Defines: VKF_M, VKF_N, VKF_K, VKF_A_INDEX(m, k), VKF_B_INDEX(k, n), VKF_ALPHA, VKF_BETA, VKF_HAS_C,
// VKF_C_INDEX(m, n). The shared-memory tiled version replaces this in the anchors issue.

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

void main() {
  const uint total = VKF_M * VKF_N;
  const uint stride = gl_NumWorkGroups.x * uint(VKF_WORKGROUP_SIZE);
  for (uint o = gl_GlobalInvocationID.x; o < total; o += stride) {
    const uint n = o % VKF_N;
    const uint m = o / VKF_N;
    float acc = 0.0;
    for (uint k = 0u; k < VKF_K; ++k) acc = fma(VKF_IN0(VKF_A_INDEX(m, k)), VKF_IN1(VKF_B_INDEX(k, n)), acc);
    float y = VKF_ALPHA * acc;
#if VKF_HAS_C
    y = fma(VKF_BETA, VKF_IN2(VKF_C_INDEX(m, n)), y);
#endif
    VKF_OUT0(o, y);
  }
}
