// GEMM root on cooperative matrices (GL_NV_cooperative_matrix): Y[b] = A[b] * B[b] with fp16 operands
// and fp32 accumulation on the device's matrix units (tensor cores), for f16 graphs on devices that
// offer 16x16x16 fp16 x fp16 + fp32 products at subgroup scope (host/ops/kernel_support.cpp checks).
//
// A workgroup computes VKF_BM x VKF_BN output tiles (looping when the grid is clamped), walking K in
// VKF_BK steps. Each step's slices of A and B go global -> registers -> shared memory as fp16 pairs (one
// uint each: packFloat2x16), through VKF_IN0 / VKF_IN1 so that pre-fused chains and chunked inputs load as
// everywhere else; the next step's slices are loaded into registers while the current ones multiply.
// With VKF_STAGES 2 the slices are staged in two buffers, alternating, and a step takes one barrier
// instead of two (the host stages a gathered B in one: its Convs ran slower with two).
// An operand is staged the way it is contiguous in memory (A as m rows of k when k is fast, else k rows
// of m; B likewise) and loaded into matrices row- or column-major to match, so the global loads stay
// coalesced either way. Rows are padded by 8 halves (16 bytes).
// The workgroup is VKF_WARPS_M x VKF_WARPS_N x VKF_WARPS_K subgroups; each owns a (BM / WARPS_M) x
// (BN / WARPS_N) block of 16x16 accumulators, and the WARPS_K subgroups of a block split every staged
// K slice between them (16 k's each in turn); after the walk along K, subgroups 1.. of each block leave
// their accumulators in shared memory (vkf_parts) and subgroup 0 adds them to its own as it stores.
// Small products (batch-1 layers) keep WARPS_K times more subgroups busy that way.
// Split K across workgroups (VKF_SPLIT_GROUPS = G > 1): G workgroups share each tile, workgroup p walking
// k's p*VKF_K_PART .. (p+1)*VKF_K_PART - 1 (whole VKF_BK steps, none empty). Each adds its subgroups'
// sums through the patches as for the stores, leaves them in vkf_split_partials as plain vec4s (4
// neighbouring elements of a 16x16 block; matrices are never stored to memory) and counts itself in
// the tile's counter (VKF_SPLIT_ARRIVE_SCOPED); the last to arrive adds the G parts in part order (the same
// sum whichever arrives last) and stores. Layers whose tiles are fewer than the GPU's SMs (7x7 and
// 14x14 Convs) then walk their long K on G times more workgroups.
// Stores: a subgroup writes one accumulator at a time to its own 16x16 fp32 patch of shared memory and
// its invocations store the patch's elements through VKF_OUT0, so post-fused chains run as in every
// other root; four neighbouring elements at a time (VKF_OUT0_X4, vector loads and stores) where rows
// are whole vec4s (N a multiple of 4). Elements past M, N, K load as zero and stores are guarded.
//
// Defines: as roots/gemm_tiled.glsl (VKF_BATCH, VKF_M, VKF_N, VKF_K, VKF_A_BATCH(b), VKF_B_BATCH(b),
// strides, VKF_A_K_FAST, VKF_B_N_FAST, VKF_TILES_M, VKF_TILES_N, VKF_GEMM_VALUE(m, n, acc)), plus
// VKF_BM, VKF_BN (multiples of 16 * warps), VKF_BK (a multiple of 16 * VKF_WARPS_K), VKF_STAGES (1 or 2), VKF_WARPS_M,
// VKF_WARPS_N, VKF_WARPS_K (VKF_WORKGROUP_SIZE == WARPS_M * WARPS_N * WARPS_K * the device's fixed
// subgroup size), VKF_A_QUADS and VKF_B_QUADS (1 where the operand's rows along its contiguous
// dimension, and its row stride, are multiples of 8 elements), VKF_RAW_INPUTS (plain inputs also get
// VKF_IN<k>_RAW16), VKF_SPLIT_GROUPS and VKF_K_PART (1 and any multiple of VKF_BK at least VKF_K
// without split K across workgroups).
//
// Conv (VKF_CONV 1, groups of 1): per image b, Y[b] = W * X'[b], A = W (input 1, [M, K] with K = C*KH*KW
// fast) and B = X' the im2col matrix of X (input 0), [K, OH*OW], never stored: with VKF_CONV_GATHER 1
// each B element is gathered from X with the window's index math (zero in the pads); without (1x1,
// stride 1, no pads) B is X's [C, H*W] planes as they are, read through the strides like any B.
// The gather walks k incrementally, as roots/conv2d.glsl does: B is staged as k rows of n (VKF_B_N_FAST
// 1), so an invocation's pairs of a slice are one pair of columns (their window corners are found once
// per tile) on rows kGatherRows apart; it keeps (ci, kh, kw) of its first row and advances it by BK per
// step, and each other row's by a constant, with carries: no division by the window size in the K loop.
// With VKF_CONV_PAIRED 1 (OW even) an invocation's pair of columns lies in one output row: both read one
// row of X, SW apart, so the row's index math and bounds test are done once for the two.
// Gather defines (int unless u): VKF_CONV_C u, VKF_CONV_H, VKF_CONV_W, VKF_CONV_OW u, VKF_CONV_KH,
// VKF_CONV_KW, VKF_CONV_SH, VKF_CONV_SW, VKF_CONV_DH, VKF_CONV_DW, VKF_CONV_PT, VKF_CONV_PL,
// VKF_CONV_PAIRED (0/1).
#extension GL_NV_cooperative_matrix : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : enable
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_EXT_control_flow_attributes : enable

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

