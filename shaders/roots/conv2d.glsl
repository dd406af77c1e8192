// Conv root, implicit GEMM (2-D, NCHW; every Conv whose groups have more than one input channel). Per
// group g the convolution is the matrix product
//   Y[n, g*MG + m, oh, ow] = sum_k W[g*MG + m, k] * X'[k, (n, oh, ow)],   k = (ci, kh, kw),
// with A = W (rows contiguous in k) and B = X' the im2col matrix, which is never stored: each B tile is
// gathered from X with the pad / stride / dilation index math, zero outside the input.
// Workgroup (x, y, z) = (column tile, row tile, group); x strides over the column tiles when there are
// more than the device's workgroup count. Each step stages a BK slice of the BM x BN block's A and B in
// shared memory; each invocation keeps a TM x TN micro-tile of fp32 accumulators in registers. The
// micro-tile's rows and columns are strided (ty + i * BM/TM, tx + j * BN/TN): neighbouring invocations
// read neighbouring shared words (no bank conflicts) and store neighbouring outputs (coalesced).
// Every output is stored once, by VKF_OUT0, with its bias added.
// Defines (u: uint, else int): VKF_N u, VKF_C u, VKF_H, VKF_W, VKF_M u, VKF_OH u, VKF_OW u, VKF_CG u
// (input channels per group), VKF_MG u (output channels per group), VKF_KH, VKF_KW, VKF_SH, VKF_SW,
// VKF_DH, VKF_DW, VKF_PT, VKF_PL (top and left pads), VKF_HAS_BIAS (0/1; the bias is input 2);
// VKF_GEMM_N u (N*OH*OW), VKF_GEMM_K u (CG*KH*KW), VKF_TILES_N u (column tiles), VKF_BM, VKF_BN, VKF_BK,
// VKF_TM, VKF_TN (tile shape, uint; (BM/TM) * (BN/TN) == VKF_WORKGROUP_SIZE, which divides BM*BK and
// BN*BK and is a multiple of BK and BN), VKF_POINTWISE (0/1: 1x1 window, stride 1, no pads, so B is X's
// [CG, H*W] planes and column p of an image reads X at p).
#extension GL_EXT_control_flow_attributes : enable

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

#define VKF_THREADS uint(VKF_WORKGROUP_SIZE)
#define VKF_THREADS_M (VKF_BM / VKF_TM)
#define VKF_THREADS_N (VKF_BN / VKF_TN)
#define VKF_OHW (VKF_OH * VKF_OW)
#define VKF_HW uint(VKF_H * VKF_W)
#define VKF_KHW uint(VKF_KH * VKF_KW)

// A is stored k-major (each k's BM rows side by side) with one word of padding per k: the stores write
// a column of k's at a time, which would otherwise all hit one bank.
shared float vkf_a[VKF_BK][VKF_BM + 1u];
shared float vkf_b[VKF_BK][VKF_BN];

#define VKF_A_LOADS (VKF_BM * VKF_BK / VKF_THREADS)
#define VKF_B_LOADS (VKF_BN * VKF_BK / VKF_THREADS)

// Where this invocation's loads come from, fixed over the K steps. A: column a_k of tile rows
// a_m + i * (THREADS / BK); B: column b_n of tile rows b_k + i * (THREADS / BN); neighbouring
// invocations load neighbouring words of W and of X.
struct VkfFetch {
  uint a_k, a_m, b_k;
  uint w_rows;      // W offset of the tile's first row
  uint rows_left;   // MG - the tile's first row
  bool col_inside;  // the B column is a real output position
  uint x_col;       // X offset of the column's image and group (pointwise: plus the column's position)
  int ih0, iw0;     // the column's window corner in X
};

