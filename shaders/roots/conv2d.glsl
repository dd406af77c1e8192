// Conv root, implicit GEMM (2-D, NCHW; every Conv whose groups have more than one input channel). Per
// group g the convolution is the matrix product
//   Y[n, g*MG + m, oh, ow] = sum_k W[g*MG + m, k] * X'[k, (n, oh, ow)],   k = (ci, kh, kw),
// with A = W (rows contiguous in k) and B = X' the im2col matrix, which is never stored: each B tile is
// gathered from X with the pad / stride / dilation index math, zero outside the input.
// Workgroup (x, y, z) = (column tile, row tile, group); x strides over the column tiles when there are
// more than the device's workgroup count. Each step stages a BK slice of the BM x BN block's A and B in
// shared memory as fragments of FM (A) and FN (B) floats (vec4, or vec2 for 2-wide micro-tiles); each
// invocation keeps a TM x TN micro-tile of fp32 accumulators in registers, its rows and columns in runs
// of FM / FN spread over the block (ty*FM + i%FM + (i/FM) * FM*BM/TM): a k reads TM/FM + TN/FN fragments
// (LDS.128 / LDS.64) for TM*TN FMAs, neighbouring invocations read neighbouring fragments (no bank
// conflicts; the A reads are broadcasts within a warp).
// Split K (VKF_SPLIT_K = S > 1): the workgroup is S slices of (BM/TM) * (BN/TN) invocations; all of them
// load the staged slices, slice s multiplies k's s*BK/S .. (s+1)*BK/S - 1 of each, and slices 1.. hand
// their partial sums to slice 0 through shared memory, which adds them and stores. Small batch-1 layers
// (7x7, 14x14) then keep S times more invocations busy on the same blocks.
// Split K across workgroups (VKF_SPLIT_GROUPS = G > 1): G workgroups share each block, workgroup p
// walking k's p*VKF_K_PART .. (p+1)*VKF_K_PART - 1 (whole BK steps, none empty). Each leaves its partial
// sums in vkf_split_partials and counts itself in the block's counter (VKF_SPLIT_ARRIVE); the last
// to arrive adds the G parts in part order (the same sum whichever arrives last), stores, and sets the
// counter back to zero for the next dispatch (as roots/gemm_tiled.glsl). Layers whose blocks are fewer
// than the GPU's SMs (7x7 outputs) then walk their long K on G times more workgroups.
// The B gather walks k incrementally: each invocation keeps (ci, kh, kw) of its B rows and advances them
// by BK per step (constants), so there is no division by the window size inside the K loop.
// Every output is stored once, by VKF_OUT0, with its bias added (by VKF_OUT0_X4, four neighbouring
// positions at a time, where the column fragments are vec4s and an image's positions a multiple of 4).
// With VKF_PLANE_SUMS (one image; the group sums the result over each plane: a network's final
// pooling; a workgroup of at least BM), a plane is a row: the block folds what each row stores,
// invocation r row r, and where the columns span several
// tiles (VKF_PLANE_COUNTERS defined) each tile leaves its row sums in the split scratch (floats from
// VKF_PLANE_PARTIALS) and counts itself in the block's counter (VKF_PLANE_COUNTERS + block); the last to
// arrive adds the tiles' sums in tile order (the same sum whichever arrives last) and stores the planes.
// Defines (u: uint, else int): VKF_N u, VKF_C u, VKF_H, VKF_W, VKF_M u, VKF_OH u, VKF_OW u, VKF_CG u
// (input channels per group), VKF_MG u (output channels per group), VKF_KH, VKF_KW, VKF_SH, VKF_SW,
// VKF_DH, VKF_DW, VKF_PT, VKF_PL (top and left pads), VKF_HAS_BIAS (0/1; the bias is input 2);
// VKF_GEMM_N u (N*OH*OW), VKF_GEMM_K u (CG*KH*KW), VKF_TILES_N u (column tiles), VKF_BM, VKF_BN, VKF_BK,
// VKF_TM, VKF_TN (tile shape, uint; TM and TN even), VKF_FRAG_M, VKF_FRAG_N (4 where TM / TN is a
// multiple of 4, else 2), VKF_SPLIT_K (slices, dividing BK; (BM/TM) * (BN/TN) * VKF_SPLIT_K ==
// VKF_WORKGROUP_SIZE, which divides BM*BK and BN*BK and is a multiple of BK and BN), VKF_POINTWISE (0/1:
// 1x1 window, stride 1, no pads, so B is X's [CG, H*W] planes and column p of an image reads X at p),
// VKF_SPLIT_GROUPS and VKF_K_PART (1 and any multiple of VKF_BK at least VKF_GEMM_K without split K
// across workgroups); optional VKF_B_VEC 4 (pointwise, H*W a multiple of 4, BN a multiple of 4) with
// VKF_B_FEW_LOADERS (0/1: BN*BK/4 is fewer than the workgroup's invocations), where the group may give
// X four elements at a time as VKF_IN0_X4(i) (a vec4; i a multiple of 4), and VKF_IN0_X4_SHARED where
// that form loads an operand of its chain once for the four.
#extension GL_EXT_control_flow_attributes : enable

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