const uint kThreads = uint(VKF_WORKGROUP_SIZE);
const uint kWarpM = VKF_BM / uint(VKF_WARPS_M);  // rows of a subgroup's block
const uint kWarpN = VKF_BN / uint(VKF_WARPS_N);
const uint kFragM = kWarpM / 16u;  // 16x16 accumulators per subgroup, down and across
const uint kFragN = kWarpN / 16u;
const uint kPad = 4u;  // uints (8 halves, 16 bytes) of padding per staged row

// A staged as m rows of k (k fast in memory) or k rows of m; B as k rows of n (n fast) or n rows of k.
#if VKF_A_K_FAST
const uint kRowA = VKF_BK / 2u + kPad, kRunA = VKF_BK / 2u, kRowsA = VKF_BM;
#else
const uint kRowA = VKF_BM / 2u + kPad, kRunA = VKF_BM / 2u, kRowsA = VKF_BK;
#endif
#if VKF_B_N_FAST
const uint kRowB = VKF_BN / 2u + kPad, kRunB = VKF_BN / 2u, kRowsB = VKF_BK;
#else
const uint kRowB = VKF_BK / 2u + kPad, kRunB = VKF_BK / 2u, kRowsB = VKF_BN;
#endif
// Each invocation loads its share of a step's slices as fp16 pairs (one uint, through VKF_IN), or, where
// the operand is a plain tensor (VKF_IN<k>_RAW) whose rows are whole 16-byte runs (VKF_A_QUADS,
// VKF_B_QUADS from the host), as raw uvec4s of 8 halves: one load instead of 8.
// Operand sources: A is input 0 and B input 1, or for a Conv W (input 1) and X (input 0).
// The fetches give an element as a float16_t. Pairs of them are packed as halves (packFloat2x16; the
// driver drops the round trip through fp32 of a stored half), not as floats (packHalf2x16, which
// converts each), which made gathered Convs faster (docs/tuning-log.md, "VKF_A_FETCH16").
#if VKF_CONV
#define VKF_A_FETCH(i) float16_t(VKF_IN1(i))
#define VKF_A_FETCH16(i) VKF_IN1_RAW16(i)
#define VKF_B_FETCH(i) float16_t(VKF_IN0(i))
#define VKF_B_FETCH16(i) VKF_IN0_RAW16(i)
#if defined(VKF_IN1_RAW)
#define VKF_A_PLAIN 1
#endif
#if defined(VKF_IN0_RAW) && !VKF_CONV_GATHER
#define VKF_B_PLAIN 1
#endif
#else
#define VKF_A_FETCH(i) float16_t(VKF_IN0(i))
#define VKF_A_FETCH16(i) VKF_IN0_RAW16(i)
#define VKF_B_FETCH(i) float16_t(VKF_IN1(i))
#define VKF_B_FETCH16(i) VKF_IN1_RAW16(i)
#if defined(VKF_IN0_RAW)
#define VKF_A_PLAIN 1
#endif
#if defined(VKF_IN1_RAW)
#define VKF_B_PLAIN 1
#endif
#endif
#if defined(VKF_A_PLAIN) && VKF_A_QUADS
#define VKF_A_RAW 1
#define VKF_A_VEC 4u
#define VKF_A_REG uvec4
#else
#define VKF_A_RAW 0
#define VKF_A_VEC 1u
#define VKF_A_REG uint
#endif
#if defined(VKF_B_PLAIN) && VKF_B_QUADS
#define VKF_B_RAW 1
#define VKF_B_VEC 4u
#define VKF_B_REG uvec4
#else
#define VKF_B_RAW 0
#define VKF_B_VEC 1u
#define VKF_B_REG uint
#endif
const uint kLoadsA = kRowsA * kRunA / VKF_A_VEC / kThreads;  // loads per invocation per step
const uint kLoadsB = kRowsB * kRunB / VKF_B_VEC / kThreads;

