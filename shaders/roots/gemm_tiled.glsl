// GEMM root, shared-memory tiled and register blocked: Y[b] = A[b] * B[b] (MatMul; Gemm adds its
// alpha / beta * C through VKF_GEMM_VALUE). A workgroup computes VKF_BM x VKF_BN output tiles (looping
// when the grid is clamped to the device), walking K in VKF_BK steps: each step's slices of A and B go
// global -> registers -> shared memory, A stored k-major (transposed on the way) so that an invocation
// reads its rows, like its columns, as vec4s; rows of VKF_BM + 4 floats, and runs of at most 8 k per
// row where an operand is loaded along K, keep the stores free of bank conflicts whichever way the
// loads run. Each invocation accumulates a VKF_TM x VKF_TN block in fp32
// registers, its rows and columns in groups of 4 spread over the tile (conflict-free vec4 reads). Where a
// slice is a multiple of 8 invocations wide and of 4 high, a warp is a 4 x 8 block of them (4 rows of A and 8
// columns of B per k: every read one 128-byte wavefront) instead of 2 x 16 (16 columns: two wavefronts
// for each read of B) (docs/tuning-log.md, "gemm_tiled warp blocks").
// With VKF_STAGES 2 the next slices are loaded from memory while the current ones are multiplied, one
// barrier per step. Elements past M, N, K load as zero and stores are guarded; every output element is
// written once, with its final value, through VKF_OUT0 (VKF_OUT0_X4, four at a time, where N is a
// multiple of 4).
// Split K (VKF_SPLIT_K = S > 1): the workgroup is S slices of (BM/TM) * (BN/TN) invocations; all of them
// load and stage the slices, slice s multiplies k's s*BK/S .. (s+1)*BK/S - 1 of each staged slice, and
// slices 1.. hand their partial sums to slice 0 through shared memory, which adds them and stores
// (mirrors roots/conv2d.glsl). Products too small to fill the GPU with tiles (batch-1 transformer
// layers) then keep S times more invocations busy on the same tiles.
// Split K across workgroups (VKF_SPLIT_GROUPS = G > 1): G workgroups share each tile, workgroup p walking
// k's p*VKF_K_PART .. (p+1)*VKF_K_PART - 1 (whole VKF_BK steps; the host makes every part non-empty).
// Each leaves its partial sums in vkf_split_partials and counts itself in the tile's counter
// (VKF_SPLIT_ARRIVE, declared with the scratch by the code generator); the last to arrive adds the G
// partials in part order (the same sum whichever arrives last), stores through VKF_OUT0 and sets the
// counter back to zero for the next dispatch.
// A long K is then walked by G times more workgroups at once.
//
// Defines (host/ops/kernel_support.cpp, gemm_launch): VKF_BATCH, VKF_M, VKF_N, VKF_K; VKF_A_BATCH(b),
// VKF_B_BATCH(b) (element offsets of batch b's matrices); element (m, k) of A at VKF_A_STRIDE_M * m +
// VKF_A_STRIDE_K * k, (k, n) of B at VKF_B_STRIDE_K * k + VKF_B_STRIDE_N * n; VKF_A_K_FAST and
// VKF_B_N_FAST (1 when that stride is 1: consecutive invocations then load consecutive elements);
// VKF_BM, VKF_BN, VKF_BK, VKF_TM, VKF_TN (multiples of 4), VKF_STAGES (1 or 2), VKF_TILES_M,
// VKF_TILES_N; VKF_SPLIT_K (1, 2 or 4, dividing VKF_BK; VKF_WORKGROUP_SIZE == (BM/TM) * (BN/TN) *
// VKF_SPLIT_K); VKF_SPLIT_GROUPS and VKF_K_PART (1 and any multiple of VKF_BK at least VKF_K without
// split K across workgroups); VKF_GEMM_VALUE(m, n, acc), the value stored for the dot product acc of
// element (m, n), and VKF_GEMM_VALUE4(m, n, acc) for (m, n) .. (m, n + 3); VKF_RAW_INPUTS, VKF_A_VEC4
// and VKF_B_VEC4 (1 where an f32 operand's runs of 4 along its contiguous dimension start 16-byte
// aligned and each invocation's share of a step is whole vec4s: it then loads as vec4s).
// A LayerNorm folded into the product (VKF_ROW_NORM 1: LayerNormMatMul, host/ops/matmul_ops.cpp):
// Y = r * (A' * B - (mean - shift) * C) + Bias, where A' = A - shift, shift a row's first element
// (subtracted as A is staged, its padding being the shift itself, so that it stages as zero), mean and
// r = 1 / sqrt(var + VKF_ROW_NORM_EPSILON) the row's statistics, C and Bias inputs 2 and 3 (vectors of N).
// The shifted rows' sums and sums of squares are taken from what is staged: with VKF_ROW_NORM_SHUFFLE
// (A loaded as vec4s along K) from each invocation's registers, its row's invocations (consecutive
// invocation indices, taken to be neighbouring lanes of one subgroup, as on NVIDIA and lavapipe) adding
// theirs with shuffles; otherwise the first VKF_BM invocations read their rows from
// shared memory each step. Shifted, the sums do not cancel where a row's mean is large against its
// spread (host/passes/fold_layer_norm.h). With K split across workgroups each part leaves its rows' sums
// beside its partial sums and the last to arrive adds them. VKF_GEMM_VALUE applies it:
// vkf_row_norm(vkf_row_stats[m - m0], n, acc).
#extension GL_EXT_control_flow_attributes : enable
#ifndef VKF_ROW_NORM  // (MatMul and Gemm: no LayerNorm)
#define VKF_ROW_NORM 0
#define VKF_ROW_NORM_SHUFFLE 0
#endif
#if VKF_ROW_NORM && VKF_ROW_NORM_SHUFFLE
#extension GL_KHR_shader_subgroup_shuffle : enable
#endif

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