// The A and B values of K step k0 that this invocation stages (zero past the edges and in the pads).
void vkf_fetch(const VkfFetch f, const uint k0, out float a[VKF_A_LOADS], out float b[VKF_B_LOADS]) {
  const uint ka = k0 + f.a_k;
  [[unroll]] for (uint i = 0u; i < VKF_A_LOADS; ++i) {
    const uint m = f.a_m + i * (VKF_THREADS / VKF_BK);
    a[i] = 0.0;
    if (m < f.rows_left && ka < VKF_GEMM_K) a[i] = VKF_IN1(f.w_rows + m * VKF_GEMM_K + ka);
  }
  [[unroll]] for (uint i = 0u; i < VKF_B_LOADS; ++i) {
    const uint k = k0 + f.b_k + i * (VKF_THREADS / VKF_BN);
    b[i] = 0.0;
    if (f.col_inside && k < VKF_GEMM_K) {
#if VKF_POINTWISE
      b[i] = VKF_IN0(f.x_col + k * VKF_HW);
#else
      const uint ci = k / VKF_KHW, tap = k % VKF_KHW;
      const int ih = f.ih0 + int(tap / uint(VKF_KW)) * VKF_DH;
      const int iw = f.iw0 + int(tap % uint(VKF_KW)) * VKF_DW;
      if (uint(ih) < uint(VKF_H) && uint(iw) < uint(VKF_W)) b[i] = VKF_IN0(f.x_col + ci * VKF_HW + uint(ih * VKF_W + iw));
#endif
    }
  }
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint tx = tid % VKF_THREADS_N, ty = tid / VKF_THREADS_N;
  const uint g = gl_WorkGroupID.z;
  const uint m0 = gl_WorkGroupID.y * VKF_BM;
  const uint b_n = tid % VKF_BN;
  VkfFetch f;
  f.a_k = tid % VKF_BK;
  f.a_m = tid / VKF_BK;
  f.b_k = tid / VKF_BN;
  f.w_rows = (g * VKF_MG + m0) * VKF_GEMM_K;
  f.rows_left = VKF_MG - m0;
  for (uint tile = gl_WorkGroupID.x; tile < VKF_TILES_N; tile += gl_NumWorkGroups.x) {
    const uint n0 = tile * VKF_BN;
    const uint col = n0 + b_n;
    f.col_inside = col < VKF_GEMM_N;
    const uint image = col / VKF_OHW, p = col % VKF_OHW;
#if VKF_POINTWISE
    f.x_col = (image * VKF_C + g * VKF_CG) * VKF_HW + p;
    f.ih0 = 0;
    f.iw0 = 0;
#else
    f.x_col = (image * VKF_C + g * VKF_CG) * VKF_HW;
    f.ih0 = int(p / VKF_OW) * VKF_SH - VKF_PT;
    f.iw0 = int(p % VKF_OW) * VKF_SW - VKF_PL;
#endif

    float acc[VKF_TM][VKF_TN];
    [[unroll]] for (uint i = 0u; i < VKF_TM; ++i)
      [[unroll]] for (uint j = 0u; j < VKF_TN; ++j) acc[i][j] = 0.0;

    // Software pipelining: the next step's loads are issued before this step's multiply, so their
    // latency hides behind it.
    float a_next[VKF_A_LOADS], b_next[VKF_B_LOADS];
    vkf_fetch(f, 0u, a_next, b_next);
    for (uint k0 = 0u; k0 < VKF_GEMM_K; k0 += VKF_BK) {
      [[unroll]] for (uint i = 0u; i < VKF_A_LOADS; ++i) vkf_a[f.a_k][f.a_m + i * (VKF_THREADS / VKF_BK)] = a_next[i];
      [[unroll]] for (uint i = 0u; i < VKF_B_LOADS; ++i) vkf_b[f.b_k + i * (VKF_THREADS / VKF_BN)][b_n] = b_next[i];
      barrier();
      if (k0 + VKF_BK < VKF_GEMM_K) vkf_fetch(f, k0 + VKF_BK, a_next, b_next);
      [[unroll]] for (uint k = 0u; k < VKF_BK; ++k) {
        float a[VKF_TM], b[VKF_TN];
        [[unroll]] for (uint i = 0u; i < VKF_TM; ++i) a[i] = vkf_a[k][ty + i * VKF_THREADS_M];
        [[unroll]] for (uint j = 0u; j < VKF_TN; ++j) b[j] = vkf_b[k][tx + j * VKF_THREADS_N];
        [[unroll]] for (uint i = 0u; i < VKF_TM; ++i)
          [[unroll]] for (uint j = 0u; j < VKF_TN; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
      }
      barrier();  // the next step overwrites the tiles
    }

    [[unroll]] for (uint j = 0u; j < VKF_TN; ++j) {
      const uint n = n0 + tx + j * VKF_THREADS_N;
      if (n >= VKF_GEMM_N) continue;
      const uint out_col = (n / VKF_OHW) * VKF_M * VKF_OHW + n % VKF_OHW;
      [[unroll]] for (uint i = 0u; i < VKF_TM; ++i) {
        const uint m = m0 + ty + i * VKF_THREADS_M;
        if (m >= VKF_MG) continue;
        const uint channel = g * VKF_MG + m;
        float y = acc[i][j];
#if VKF_HAS_BIAS
        y += VKF_IN2(channel);
#endif
        VKF_OUT0(out_col + channel * VKF_OHW, y);
      }
    }
  }
}