// Only main() reads or writes these, and it reaches vkf_sa and vkf_sb first: glslang emits shared
// variables in the order the code first uses them, and with vkf_patch first (used by a helper function
// above main) one driver ran 128x128 tiles at a sixth of the speed, SPIR-V otherwise alike
// (docs/tuning-log.md, "shared-variable order").
#if VKF_STAGES != 1 && VKF_STAGES != 2
#error VKF_STAGES is 1 or 2
#endif
shared uint vkf_sa[VKF_STAGES * kRowsA * kRowA];
shared uint vkf_sb[VKF_STAGES * kRowsB * kRowB];
shared float vkf_patch[VKF_WARPS_M * VKF_WARPS_N * 256];
const uint kBlocks = uint(VKF_WARPS_M * VKF_WARPS_N), kFrags = kFragM * kFragN;
#if VKF_WARPS_K > 1
// Subgroup (k, block)'s accumulator (i, j), k >= 1: 256 floats at ((k - 1) * blocks + block) * frags + i * kFragN + j.
shared float vkf_parts[uint(VKF_WARPS_K - 1) * kBlocks * kFrags * 256u];
#endif

#if VKF_CONV_GATHER
#if !VKF_B_N_FAST
#error the gathered B is staged as k rows of n
#endif
const uint kWindow = uint(VKF_CONV_KH * VKF_CONV_KW);
const uint kGatherRows = kThreads / kRunB;  // rows between an invocation's pairs of a B slice
// (Each invocation's pairs are one pair of columns: a negative array size fails the build otherwise.)
const uint kGatherCheck[kThreads % kRunB == 0u ? 1 : -1] = {0u};
// (ci, kh, kw) of row k of the im2col matrix, as a uvec3.
uvec3 vkf_window_of(uint k) {
  const uint ci = k / kWindow, r = k - ci * kWindow;
  return uvec3(ci, r / uint(VKF_CONV_KW), r % uint(VKF_CONV_KW));
}
// (ci, kh, kw) `at` moved d = (dci, dkh, dkw) rows on (dkh < KH, dkw < KW): at most one carry each.
uvec3 vkf_window_add(uvec3 at, const uvec3 d) {
  uvec3 r = at + d;
  if (r.z >= uint(VKF_CONV_KW)) r += uvec3(0u, 1u, -uint(VKF_CONV_KW));
  if (r.y >= uint(VKF_CONV_KH)) r += uvec3(1u, -uint(VKF_CONV_KH), 0u);
  return r;
}
// Rows as (dci, dkh, dkw) steps (compile-time constants where `rows` is).
uvec3 vkf_window_step(uint rows) {
  return uvec3(rows / kWindow, (rows % kWindow) / uint(VKF_CONV_KW), rows % uint(VKF_CONV_KW));
}
#if VKF_CONV_PAIRED
// Columns n and n + 1 (one output row) of im2col row `at` as an fp16 pair, zero in the pads and past K:
// one row of X (a corner ih0, iw0 and the next SW on), `inside` where the columns are real positions.
uint vkf_gather_pair(uvec3 at, bool inside, int ih0, int iw0, uint base) {
  const int ih = ih0 + int(at.y) * VKF_CONV_DH, iw = iw0 + int(at.z) * VKF_CONV_DW;
  const bool row = inside && at.x < VKF_CONV_C && uint(ih) < uint(VKF_CONV_H);
  const uint first = base + (at.x * uint(VKF_CONV_H) + uint(ih)) * uint(VKF_CONV_W);
  const float16_t v0 = row && uint(iw) < uint(VKF_CONV_W) ? VKF_B_FETCH(first + uint(iw)) : float16_t(0.0);
  const float16_t v1 =
      row && uint(iw + VKF_CONV_SW) < uint(VKF_CONV_W) ? VKF_B_FETCH(first + uint(iw + VKF_CONV_SW)) : float16_t(0.0);
  return packFloat2x16(f16vec2(v0, v1));
}
#endif
#endif