const uint kThreads = uint(VKF_WORKGROUP_SIZE);  // all slices: they share the loads
const uint kThreadsN = VKF_BN / VKF_TN;  // invocations along a tile row of one slice
const uint kThreadsM = VKF_BM / VKF_TM;
const uint kSliceThreads = kThreadsM * kThreadsN;  // kSliceThreads * VKF_SPLIT_K == kThreads
const uint kSliceK = VKF_BK / uint(VKF_SPLIT_K);  // k's of each staged slice one invocation multiplies
// Vector loads: an operand that is a plain tensor (VKF_IN<k>_RAW) the host found aligned (VKF_A_VEC4,
// VKF_B_VEC4) loads 4 neighbouring elements along its contiguous dimension at once (one 16-byte load).
#if defined(VKF_IN0_RAW) && VKF_A_VEC4
#define VKF_A_V 4
#define VKF_A_REG vec4
#else
#define VKF_A_V 1
#define VKF_A_REG float
#endif
#if defined(VKF_IN1_RAW) && VKF_B_VEC4
#define VKF_B_V 4
#define VKF_B_REG vec4
#else
#define VKF_B_V 1
#define VKF_B_REG float
#endif
// A folded LayerNorm's sums taken with shuffles where the device allows them (VKF_ROW_NORM_SHUFFLE) and A
// loads as vec4s along K (an A computed in the loads or bound in chunks loads element by element).
#if VKF_ROW_NORM && VKF_ROW_NORM_SHUFFLE && VKF_A_V == 4 && VKF_A_K_FAST
#define VKF_NORM_SHUFFLED 1
#else
#define VKF_NORM_SHUFFLED 0
#endif
const uint kLoadsA = VKF_BM * VKF_BK / uint(VKF_A_V) / kThreads;  // loads of A each invocation issues per step
const uint kLoadsB = VKF_BK * VKF_BN / uint(VKF_B_V) / kThreads;
const uint kRowA = VKF_BM / 4u + 1u;  // vec4s per k row of the A slice, one of padding
const uint kRowB = VKF_BN / 4u + 1u;
const uint kGroupM = 8u;  // tile rows walked together (see the tile order below)