#define VKF_THREADS uint(VKF_WORKGROUP_SIZE)  // all slices: they share the loads
#define VKF_THREADS_M (VKF_BM / VKF_TM)
#define VKF_THREADS_N (VKF_BN / VKF_TN)
#define VKF_SLICE_THREADS (VKF_THREADS_M * VKF_THREADS_N)
#define VKF_SLICE_K (VKF_BK / uint(VKF_SPLIT_K))  // k's of each staged slice one invocation multiplies
#define VKF_FM uint(VKF_FRAG_M)
#define VKF_FN uint(VKF_FRAG_N)
#if VKF_FRAG_M == 4
#define vkf_frag_a vec4
#else
#define vkf_frag_a vec2
#endif
#if VKF_FRAG_N == 4
#define vkf_frag_b vec4
#else
#define vkf_frag_b vec2
#endif
#define VKF_OHW (VKF_OH * VKF_OW)
#define VKF_HW uint(VKF_H * VKF_W)
#define VKF_KHW uint(VKF_KH * VKF_KW)

// A is stored k-major (each k's BM rows side by side) with one fragment of padding per k, which spreads
// the stores (a column of k's at a time) over the banks; B rows are stored as loaded (neighbouring
// columns).
#define VKF_ROW_A (VKF_BM / VKF_FM + 1u)
#define VKF_ROW_B (VKF_BN / VKF_FN)
shared vkf_frag_a vkf_a[VKF_BK * VKF_ROW_A];
shared vkf_frag_b vkf_b[VKF_BK * VKF_ROW_B];
#if VKF_SPLIT_K > 1
// Slices 1.. leave their partial sums here for slice 0: element e of slice s's invocation `lane` at
// ((s - 1) * TM*TN + e) * SLICE_THREADS + lane (neighbouring invocations, neighbouring words).
shared float vkf_partial[uint(VKF_SPLIT_K - 1) * VKF_TM * VKF_TN * VKF_SLICE_THREADS];
#endif
#if defined(VKF_PLANE_SUMS)
// Each row's sums of the block, one per invocation along the row (slice 0's).
shared float vkf_plane_part[VKF_BM * VKF_THREADS_N];
#endif

// B four columns at a time (VKF_B_VEC 4: pointwise, planes a multiple of 4 long; and the group gives
// X as VKF_IN0_X4): a vec4 load of X, and where a chain runs in the loads, its per-channel operands
// loaded once for the four (VKF_IN0_X4_SHARED). Where BN*BK/4 is fewer than the invocations
// (VKF_B_FEW_LOADERS 1), only that many would stage B: only X with shared operands goes by fours then.
// Padding each staged row of B against bank conflicts moved nothing (docs/tuning-log.md, "VKF_B_VEC").
#if defined(VKF_B_VEC) && VKF_B_VEC == 4 && defined(VKF_IN0_X4) && (VKF_B_FEW_LOADERS == 0 || defined(VKF_IN0_X4_SHARED))
#define VKF_B_X4 1
#define VKF_B_LANES 4u
#define vkf_b_fetch vec4
#if VKF_B_FEW_LOADERS
#define VKF_B_LOADERS (VKF_BN * VKF_BK / 4u)  // invocations that stage B
#define VKF_B_STAGES(tid) ((tid) < VKF_B_LOADERS)
#endif
#else
#define VKF_B_X4 0
#define VKF_B_LANES 1u
#define vkf_b_fetch float
#endif
#define VKF_A_LOADS (VKF_BM * VKF_BK / VKF_THREADS)
#define VKF_A_STEP (VKF_THREADS / VKF_BK)  // tile rows between one invocation's A loads
#define VKF_B_COLS (VKF_BN / VKF_B_LANES)  // invocations along a staged B row
#if !defined(VKF_B_LOADERS)
#define VKF_B_LOADERS VKF_THREADS
#define VKF_B_STAGES(tid) true
#endif
#define VKF_B_LOADS (VKF_BN * VKF_BK / VKF_B_LANES / VKF_B_LOADERS)  // B loads of each of them
#define VKF_B_STEP (VKF_B_LOADERS / VKF_B_COLS)  // k's between one invocation's B loads