#if VKF_SPLIT_GROUPS > 1
// The sum over the tile's parts of vec4 `at` of a part (parts `kPart` vec4s apart from `base` on).
vec4 vkf_split_sum4(uint base, uint at) {
  const uint kPart = VKF_BM * VKF_BN / 4u;
  vec4 sum = vec4(0.0);
  for (uint q = 0u; q < uint(VKF_SPLIT_GROUPS); ++q) sum += vkf_split_partials.d[base + q * kPart + at];
  return sum;
}
#endif

// Unit `i` of this invocation's share of a slice: (row, unit within the row); consecutive invocations
// take consecutive units of a row, which are consecutive in memory.
uvec2 vkf_pair(uint i, uint run) {
  const uint e = gl_LocalInvocationID.x + i * kThreads;
  return uvec2(e / run, e % run);
}

void main() {
#if VKF_WARPS_K > 1
  const uint warp = gl_SubgroupID % uint(VKF_WARPS_M * VKF_WARPS_N);  // the block
  const uint warp_k = gl_SubgroupID / uint(VKF_WARPS_M * VKF_WARPS_N);
#else
  const uint warp = gl_SubgroupID;
  const uint warp_k = 0u;  // (a constant: the compiler drops what depends on it)
#endif
  const uint warp_m = warp / uint(VKF_WARPS_N), warp_n = warp % uint(VKF_WARPS_N);
  const uint tiles = VKF_TILES_M * VKF_TILES_N;
  for (uint t = gl_WorkGroupID.x; t < VKF_BATCH * tiles * uint(VKF_SPLIT_GROUPS); t += gl_NumWorkGroups.x) {
    VKF_SPLIT_PART(item, t, VKF_K);  // item = batch * tiles + tile; part, k_begin, k_end
    const uint batch = item / tiles;
    const uint r = item - batch * tiles;
    const uint m0 = (r / VKF_TILES_N) * VKF_BM;
    const uint n0 = (r % VKF_TILES_N) * VKF_BN;
    const uint a_base = VKF_A_BATCH(batch);
    const uint b_base = VKF_B_BATCH(batch);

    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[kFragM][kFragN];
    [[unroll]] for (uint i = 0u; i < kFragM; ++i)
      [[unroll]] for (uint j = 0u; j < kFragN; ++j) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);

    VKF_A_REG ra[kLoadsA];
    VKF_B_REG rb[kLoadsB];
    // Global -> registers: the slices at k0, zero past the matrices' edges. Slot s = (row, unit within
    // the row) of the staged layout; a unit is a pair or a quad of uints.
#define VKF_A_IN(m, k) ((VKF_M % VKF_BM == 0u || (m) < VKF_M) && (VKF_K % VKF_BK == 0u || (k) < VKF_K))
#define VKF_B_IN(k, n) ((VKF_K % VKF_BK == 0u || (k) < VKF_K) && (VKF_N % VKF_BN == 0u || (n) < VKF_N))
#define VKF_A_INDEX(m, k) (a_base + (m) * VKF_A_STRIDE_M + (k) * VKF_A_STRIDE_K)
#define VKF_B_INDEX(k, n) (b_base + (k) * VKF_B_STRIDE_K + (n) * VKF_B_STRIDE_N)
#if VKF_A_K_FAST
#define VKF_A_MK(s, k0, e) uvec2(m0 + s.x, (k0) + 2u * VKF_A_VEC * s.y + (e))  // (m, k) of element e of the unit
#else
#define VKF_A_MK(s, k0, e) uvec2(m0 + 2u * VKF_A_VEC * s.y + (e), (k0) + s.x)
#endif
#if VKF_B_N_FAST
#define VKF_B_KN(s, k0, e) uvec2((k0) + s.x, n0 + 2u * VKF_B_VEC * s.y + (e))
#else
#define VKF_B_KN(s, k0, e) uvec2((k0) + 2u * VKF_B_VEC * s.y + (e), n0 + s.x)
#endif
#if VKF_A_RAW
#define VKF_A_LOAD(s, k0) (VKF_A_IN(VKF_A_MK(s, k0, 0u).x, VKF_A_MK(s, k0, 0u).y) \
                           ? VKF_A_FETCH16(VKF_A_INDEX(VKF_A_MK(s, k0, 0u).x, VKF_A_MK(s, k0, 0u).y)) : uvec4(0u))