shared vec4 vkf_sa[VKF_STAGES * VKF_BK * kRowA];
shared vec4 vkf_sb[VKF_STAGES * VKF_BK * kRowB];
#if VKF_SPLIT_K > 1
// Slices 1.. leave their partial sums here for slice 0: vec4 e of slice s's invocation `lane` at
// ((s - 1) * TM*TN/4 + e) * kSliceThreads + lane (neighbouring invocations, neighbouring vec4s).
shared vec4 vkf_partial[uint(VKF_SPLIT_K - 1) * (VKF_TM * VKF_TN / 4u) * kSliceThreads];
#endif

#if VKF_ROW_NORM
shared vec2 vkf_row_stats[VKF_BM];  // per row of the tile: (mean - shift, 1 / sqrt(var + epsilon))
const uint kNormRows = (VKF_BM + kThreads - 1u) / kThreads;  // rows each invocation sums (without shuffles)
// A row's statistics from the sums of its K shifted elements and of their squares.
vec2 vkf_row_moments(vec2 sums) {
  const float mean = sums.x / float(VKF_K);
  const float variance = max(sums.y / float(VKF_K) - mean * mean, 0.0);
  return vec2(mean, inversesqrt(variance + VKF_ROW_NORM_EPSILON));
}
float vkf_row_norm(vec2 stats, uint n, float acc) {
  return stats.y * (acc - stats.x * float(VKF_IN2(n))) + float(VKF_IN3(n));
}
vec4 vkf_row_norm4(vec2 stats, uint n, vec4 acc) {  // columns n .. n + 3
#if VKF_ROW_NORM_VEC4 && defined(VKF_IN2_RAW) && defined(VKF_IN3_RAW)
  const vec4 c = uintBitsToFloat(VKF_IN2_RAW16(n)), bias = uintBitsToFloat(VKF_IN3_RAW16(n));
#else
  const vec4 c = vec4(VKF_IN2(n), VKF_IN2(n + 1u), VKF_IN2(n + 2u), VKF_IN2(n + 3u));
  const vec4 bias = vec4(VKF_IN3(n), VKF_IN3(n + 1u), VKF_IN3(n + 2u), VKF_IN3(n + 3u));
#endif
  return stats.y * (acc - stats.x * c) + bias;
}
#endif