// Where this invocation's loads come from. A: column a_k of tile rows a_m + i * A_STEP; B: columns b_n ..
// b_n + B_LANES - 1 of rows k0 + b_k + i * B_STEP, whose (ci, kh, kw) are kept in ci/kh/kw and advanced
// by BK per step.
// Neighbouring invocations load neighbouring words of W and of X.
struct VkfFetch {
  uint a_k, a_m;
  uint w_rows;      // W offset of the tile's first row
  uint rows_left;   // MG - the tile's first row
  bool col_inside;  // the B columns are real output positions (and this invocation stages B)
  uint x_col;       // X offset of the column's image and group (pointwise: plus the column's position)
  int ih0, iw0;     // the column's window corner in X
  uint ci[VKF_B_LOADS];
  int kh[VKF_B_LOADS], kw[VKF_B_LOADS];
};

// BK as a step of (ci, kh, kw): BK = VKF_BK_CI * KH*KW + VKF_BK_KH * KW + VKF_BK_KW.
#define VKF_BK_CI (VKF_BK / VKF_KHW)
#define VKF_BK_KH int((VKF_BK % VKF_KHW) / uint(VKF_KW))
#define VKF_BK_KW int((VKF_BK % VKF_KHW) % uint(VKF_KW))

// The A and B values of K step k0 that this invocation stages (zero past the edges and in the pads).
void vkf_fetch(const VkfFetch f, const uint k0, out float a[VKF_A_LOADS], out vkf_b_fetch b[VKF_B_LOADS]) {
  const uint ka = k0 + f.a_k;
  [[unroll]] for (uint i = 0u; i < VKF_A_LOADS; ++i) {
    const uint m = f.a_m + i * VKF_A_STEP;
    a[i] = 0.0;
    if (m < f.rows_left && ka < VKF_GEMM_K) a[i] = VKF_IN1(f.w_rows + m * VKF_GEMM_K + ka);
  }
  [[unroll]] for (uint i = 0u; i < VKF_B_LOADS; ++i) {
    b[i] = vkf_b_fetch(0.0);
#if VKF_B_X4
    if (f.col_inside && f.ci[i] < VKF_CG) b[i] = VKF_IN0_X4(f.x_col + f.ci[i] * VKF_HW);
#elif VKF_POINTWISE
    if (f.col_inside && f.ci[i] < VKF_CG) b[i] = VKF_IN0(f.x_col + f.ci[i] * VKF_HW);
#else
    const int ih = f.ih0 + f.kh[i] * VKF_DH, iw = f.iw0 + f.kw[i] * VKF_DW;
    if (f.col_inside && f.ci[i] < VKF_CG && uint(ih) < uint(VKF_H) && uint(iw) < uint(VKF_W))
      b[i] = VKF_IN0(f.x_col + f.ci[i] * VKF_HW + uint(ih * VKF_W + iw));
#endif
  }
}

// Moves the B rows one K step on.
void vkf_advance(inout VkfFetch f) {
  [[unroll]] for (uint i = 0u; i < VKF_B_LOADS; ++i) {
    int kw = f.kw[i] + VKF_BK_KW, kh = f.kh[i] + VKF_BK_KH;
    uint ci = f.ci[i] + VKF_BK_CI;
    if (kw >= VKF_KW) {
      kw -= VKF_KW;
      ++kh;
    }
    if (kh >= VKF_KH) {
      kh -= VKF_KH;
      ++ci;
    }
    f.ci[i] = ci;
    f.kh[i] = kh;
    f.kw[i] = kw;
  }
}

// Column n's first element in Y (image n / OHW, position n % OHW) and row i of the block of the
// invocation at (tx, ty) of the tile at row m0.
#define VKF_OUT_COL(n) (((n) / VKF_OHW) * VKF_M * VKF_OHW + (n) % VKF_OHW)
#define VKF_BLOCK_ROW(i) (m0 + ((i) / VKF_FM) * (VKF_THREADS_M * VKF_FM) + ty * VKF_FM + (i) % VKF_FM)