#else
#define VKF_A_ONE(s, k0, e) (VKF_A_IN(VKF_A_MK(s, k0, e).x, VKF_A_MK(s, k0, e).y) \
                              ? VKF_A_FETCH(VKF_A_INDEX(VKF_A_MK(s, k0, e).x, VKF_A_MK(s, k0, e).y)) : float16_t(0.0))
#define VKF_A_LOAD(s, k0) packFloat2x16(f16vec2(VKF_A_ONE(s, k0, 0u), VKF_A_ONE(s, k0, 1u)))
#endif
#if VKF_B_RAW
#define VKF_B_LOAD(s, k0) (VKF_B_IN(VKF_B_KN(s, k0, 0u).x, VKF_B_KN(s, k0, 0u).y) \
                           ? VKF_B_FETCH16(VKF_B_INDEX(VKF_B_KN(s, k0, 0u).x, VKF_B_KN(s, k0, 0u).y)) : uvec4(0u))
#else
#if VKF_CONV_GATHER && VKF_CONV_PAIRED
    // This invocation's two columns, n and n + 1 (n even), lie in one output row (OW is even): one row
    // of X, their window corners SW apart.
    int gather_ih0, gather_iw0;
    bool gather_in;
    {
      const uint n = n0 + 2u * (gl_LocalInvocationID.x % kRunB), oh = n / VKF_CONV_OW;
      gather_in = VKF_N % VKF_BN == 0u || n < VKF_N;
      gather_ih0 = int(oh) * VKF_CONV_SH - VKF_CONV_PT;
      gather_iw0 = int(n - oh * VKF_CONV_OW) * VKF_CONV_SW - VKF_CONV_PL;
    }
    uvec3 gather_at = vkf_window_of(k_begin + gl_LocalInvocationID.x / kRunB);
#define VKF_B_GATHER_TWO(at) vkf_gather_pair(at, gather_in, gather_ih0, gather_iw0, b_base)
#elif VKF_CONV_GATHER
    // This invocation's two columns: their window corners in X, and whether they are real positions.
    ivec2 gather_ih0, gather_iw0;
    bvec2 gather_in;
    [[unroll]] for (uint e = 0u; e < 2u; ++e) {
      const uint n = n0 + 2u * (gl_LocalInvocationID.x % kRunB) + e, oh = n / VKF_CONV_OW;
      gather_in[e] = VKF_N % VKF_BN == 0u || n < VKF_N;
      gather_ih0[e] = int(oh) * VKF_CONV_SH - VKF_CONV_PT;
      gather_iw0[e] = int(n - oh * VKF_CONV_OW) * VKF_CONV_SW - VKF_CONV_PL;
    }
    // (ci, kh, kw) of this invocation's first row of the slice last loaded (k_begin's to start).
    uvec3 gather_at = vkf_window_of(k_begin + gl_LocalInvocationID.x / kRunB);
    // Element (at, column e) of the im2col matrix: zero in the pads and past K.