// Slot `i` of this invocation's share of a slice, as (slow, fast) coordinates: consecutive invocations
// take consecutive elements along the `run` of the slice's contiguous dimension.
uvec2 vkf_slot(uint i, uint run) {
  const uint e = gl_LocalInvocationID.x + i * kThreads;
  return uvec2(e / run, e % run);
}
// The same for an operand contiguous along K, as (row, k) of a `rows` x VKF_BK slice stored k-major:
// consecutive invocations take runs of (at most) 8 k, one 32-byte sector, then the next row. A warp then
// stores 8 k of 4 rows: rows of VKF_BM + 4 floats put those 32 elements in 32 different banks (runs of
// 16 k would put k and k + 8 of a row in one bank).
const uint kRunK = min(VKF_BK, 8u);
uvec2 vkf_slot_k(uint i, uint rows) {
  const uint e = gl_LocalInvocationID.x + i * kThreads;
  const uint run = e / kRunK;
  return uvec2(run % rows, (run / rows) * kRunK + e % kRunK);
}
// A unit of a vector load: consecutive invocations take consecutive vec4s along the contiguous dimension.
// Stored k-major with K contiguous (A, or B read along K), a warp's units of an 8-deep slice (16 rows x 2
// vec4s) land in 32 different banks; those of a 16-deep one (8 rows x 4) in two ways per bank.
#if VKF_A_V == 4 && VKF_A_K_FAST
#define VKF_A_SLOT(i) (vkf_slot(i, VKF_BK / 4u) * uvec2(1u, 4u))  // (m, k) of the unit's first element
#elif VKF_A_V == 4
#define VKF_A_SLOT(i) (vkf_slot(i, VKF_BM / 4u).yx * uvec2(4u, 1u))
#elif VKF_A_K_FAST
#define VKF_A_SLOT(i) vkf_slot_k(i, VKF_BM)  // (m, k) within the slice
#else
#define VKF_A_SLOT(i) vkf_slot(i, VKF_BM).yx
#endif
#if VKF_B_V == 4 && VKF_B_N_FAST
#define VKF_B_SLOT(i) (vkf_slot(i, VKF_BN / 4u) * uvec2(1u, 4u))  // (k, n) of the unit's first element
#elif VKF_B_V == 4
#define VKF_B_SLOT(i) (vkf_slot(i, VKF_BK / 4u).yx * uvec2(4u, 1u))
#elif VKF_B_N_FAST
#define VKF_B_SLOT(i) vkf_slot(i, VKF_BN)  // (k, n) within the slice
#else
#define VKF_B_SLOT(i) vkf_slot_k(i, VKF_BN).yx
#endif
#if VKF_A_V == 4
#define VKF_A_FETCH(i) uintBitsToFloat(VKF_IN0_RAW16(i))
#define VKF_A_ZERO vec4(0.0)
#else
#define VKF_A_FETCH(i) VKF_IN0(i)
#define VKF_A_ZERO 0.0
#endif
#if VKF_B_V == 4
#define VKF_B_FETCH(i) uintBitsToFloat(VKF_IN1_RAW16(i))
#define VKF_B_ZERO vec4(0.0)
#else
#define VKF_B_FETCH(i) VKF_IN1(i)
#define VKF_B_ZERO 0.0
#endif
// Registers -> shared memory, A k-major: a unit of 4 along the staged row is one vec4 store, a unit of 4
// k (A with K contiguous, B with K contiguous) four stores down the column.
#if VKF_A_V == 1
#define VKF_A_STAGE(stage, s, r) vkf_sa[((stage) * VKF_BK + s.y) * kRowA + s.x / 4u][s.x % 4u] = r;
#elif VKF_A_K_FAST
#define VKF_A_STAGE(stage, s, r) \
  [[unroll]] for (uint c = 0u; c < 4u; ++c) vkf_sa[((stage) * VKF_BK + s.y + c) * kRowA + s.x / 4u][s.x % 4u] = r[c];
#else
#define VKF_A_STAGE(stage, s, r) vkf_sa[((stage) * VKF_BK + s.y) * kRowA + s.x / 4u] = r;
#endif
// A folded LayerNorm's shift (VKF_ROW_NORM): the value A's padding loads as (staged as zero), and what
// staging does to a loaded unit first.
#if VKF_NORM_SHUFFLED
#define VKF_A_PAD(i) vkf_shift[i]
#define VKF_A_SHIFT(i) ra[i] -= vkf_shift[i]; vkf_sum[i] += dot(ra[i], vec4(1.0)); vkf_squares[i] += dot(ra[i], ra[i]);
#elif VKF_ROW_NORM
#define VKF_A_PAD(i) vkf_shift[i]
#define VKF_A_SHIFT(i) ra[i] -= vkf_shift[i];
#else
#define VKF_A_PAD(i) VKF_A_ZERO
#define VKF_A_SHIFT(i)
#endif
#if VKF_B_V == 1
#define VKF_B_STAGE(stage, s, r) vkf_sb[((stage) * VKF_BK + s.x) * kRowB + s.y / 4u][s.y % 4u] = r;
#elif VKF_B_N_FAST
#define VKF_B_STAGE(stage, s, r) vkf_sb[((stage) * VKF_BK + s.x) * kRowB + s.y / 4u] = r;
#else
#define VKF_B_STAGE(stage, s, r) \
  [[unroll]] for (uint c = 0u; c < 4u; ++c) vkf_sb[((stage) * VKF_BK + s.x + c) * kRowB + s.y / 4u][s.y % 4u] = r[c];