// Stores the block's outputs one at a time through VKF_OUT0, the bias added; where the group sums
// planes, row_sum[i] is what row i stored (vkf_plane_acc).
void vkf_store_scalars(const vkf_frag_b acc[VKF_TM][VKF_TN / VKF_FN], uint g, uint m0, uint n0, uint tx, uint ty,
                       out float row_sum[VKF_TM]) {
  [[unroll]] for (uint i = 0u; i < VKF_TM; ++i) row_sum[i] = 0.0;
  [[unroll]] for (uint j = 0u; j < VKF_TN; ++j) {
    const uint n = n0 + (j / VKF_FN) * (VKF_THREADS_N * VKF_FN) + tx * VKF_FN + j % VKF_FN;
    if (n >= VKF_GEMM_N) continue;
    const uint out_col = VKF_OUT_COL(n);
    [[unroll]] for (uint i = 0u; i < VKF_TM; ++i) {
      const uint m = VKF_BLOCK_ROW(i);
      if (m >= VKF_MG) continue;
      const uint channel = g * VKF_MG + m;
      float y = acc[i][j / VKF_FN][j % VKF_FN];
#if VKF_HAS_BIAS
      y += VKF_IN2(channel);
#endif
#if defined(VKF_PLANE_SUMS)
      vkf_plane_acc = 0.0;  // what this store adds to its plane
#endif
      VKF_OUT0(out_col + channel * VKF_OHW, y);
#if defined(VKF_PLANE_SUMS)
      row_sum[i] += vkf_plane_acc;
#endif
    }
  }
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint slice = tid / VKF_SLICE_THREADS, lane = tid % VKF_SLICE_THREADS;
  // Where the column fragments are vec4s and a slice is a multiple of 8 invocations wide and of 4 high, a warp
  // is a 4 x 8 block of invocations: each k's reads of B are 8 vec4s, one 128-byte wavefront, where a
  // row of 16 invocations would take two. Vec2 fragments fit one wavefront either way and keep whole
  // rows (docs/tuning-log.md, "warp_blocks").
  const bool warp_blocks = VKF_FN == 4u && VKF_THREADS_N % 8u == 0u && VKF_THREADS_M % 4u == 0u &&
                           VKF_SLICE_THREADS % 32u == 0u;
  const uint warp = lane / 32u, in_warp = lane % 32u, warps_n = max(VKF_THREADS_N / 8u, 1u);
  const uint tx = warp_blocks ? (warp % warps_n) * 8u + in_warp % 8u : lane % VKF_THREADS_N;
  const uint ty = warp_blocks ? (warp / warps_n) * 4u + in_warp / 8u : lane / VKF_THREADS_N;
  const uint g = gl_WorkGroupID.z;
  const uint m0 = gl_WorkGroupID.y * VKF_BM;
  const uint b_n = (tid % VKF_B_COLS) * VKF_B_LANES, b_k = tid / VKF_B_COLS;
  VkfFetch f;
  f.a_k = tid % VKF_BK;
  f.a_m = tid / VKF_BK;
  f.w_rows = (g * VKF_MG + m0) * VKF_GEMM_K;
  f.rows_left = VKF_MG - m0;
  for (uint t = gl_WorkGroupID.x; t < VKF_TILES_N * uint(VKF_SPLIT_GROUPS); t += gl_NumWorkGroups.x) {
    VKF_SPLIT_PART(tile, t, VKF_GEMM_K);  // the column tile; part, k_begin, k_end
    const uint n0 = tile * VKF_BN;
    const uint col = n0 + b_n;
    f.col_inside = VKF_B_STAGES(tid) && col < VKF_GEMM_N;  // (with B_X4, all four columns or none)
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
    [[unroll]] for (uint i = 0u; i < VKF_B_LOADS; ++i) {
      const uint k = k_begin + b_k + i * VKF_B_STEP, tap = k % VKF_KHW;
      f.ci[i] = k / VKF_KHW;
      f.kh[i] = int(tap / uint(VKF_KW));
      f.kw[i] = int(tap % uint(VKF_KW));
    }

    vkf_frag_b acc[VKF_TM][VKF_TN / VKF_FN];
    [[unroll]] for (uint i = 0u; i < VKF_TM; ++i)
      [[unroll]] for (uint j = 0u; j < VKF_TN / VKF_FN; ++j) acc[i][j] = vkf_frag_b(0.0);

    // Software pipelining: the next step's loads are issued before this step's multiply, so their
    // latency hides behind it.
    float a_next[VKF_A_LOADS];
    vkf_b_fetch b_next[VKF_B_LOADS];
    vkf_fetch(f, k_begin, a_next, b_next);
    for (uint k0 = k_begin; k0 < k_end; k0 += VKF_BK) {
      [[unroll]] for (uint i = 0u; i < VKF_A_LOADS; ++i) {
        const uint m = f.a_m + i * VKF_A_STEP;
        vkf_a[f.a_k * VKF_ROW_A + m / VKF_FM][m % VKF_FM] = a_next[i];
      }
      if (VKF_B_STAGES(tid)) {
        [[unroll]] for (uint i = 0u; i < VKF_B_LOADS; ++i) {
          const uint at = (b_k + i * VKF_B_STEP) * VKF_ROW_B + b_n / VKF_FN;
#if VKF_B_X4 && VKF_FRAG_N == 4
          vkf_b[at] = b_next[i];
#elif VKF_B_X4
          vkf_b[at] = b_next[i].xy;
          vkf_b[at + 1u] = b_next[i].zw;
#else
          vkf_b[at][b_n % VKF_FN] = b_next[i];
#endif
        }
      }
      barrier();
      if (k0 + VKF_BK < k_end) {
        vkf_advance(f);
        vkf_fetch(f, k0 + VKF_BK, a_next, b_next);
      }
      [[unroll]] for (uint kk = 0u; kk < VKF_SLICE_K; ++kk) {
        const uint k = slice * VKF_SLICE_K + kk;
        vkf_frag_a a[VKF_TM / VKF_FM];
        vkf_frag_b b[VKF_TN / VKF_FN];
        [[unroll]] for (uint c = 0u; c < VKF_TM / VKF_FM; ++c) a[c] = vkf_a[k * VKF_ROW_A + c * VKF_THREADS_M + ty];
        [[unroll]] for (uint c = 0u; c < VKF_TN / VKF_FN; ++c) b[c] = vkf_b[k * VKF_ROW_B + c * VKF_THREADS_N + tx];
        [[unroll]] for (uint i = 0u; i < VKF_TM; ++i)
          [[unroll]] for (uint j = 0u; j < VKF_TN / VKF_FN; ++j)
            acc[i][j] = fma(vkf_frag_b(a[i / VKF_FM][i % VKF_FM]), b[j], acc[i][j]);
      }
      barrier();  // the next step overwrites the tiles
    }

#if VKF_SPLIT_K > 1
    // Slice 0 adds the other slices' partial sums. Slices 1.. write the next tile's partials only after
    // its K loop's barriers, which slice 0 reaches after these reads.
    if (slice > 0u) {
      [[unroll]] for (uint i = 0u; i < VKF_TM; ++i)
        [[unroll]] for (uint j = 0u; j < VKF_TN; ++j)
          vkf_partial[((slice - 1u) * VKF_TM * VKF_TN + i * VKF_TN + j) * VKF_SLICE_THREADS + lane] = acc[i][j / VKF_FN][j % VKF_FN];
    }
    barrier();
    if (slice == 0u) {
      [[unroll]] for (uint s = 1u; s < uint(VKF_SPLIT_K); ++s)
        [[unroll]] for (uint i = 0u; i < VKF_TM; ++i)
          [[unroll]] for (uint j = 0u; j < VKF_TN; ++j)
            acc[i][j / VKF_FN][j % VKF_FN] += vkf_partial[((s - 1u) * VKF_TM * VKF_TN + i * VKF_TN + j) * VKF_SLICE_THREADS + lane];
    }
#endif

#if VKF_SPLIT_GROUPS > 1
    // This part's sums -> memory (vec4 q of invocation `lane` at q * SLICE_THREADS + lane of the part's
    // block); the writes reach the device before the count that announces them.
    const uint kPartVec4s = VKF_BM * VKF_BN / 4u;
    const uint item = (g * gl_NumWorkGroups.y + gl_WorkGroupID.y) * VKF_TILES_N + tile;
    const uint tile_partials = item * uint(VKF_SPLIT_GROUPS) * kPartVec4s;
    if (slice == 0u) {
      [[unroll]] for (uint q = 0u; q < VKF_TM * VKF_TN / 4u; ++q) {
        vec4 v;
        [[unroll]] for (uint c = 0u; c < 4u; ++c) {
          const uint i = (4u * q + c) / VKF_TN, j = (4u * q + c) % VKF_TN;
          v[c] = acc[i][j / VKF_FN][j % VKF_FN];
        }
        vkf_split_partials.d[tile_partials + part * kPartVec4s + q * VKF_SLICE_THREADS + lane] = v;
      }
    }
    VKF_SPLIT_ARRIVE(item, uint(VKF_SPLIT_GROUPS));
    if (!vkf_split_last) continue;  // uniform: the block's last workgroup adds and stores
    if (slice == 0u) {
      [[unroll]] for (uint i = 0u; i < VKF_TM; ++i)
        [[unroll]] for (uint j = 0u; j < VKF_TN / VKF_FN; ++j) acc[i][j] = vkf_frag_b(0.0);
      for (uint p = 0u; p < uint(VKF_SPLIT_GROUPS); ++p)
        [[unroll]] for (uint q = 0u; q < VKF_TM * VKF_TN / 4u; ++q) {
          const vec4 v = vkf_split_partials.d[tile_partials + p * kPartVec4s + q * VKF_SLICE_THREADS + lane];
          [[unroll]] for (uint c = 0u; c < 4u; ++c) {
            const uint i = (4u * q + c) / VKF_TN, j = (4u * q + c) % VKF_TN;
            acc[i][j / VKF_FN][j % VKF_FN] += v[c];
          }
        }
    }
#endif
#if defined(VKF_PLANE_SUMS)
    // Plane sums (one image: a plane is a row of the block). Slice 0 stores element by element and
    // sums what each row stores (vkf_plane_acc); the block's invocations fold their row sums in shared
    // memory in a fixed order; with several column tiles each leaves its sums in the scratch and the
    // last of the block's tiles to arrive adds them in tile order. Every invocation reaches the barriers.
    if (slice == 0u) {
      float row_sum[VKF_TM];
      vkf_store_scalars(acc, g, m0, n0, tx, ty, row_sum);
      [[unroll]] for (uint i = 0u; i < VKF_TM; ++i) vkf_plane_part[(VKF_BLOCK_ROW(i) - m0) * VKF_THREADS_N + tx] = row_sum[i];
    }
    barrier();
    float tile_sum = 0.0;
    if (tid < VKF_BM)
      for (uint x = 0u; x < VKF_THREADS_N; ++x) tile_sum += vkf_plane_part[tid * VKF_THREADS_N + x];
    const bool row_inside = tid < VKF_BM && m0 + tid < VKF_MG;
#if !defined(VKF_PLANE_COUNTERS)  // one column tile
    if (row_inside) vkf_plane_store(g * VKF_MG + m0 + tid, tile_sum);
#else
    const uint block = g * gl_NumWorkGroups.y + gl_WorkGroupID.y;
    const uint block_sums = VKF_PLANE_PARTIALS + block * VKF_TILES_N * VKF_BM;
    if (tid < VKF_BM) vkf_split_partials_f.d[block_sums + tile * VKF_BM + tid] = tile_sum;
    VKF_SPLIT_ARRIVE(VKF_PLANE_COUNTERS + block, VKF_TILES_N);
    if (vkf_split_last && row_inside) {
      float sum = 0.0;
      for (uint q = 0u; q < VKF_TILES_N; ++q) sum += vkf_split_partials_f.d[block_sums + q * VKF_BM + tid];
      vkf_plane_store(g * VKF_MG + m0 + tid, sum);
    }
#endif
    barrier();  // vkf_plane_part is refilled by the next tile
#else
    if (slice > 0u) continue;
#if VKF_FRAG_N == 4
    if (VKF_OHW % 4u == 0u) {
      // An invocation's runs of 4 columns are 4 neighbouring positions of one image: vector stores (and
      // vector loads of the post chain's inputs).
      [[unroll]] for (uint j = 0u; j < VKF_TN / 4u; ++j) {
        const uint n = n0 + j * (VKF_THREADS_N * 4u) + tx * 4u;
        if (n >= VKF_GEMM_N) continue;
        const uint out_col = VKF_OUT_COL(n);
        [[unroll]] for (uint i = 0u; i < VKF_TM; ++i) {
          const uint m = VKF_BLOCK_ROW(i);
          if (m >= VKF_MG) continue;
          const uint channel = g * VKF_MG + m;
          vec4 y = acc[i][j];
#if VKF_HAS_BIAS
          y += vec4(VKF_IN2(channel));
#endif
          VKF_OUT0_X4(out_col + channel * VKF_OHW, y);
        }
      }
      continue;
    }
#endif
    float row_sum[VKF_TM];  // (no plane sums here)
    vkf_store_scalars(acc, g, m0, n0, tx, ty, row_sum);
#endif
  }
}