#define VKF_B_GATHER(at, e)                                                                          \
    ((gather_in[e] && (at).x < VKF_CONV_C &&                                                         \
      uint(gather_ih0[e] + int((at).y) * VKF_CONV_DH) < uint(VKF_CONV_H) &&                          \
      uint(gather_iw0[e] + int((at).z) * VKF_CONV_DW) < uint(VKF_CONV_W))                            \
         ? VKF_B_FETCH(b_base + ((at).x * uint(VKF_CONV_H) + uint(gather_ih0[e] + int((at).y) * VKF_CONV_DH)) * \
                                    uint(VKF_CONV_W) + uint(gather_iw0[e] + int((at).z) * VKF_CONV_DW)) \
         : float16_t(0.0))
#define VKF_B_GATHER_TWO(at) packFloat2x16(f16vec2(VKF_B_GATHER(at, 0u), VKF_B_GATHER(at, 1u)))
#else
#define VKF_B_ONE(s, k0, e) (VKF_B_IN(VKF_B_KN(s, k0, e).x, VKF_B_KN(s, k0, e).y) \
                              ? VKF_B_FETCH(VKF_B_INDEX(VKF_B_KN(s, k0, e).x, VKF_B_KN(s, k0, e).y)) : float16_t(0.0))
#define VKF_B_LOAD(s, k0) packFloat2x16(f16vec2(VKF_B_ONE(s, k0, 0u), VKF_B_ONE(s, k0, 1u)))
#endif
#endif
#define VKF_LOAD_SLICES(k0)                                                                          \
    [[unroll]] for (uint i = 0u; i < kLoadsA; ++i) {                                                 \
      const uvec2 s = vkf_pair(i, kRunA / VKF_A_VEC);                                                \
      ra[i] = VKF_A_LOAD(s, k0);                                                                     \
    }                                                                                                \
    VKF_LOAD_B(k0)
#if VKF_CONV_GATHER
#define VKF_LOAD_B(k0)                                                                               \
    [[unroll]] for (uint i = 0u; i < kLoadsB; ++i) {                                                 \
      const uvec3 at = vkf_window_add(gather_at, vkf_window_step(i * kGatherRows));                  \
      rb[i] = VKF_B_GATHER_TWO(at);                                                                  \
    }
#else
#define VKF_LOAD_B(k0)                                                                               \
    [[unroll]] for (uint i = 0u; i < kLoadsB; ++i) {                                                 \
      const uvec2 s = vkf_pair(i, kRunB / VKF_B_VEC);                                                \
      rb[i] = VKF_B_LOAD(s, k0);                                                                     \
    }
#endif

    // Registers -> the staged slices of buffer `stage`.
#if VKF_A_RAW
#define VKF_STORE_A(i, s, stage) [[unroll]] for (uint c = 0u; c < 4u; ++c) vkf_sa[(stage) * kRowsA * kRowA + s.x * kRowA + 4u * s.y + c] = ra[i][c];
#else
#define VKF_STORE_A(i, s, stage) vkf_sa[(stage) * kRowsA * kRowA + s.x * kRowA + s.y] = ra[i];
#endif
#if VKF_B_RAW
#define VKF_STORE_B(i, s, stage) [[unroll]] for (uint c = 0u; c < 4u; ++c) vkf_sb[(stage) * kRowsB * kRowB + s.x * kRowB + 4u * s.y + c] = rb[i][c];
#else
#define VKF_STORE_B(i, s, stage) vkf_sb[(stage) * kRowsB * kRowB + s.x * kRowB + s.y] = rb[i];
#endif
#define VKF_STORE_SLICES(stage)                                                                      \
    [[unroll]] for (uint i = 0u; i < kLoadsA; ++i) {                                                 \
      const uvec2 s = vkf_pair(i, kRunA / VKF_A_VEC);                                                \
      VKF_STORE_A(i, s, stage)                                                                       \
    }                                                                                                \
    [[unroll]] for (uint i = 0u; i < kLoadsB; ++i) {                                                 \
      const uvec2 s = vkf_pair(i, kRunB / VKF_B_VEC);                                                \
      VKF_STORE_B(i, s, stage)                                                                       \
    }

    VKF_LOAD_SLICES(k_begin)
#if VKF_STAGES == 2
    // Two buffers: the slices of step s + 1 go to the buffer step s does not read, so one barrier a
    // step separates both the stores from the reads and the reads from the next stores.
    VKF_STORE_SLICES(0u)
    barrier();
    uint stage = 0u;