#endif

void main() {
  const uint slice = gl_LocalInvocationID.x / kSliceThreads;  // 0 without split K
  const uint lane = gl_LocalInvocationID.x % kSliceThreads;
  // Invocation `lane` of its slice holds the block (ty, tx) of the slice's kThreadsM x kThreadsN.
  const bool warp_blocks = kThreadsN % 8u == 0u && kThreadsM % 4u == 0u && kSliceThreads % 32u == 0u;
  const uint warp = lane / 32u, in_warp = lane % 32u, warps_n = max(kThreadsN / 8u, 1u);
  const uint tx = warp_blocks ? (warp % warps_n) * 8u + in_warp % 8u : lane % kThreadsN;
  const uint ty = warp_blocks ? (warp / warps_n) * 4u + in_warp / 8u : lane / kThreadsN;
  const uint tiles = VKF_TILES_M * VKF_TILES_N;
  for (uint t = gl_WorkGroupID.x; t < VKF_BATCH * tiles * uint(VKF_SPLIT_GROUPS); t += gl_NumWorkGroups.x) {
    // Tile order: runs of kGroupM tile rows walk N together, so workgroups in flight share their A and
    // B slices in the cache instead of each streaming a whole row of B. The parts of a tile's K follow
    // each other.
    VKF_SPLIT_PART(item, t, VKF_K);  // item = batch * tiles + tile; part, k_begin, k_end
    const uint batch = item / tiles;
    const uint r = item - batch * tiles;
    const uint group = r / (kGroupM * VKF_TILES_N);
    const uint first_row = group * kGroupM;
    const uint group_rows = min(VKF_TILES_M - first_row, kGroupM);
    const uint in_group = r - first_row * VKF_TILES_N;
    const uint m0 = (first_row + in_group % group_rows) * VKF_BM;
    const uint n0 = (in_group / group_rows) * VKF_BN;
    const uint a_base = VKF_A_BATCH(batch);
    const uint b_base = VKF_B_BATCH(batch);

    vec4 acc[VKF_TM][VKF_TN / 4u];
    [[unroll]] for (uint i = 0u; i < VKF_TM; ++i)
      [[unroll]] for (uint j = 0u; j < VKF_TN / 4u; ++j) acc[i][j] = vec4(0.0);

    VKF_A_REG ra[kLoadsA];
    VKF_B_REG rb[kLoadsB];
#if VKF_ROW_NORM
    // A slot's rows stay the same over the K walk: their first elements load once.
    VKF_A_REG vkf_shift[kLoadsA];
    [[unroll]] for (uint i = 0u; i < kLoadsA; ++i) {
      const uint m = m0 + VKF_A_SLOT(i).x;
      vkf_shift[i] = VKF_A_ZERO;
      if (VKF_M % VKF_BM == 0u || m < VKF_M) vkf_shift[i] = VKF_A_FETCH(a_base + m * VKF_A_STRIDE_M);
#if VKF_A_V == 4 && VKF_A_K_FAST
      vkf_shift[i] = vec4(vkf_shift[i].x);  // (the unit's first element is the row's)
#endif
    }
#if VKF_NORM_SHUFFLED
    float vkf_sum[kLoadsA], vkf_squares[kLoadsA];
    [[unroll]] for (uint i = 0u; i < kLoadsA; ++i) vkf_sum[i] = vkf_squares[i] = 0.0;
#else
    float vkf_sum[kNormRows], vkf_squares[kNormRows];
    [[unroll]] for (uint j = 0u; j < kNormRows; ++j) vkf_sum[j] = vkf_squares[j] = 0.0;
#endif
#endif
    // Global -> registers: the slices at k0 (zero past the matrices' edges; the tests below fold away
    // where the size is a multiple of the tile).
#define VKF_LOAD_SLICES(k0)                                                                          \
    [[unroll]] for (uint i = 0u; i < kLoadsA; ++i) {                                                 \
      const uvec2 s = VKF_A_SLOT(i);                                                                 \
      const uint m = m0 + s.x, k = (k0) + s.y;                                                       \
      ra[i] = VKF_A_PAD(i);                                                                          \
      if ((VKF_M % VKF_BM == 0u || m < VKF_M) && (VKF_K % VKF_BK == 0u || k < VKF_K))                \
        ra[i] = VKF_A_FETCH(a_base + m * VKF_A_STRIDE_M + k * VKF_A_STRIDE_K);                       \
    }                                                                                                \
    [[unroll]] for (uint i = 0u; i < kLoadsB; ++i) {                                                 \
      const uvec2 s = VKF_B_SLOT(i);                                                                 \
      const uint k = (k0) + s.x, n = n0 + s.y;                                                       \
      rb[i] = VKF_B_ZERO;                                                                            \
      if ((VKF_K % VKF_BK == 0u || k < VKF_K) && (VKF_N % VKF_BN == 0u || n < VKF_N))                \
        rb[i] = VKF_B_FETCH(b_base + k * VKF_B_STRIDE_K + n * VKF_B_STRIDE_N);                       \
    }
    // Registers -> shared memory buffer `stage`, A transposed to k-major.
#define VKF_STORE_SLICES(stage)                                                                      \
    [[unroll]] for (uint i = 0u; i < kLoadsA; ++i) {                                                 \
      const uvec2 s = VKF_A_SLOT(i);                                                                 \
      VKF_A_SHIFT(i)                                                                                 \
      VKF_A_STAGE(stage, s, ra[i])                                                                   \
    }                                                                                                \
    [[unroll]] for (uint i = 0u; i < kLoadsB; ++i) {                                                 \
      const uvec2 s = VKF_B_SLOT(i);                                                                 \
      VKF_B_STAGE(stage, s, rb[i])                                                                   \
    }

    VKF_LOAD_SLICES(k_begin)
    VKF_STORE_SLICES(0u)
    barrier();
    uint stage = 0u;
    for (uint k0 = k_begin; k0 < k_end; k0 += VKF_BK) {
      const bool more = k0 + VKF_BK < k_end;
      if (more) {
        VKF_LOAD_SLICES(k0 + VKF_BK)  // in flight while this step multiplies
      }
      [[unroll]] for (uint kq = 0u; kq < kSliceK; ++kq) {
        const uint kk = slice * kSliceK + kq;
        vec4 a[VKF_TM / 4u];
        vec4 b[VKF_TN / 4u];
        [[unroll]] for (uint c = 0u; c < VKF_TM / 4u; ++c) a[c] = vkf_sa[(stage * VKF_BK + kk) * kRowA + c * kThreadsM + ty];
        [[unroll]] for (uint c = 0u; c < VKF_TN / 4u; ++c) b[c] = vkf_sb[(stage * VKF_BK + kk) * kRowB + c * kThreadsN + tx];
        [[unroll]] for (uint i = 0u; i < VKF_TM; ++i)
          [[unroll]] for (uint j = 0u; j < VKF_TN / 4u; ++j) acc[i][j] = fma(vec4(a[i / 4u][i % 4u]), b[j], acc[i][j]);
      }
#if VKF_ROW_NORM && !VKF_NORM_SHUFFLED
      [[unroll]] for (uint j = 0u; j < kNormRows; ++j) {
        const uint row = gl_LocalInvocationID.x + j * kThreads;
        if (row < VKF_BM) {
          [[unroll]] for (uint kk = 0u; kk < VKF_BK; ++kk) {
            const float v = vkf_sa[(stage * VKF_BK + kk) * kRowA + row / 4u][row % 4u];
            vkf_sum[j] += v;
            vkf_squares[j] += v * v;
          }
        }
      }
#endif
#if VKF_STAGES == 1
      barrier();  // everyone is done reading the one buffer before it is refilled
#else
      stage ^= 1u;  // the other buffer: last read before the previous step's barrier
#endif
      if (more) {
        VKF_STORE_SLICES(stage)
      }
      barrier();
    }
#undef VKF_LOAD_SLICES
#undef VKF_STORE_SLICES

#if VKF_ROW_NORM
    // Each row's sums (of its shifted elements, of their squares) into vkf_row_stats, then its statistics
    // for the stores (with K split across workgroups, from every part's sums: below). The previous tile's
    // stores read vkf_row_stats before this tile's first barrier.
#if VKF_NORM_SHUFFLED
    [[unroll]] for (uint i = 0u; i < kLoadsA; ++i) {
      [[unroll]] for (uint o = 1u; o < VKF_BK / 4u; o <<= 1u) {
        vkf_sum[i] += subgroupShuffleXor(vkf_sum[i], o);
        vkf_squares[i] += subgroupShuffleXor(vkf_squares[i], o);
      }
      const uvec2 s = VKF_A_SLOT(i);
      if (s.y == 0u) vkf_row_stats[s.x] = vec2(vkf_sum[i], vkf_squares[i]);
    }
#else
    [[unroll]] for (uint j = 0u; j < kNormRows; ++j) {
      const uint row = gl_LocalInvocationID.x + j * kThreads;
      if (row < VKF_BM) vkf_row_stats[row] = vec2(vkf_sum[j], vkf_squares[j]);
    }
#endif
    barrier();
#if VKF_SPLIT_GROUPS == 1
    [[unroll]] for (uint j = 0u; j < kNormRows; ++j) {
      const uint row = gl_LocalInvocationID.x + j * kThreads;
      if (row < VKF_BM) vkf_row_stats[row] = vkf_row_moments(vkf_row_stats[row]);
    }
    barrier();
#endif
#endif

#if VKF_SPLIT_K > 1
    // Slice 0 adds the other slices' partial sums. Slices 1.. write the next tile's partials only after
    // its K loop's barriers, which slice 0 reaches after these reads.
    if (slice > 0u) {
      [[unroll]] for (uint i = 0u; i < VKF_TM; ++i)
        [[unroll]] for (uint j = 0u; j < VKF_TN / 4u; ++j)
          vkf_partial[((slice - 1u) * (VKF_TM * VKF_TN / 4u) + i * (VKF_TN / 4u) + j) * kSliceThreads + lane] = acc[i][j];
    }
    barrier();
    if (slice == 0u) {
      [[unroll]] for (uint s = 1u; s < uint(VKF_SPLIT_K); ++s)
        [[unroll]] for (uint i = 0u; i < VKF_TM; ++i)
          [[unroll]] for (uint j = 0u; j < VKF_TN / 4u; ++j)
            acc[i][j] += vkf_partial[((s - 1u) * (VKF_TM * VKF_TN / 4u) + i * (VKF_TN / 4u) + j) * kSliceThreads + lane];
    }
#endif

#if VKF_SPLIT_GROUPS > 1
    // This part's sums -> memory (vec4 e of invocation `lane` at e * kSliceThreads + lane of the part's
    // block); the writes reach the device before the count that announces them.
    const uint kPartVec4s = VKF_BM * VKF_BN / 4u;
    const uint tile_partials = item * uint(VKF_SPLIT_GROUPS) * kPartVec4s;
    if (slice == 0u) {
      [[unroll]] for (uint i = 0u; i < VKF_TM; ++i)
        [[unroll]] for (uint j = 0u; j < VKF_TN / 4u; ++j)
          vkf_split_partials.d[tile_partials + part * kPartVec4s + (i * (VKF_TN / 4u) + j) * kSliceThreads + lane] = acc[i][j];
    }
#if VKF_ROW_NORM
    // This part's row sums, after every tile's partial sums: row r of part q of `item` at floats
    // kRowSums + ((item * G + q) * VKF_BM + r) * 2, + 1.
    const uint kRowSums = 4u * VKF_BATCH * tiles * uint(VKF_SPLIT_GROUPS) * kPartVec4s;
    [[unroll]] for (uint j = 0u; j < kNormRows; ++j) {
      const uint row = gl_LocalInvocationID.x + j * kThreads;
      if (row < VKF_BM) {
        const uint at = kRowSums + ((item * uint(VKF_SPLIT_GROUPS) + part) * VKF_BM + row) * 2u;
        vkf_split_partials_f.d[at] = vkf_row_stats[row].x;
        vkf_split_partials_f.d[at + 1u] = vkf_row_stats[row].y;
      }
    }
#endif
    VKF_SPLIT_ARRIVE(item, uint(VKF_SPLIT_GROUPS));
    if (!vkf_split_last) continue;  // uniform: the tile's last workgroup adds and stores
#if VKF_ROW_NORM
    [[unroll]] for (uint j = 0u; j < kNormRows; ++j) {
      const uint row = gl_LocalInvocationID.x + j * kThreads;
      if (row < VKF_BM) {
        vec2 sums = vec2(0.0);
        for (uint q = 0u; q < uint(VKF_SPLIT_GROUPS); ++q) {
          const uint at = kRowSums + ((item * uint(VKF_SPLIT_GROUPS) + q) * VKF_BM + row) * 2u;
          sums += vec2(vkf_split_partials_f.d[at], vkf_split_partials_f.d[at + 1u]);
        }
        vkf_row_stats[row] = vkf_row_moments(sums);
      }
    }
    barrier();
#endif
    if (slice == 0u) {
      [[unroll]] for (uint i = 0u; i < VKF_TM; ++i)
        [[unroll]] for (uint j = 0u; j < VKF_TN / 4u; ++j) acc[i][j] = vec4(0.0);
      for (uint q = 0u; q < uint(VKF_SPLIT_GROUPS); ++q)
        [[unroll]] for (uint i = 0u; i < VKF_TM; ++i)
          [[unroll]] for (uint j = 0u; j < VKF_TN / 4u; ++j)
            acc[i][j] += vkf_split_partials.d[tile_partials + q * kPartVec4s + (i * (VKF_TN / 4u) + j) * kSliceThreads + lane];
    }
#endif

    const uint out_base = batch * VKF_M * VKF_N;
    if (VKF_N % 4u == 0u) {
      // Rows of whole vec4s: an invocation's 4 neighbouring columns store (and load the post chain's
      // inputs) as vectors.
      [[unroll]] for (uint i = 0u; i < VKF_TM; ++i) {
        const uint m = m0 + (i / 4u) * (kThreadsM * 4u) + ty * 4u + i % 4u;
        [[unroll]] for (uint j = 0u; j < VKF_TN / 4u; ++j) {
          const uint n = n0 + j * (kThreadsN * 4u) + tx * 4u;
          if (slice == 0u && (VKF_M % VKF_BM == 0u || m < VKF_M) && (VKF_N % VKF_BN == 0u || n < VKF_N)) {
            VKF_OUT0_X4(out_base + m * VKF_N + n, VKF_GEMM_VALUE4(m, n, acc[i][j]));
          }
        }
      }
      continue;
    }
    [[unroll]] for (uint i = 0u; i < VKF_TM; ++i) {
      const uint m = m0 + (i / 4u) * (kThreadsM * 4u) + ty * 4u + i % 4u;
      [[unroll]] for (uint j = 0u; j < VKF_TN; ++j) {
        const uint n = n0 + (j / 4u) * (kThreadsN * 4u) + tx * 4u + j % 4u;
        // slice 0 stores (every invocation without split K)
        if (slice == 0u && (VKF_M % VKF_BM == 0u || m < VKF_M) && (VKF_N % VKF_BN == 0u || n < VKF_N)) {
          VKF_OUT0(out_base + m * VKF_N + n, VKF_GEMM_VALUE(m, n, acc[i][j / 4u][j % 4u]));
        }
      }
    }
  }
}