#else
    const uint stage = 0u;
#endif
    for (uint k0 = k_begin; k0 < k_end; k0 += VKF_BK) {
#if VKF_STAGES == 1
      barrier();  // every subgroup is done reading the previous step's slices
      VKF_STORE_SLICES(0u)
      barrier();
#endif
      if (k0 + VKF_BK < k_end) {
#if VKF_CONV_GATHER
        gather_at = vkf_window_add(gather_at, vkf_window_step(VKF_BK));
#endif
        VKF_LOAD_SLICES(k0 + VKF_BK)  // in flight while this step multiplies
      }
      const uint sa0 = stage * kRowsA * kRowA, sb0 = stage * kRowsB * kRowB;
      // A constant trip count (the loop unrolls; the subgroup's offset along K is only in the addresses).
      [[unroll]] for (uint kq = 0u; kq < VKF_BK / (16u * uint(VKF_WARPS_K)); ++kq) {
        const uint kk = (kq * uint(VKF_WARPS_K) + warp_k) * 16u;
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a[kFragM];
        [[unroll]] for (uint i = 0u; i < kFragM; ++i) {
          const uint m = warp_m * kWarpM + i * 16u;
#if VKF_A_K_FAST
          coopMatLoadNV(a[i], vkf_sa, sa0 + m * kRowA + kk / 2u, kRowA, false);
#else
          coopMatLoadNV(a[i], vkf_sa, sa0 + kk * kRowA + m / 2u, kRowA, true);
#endif
        }
        [[unroll]] for (uint j = 0u; j < kFragN; ++j) {
          const uint n = warp_n * kWarpN + j * 16u;
          fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> b;
#if VKF_B_N_FAST
          coopMatLoadNV(b, vkf_sb, sb0 + kk * kRowB + n / 2u, kRowB, false);
#else
          coopMatLoadNV(b, vkf_sb, sb0 + n * kRowB + kk / 2u, kRowB, true);
#endif
          [[unroll]] for (uint i = 0u; i < kFragM; ++i) acc[i][j] = coopMatMulAddNV(a[i], b, acc[i][j]);
        }
      }
#if VKF_STAGES == 2
      if (k0 + VKF_BK < k_end) {
        VKF_STORE_SLICES(stage ^ 1u)
      }
      barrier();
      stage ^= 1u;
#endif
    }
#undef VKF_LOAD_SLICES
#undef VKF_LOAD_B
#undef VKF_STORE_SLICES
#undef VKF_STORE_A
#undef VKF_STORE_B

#if VKF_WARPS_K > 1
    if (warp_k > 0u) {
      [[unroll]] for (uint i = 0u; i < kFragM; ++i)
        [[unroll]] for (uint j = 0u; j < kFragN; ++j)
          coopMatStoreNV(acc[i][j], vkf_parts, (((warp_k - 1u) * kBlocks + warp) * kFrags + i * kFragN + j) * 256u, 16u, false);
    }
    barrier();
#endif
    // Accumulators -> this subgroup's patch -> sums (plus the parts of subgroups 1..), one 16x16 block
    // at a time (subgroup 0 of each block); VKF_SUM4(i, j, e) is elements e .. e + 3 of block (i, j).
    const uint own = warp * 256u;  // this subgroup's patch
    // (Macros, not functions: a helper above main() that reads shared memory changes the order of the
    // shared variables, see above. The parts are added here, not as matrices: SPIRV-Tools' folding of
    // adds does not know matrix types.)
#define VKF_SHARED4(array, at) vec4(array[at], array[(at) + 1u], array[(at) + 2u], array[(at) + 3u])
#define VKF_PART4(s, i, j, e) VKF_SHARED4(vkf_parts, ((((s) - 1u) * kBlocks + warp) * kFrags + (i) * kFragN + (j)) * 256u + (e))
#if VKF_WARPS_K == 1
#define VKF_SUM4(i, j, e) VKF_SHARED4(vkf_patch, own + (e))
#elif VKF_WARPS_K == 2
#define VKF_SUM4(i, j, e) (VKF_SHARED4(vkf_patch, own + (e)) + VKF_PART4(1u, i, j, e))
#else
#define VKF_SUM4(i, j, e) (VKF_SHARED4(vkf_patch, own + (e)) + VKF_PART4(1u, i, j, e) + VKF_PART4(2u, i, j, e) + VKF_PART4(3u, i, j, e))
#endif
#if VKF_SPLIT_GROUPS > 1
    // This part's sums -> vkf_split_partials (vec4 q of block (i, j) at (warp * kFrags + i * kFragN + j)
    // * 64 + q of the part); the last part to arrive reads the parts' sums there instead of the patch.
    const uint kPartVec4s = VKF_BM * VKF_BN / 4u;
    const uint tile_partials = item * uint(VKF_SPLIT_GROUPS) * kPartVec4s;
    if (warp_k == 0u) {
      [[unroll]] for (uint i = 0u; i < kFragM; ++i)
        [[unroll]] for (uint j = 0u; j < kFragN; ++j) {
          coopMatStoreNV(acc[i][j], vkf_patch, own, 16u, false);
          subgroupMemoryBarrierShared();
          subgroupBarrier();
          for (uint q = gl_SubgroupInvocationID; q < 64u; q += gl_SubgroupSize)
            vkf_split_partials.d[tile_partials + part * kPartVec4s + (warp * kFrags + i * kFragN + j) * 64u + q] = VKF_SUM4(i, j, 4u * q);
          subgroupBarrier();  // the patch is read before the next block overwrites it
        }
    }
    // (The flag lives in the patch, which nothing reads until the next tile's partial sums: a shared bool
    // of its own beside the cooperative-matrix arrays made the NVIDIA driver (580.159.04) multiply
    // wrongly, every product of the group 1/64 short and some blocks' edges zero.)
    VKF_SPLIT_ARRIVE_SCOPED(item, uint(VKF_SPLIT_GROUPS), vkf_patch[0]);
    if (vkf_patch[0] == 0.0) continue;  // uniform: the tile's last workgroup adds the parts and stores
#undef VKF_SUM4
#define VKF_SUM4(i, j, e) vkf_split_sum4(tile_partials, (warp * kFrags + (i) * kFragN + (j)) * 64u + (e) / 4u)
#endif
    const uint out_base = batch * VKF_M * VKF_N;
    if (warp_k == 0u) {
      [[unroll]] for (uint i = 0u; i < kFragM; ++i)
        [[unroll]] for (uint j = 0u; j < kFragN; ++j) {
#if VKF_SPLIT_GROUPS == 1
          coopMatStoreNV(acc[i][j], vkf_patch, own, 16u, false);
          subgroupMemoryBarrierShared();
          subgroupBarrier();
#endif
          const uint mb = m0 + warp_m * kWarpM + i * 16u, nb = n0 + warp_n * kWarpN + j * 16u;
          if (VKF_N % 4u == 0u) {
            // Rows of whole vec4s: each invocation takes 4 neighbouring columns, so the post chain's
            // inputs load and the outputs store as vectors.
            for (uint q = gl_SubgroupInvocationID; q < 64u; q += gl_SubgroupSize) {
              const uint e = 4u * q, m = mb + e / 16u, n = nb + e % 16u;
              if ((VKF_M % VKF_BM == 0u || m < VKF_M) && (VKF_N % VKF_BN == 0u || n < VKF_N)) {
                const vec4 sum = VKF_SUM4(i, j, e);
                VKF_OUT0_X4(out_base + m * VKF_N + n, VKF_GEMM_VALUE4(m, n, sum));
              }
            }
          } else {
            for (uint q = gl_SubgroupInvocationID; q < 64u; q += gl_SubgroupSize) {
              const uint e = 4u * q, m = mb + e / 16u;
              const vec4 sum = VKF_SUM4(i, j, e);
              [[unroll]] for (uint c = 0u; c < 4u; ++c) {
                const uint n = nb + e % 16u + c;
                if ((VKF_M % VKF_BM == 0u || m < VKF_M) && (VKF_N % VKF_BN == 0u || n < VKF_N))
                  VKF_OUT0(out_base + m * VKF_N + n, VKF_GEMM_VALUE(m, n, sum[c]));
              }
            }
          }
          subgroupBarrier();  // the patch is read before the next block overwrites it
        }
    }
#undef VKF_SUM4
  }
}
