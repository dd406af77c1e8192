// GEMM root on cooperative matrices (GL_NV_cooperative_matrix): Y[b] = A[b] * B[b] with fp16 operands
// and fp32 accumulation on the device's matrix units (tensor cores), for f16 graphs on devices that
// offer 16x16x16 fp16 x fp16 + fp32 products at subgroup scope (host/ops/kernel_support.cpp checks).
//
// A workgroup computes VKF_BM x VKF_BN output tiles (looping when the grid is clamped), walking K in
// VKF_BK steps. Each step's slices of A and B go global -> registers -> shared memory as fp16 pairs (one
// uint each: packHalf2x16), through VKF_IN0 / VKF_IN1 so that pre-fused chains and chunked inputs load as
// everywhere else; the next step's slices are loaded into registers while the current ones multiply.
// An operand is staged the way it is contiguous in memory (A as m rows of k when k is fast, else k rows
// of m; B likewise) and loaded into matrices row- or column-major to match, so the global loads stay
// coalesced either way. Rows are padded by 8 halves (16 bytes).
// The workgroup is VKF_WARPS_M x VKF_WARPS_N x VKF_WARPS_K subgroups; each owns a (BM / WARPS_M) x
// (BN / WARPS_N) block of 16x16 accumulators, and the WARPS_K subgroups of a block split every staged
// K slice between them (16 k's each in turn); after the walk along K, subgroups 1.. of each block leave
// their accumulators in shared memory (vkf_parts) and subgroup 0 adds them to its own as it stores.
// Small products (batch-1 layers) keep WARPS_K times more subgroups busy that way.
// Stores: a subgroup writes one accumulator at a time to its own 16x16 fp32 patch of shared memory and
// its invocations store the patch's elements through VKF_OUT0, so post-fused chains run as in every
// other root; four neighbouring elements at a time (VKF_OUT0_X4, vector loads and stores) where rows
// are whole vec4s (N a multiple of 4). Elements past M, N, K load as zero and stores are guarded.
//
// Defines: as roots/gemm_tiled.glsl (VKF_BATCH, VKF_M, VKF_N, VKF_K, VKF_A_BATCH(b), VKF_B_BATCH(b),
// strides, VKF_A_K_FAST, VKF_B_N_FAST, VKF_TILES_M, VKF_TILES_N, VKF_GEMM_VALUE(m, n, acc)), plus
// VKF_BM, VKF_BN (multiples of 16 * warps), VKF_BK (a multiple of 16 * VKF_WARPS_K), VKF_WARPS_M,
// VKF_WARPS_N, VKF_WARPS_K (VKF_WORKGROUP_SIZE == WARPS_M * WARPS_N * WARPS_K * the device's fixed
// subgroup size), VKF_A_QUADS and VKF_B_QUADS (1 where the operand's rows along its contiguous
// dimension, and its row stride, are multiples of 8 elements), VKF_RAW_INPUTS (plain inputs also get
// VKF_IN<k>_RAW16).
//
// Conv (VKF_CONV 1, groups of 1): per image b, Y[b] = W * X'[b], A = W (input 1, [M, K] with K = C*KH*KW
// fast) and B = X' the im2col matrix of X (input 0), [K, OH*OW], never stored: with VKF_CONV_GATHER 1
// each B element is gathered from X with the window's index math (zero in the pads); without (1x1,
// stride 1, no pads) B is X's [C, H*W] planes as they are, read through the strides like any B.
// Gather defines (int unless u): VKF_CONV_C u, VKF_CONV_H, VKF_CONV_W, VKF_CONV_OW u, VKF_CONV_KH,
// VKF_CONV_KW, VKF_CONV_SH, VKF_CONV_SW, VKF_CONV_DH, VKF_CONV_DW, VKF_CONV_PT, VKF_CONV_PL.
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
#if VKF_CONV
#define VKF_A_FETCH(i) VKF_IN1(i)
#define VKF_A_FETCH16(i) VKF_IN1_RAW16(i)
#define VKF_B_FETCH(i) VKF_IN0(i)
#define VKF_B_FETCH16(i) VKF_IN0_RAW16(i)
#if defined(VKF_IN1_RAW)
#define VKF_A_PLAIN 1
#endif
#if defined(VKF_IN0_RAW) && !VKF_CONV_GATHER
#define VKF_B_PLAIN 1
#endif
#else
#define VKF_A_FETCH(i) VKF_IN0(i)
#define VKF_A_FETCH16(i) VKF_IN0_RAW16(i)
#define VKF_B_FETCH(i) VKF_IN1(i)
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
// above main) the H100's driver ran 128x128 tiles at 32 TFLOP/s instead of 190 (4096^3, 2026-11-24,
// SPIR-V otherwise alike).
shared uint vkf_sa[kRowsA * kRowA];
shared uint vkf_sb[kRowsB * kRowB];
shared float vkf_patch[VKF_WARPS_M * VKF_WARPS_N * 256];
#if VKF_WARPS_K > 1
const uint kBlocks = uint(VKF_WARPS_M * VKF_WARPS_N), kFrags = kFragM * kFragN;
// Subgroup (k, block)'s accumulator (i, j), k >= 1: 256 floats at ((k - 1) * blocks + block) * frags + i * kFragN + j.
shared float vkf_parts[uint(VKF_WARPS_K - 1) * kBlocks * kFrags * 256u];
#endif

#if VKF_CONV_GATHER
// Element (k, n) of image b's im2col matrix: X at input channel k / (KH*KW), window offset (kh, kw) of
// output position n; zero in the pads.
float vkf_conv_b(uint b, uint k, uint n) {
  const uint ci = k / uint(VKF_CONV_KH * VKF_CONV_KW), r = k - ci * uint(VKF_CONV_KH * VKF_CONV_KW);
  const uint kh = r / uint(VKF_CONV_KW), kw = r - kh * uint(VKF_CONV_KW);
  const uint oh = n / VKF_CONV_OW, ow = n - oh * VKF_CONV_OW;
  const int ih = int(oh) * VKF_CONV_SH - VKF_CONV_PT + int(kh) * VKF_CONV_DH;
  const int iw = int(ow) * VKF_CONV_SW - VKF_CONV_PL + int(kw) * VKF_CONV_DW;
  if (uint(ih) >= uint(VKF_CONV_H) || uint(iw) >= uint(VKF_CONV_W)) return 0.0;
  return VKF_IN0(((b * VKF_CONV_C + ci) * uint(VKF_CONV_H) + uint(ih)) * uint(VKF_CONV_W) + uint(iw));
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
  for (uint t = gl_WorkGroupID.x; t < VKF_BATCH * tiles; t += gl_NumWorkGroups.x) {
    const uint batch = t / tiles;
    const uint r = t - batch * tiles;
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
                              ? VKF_A_FETCH(VKF_A_INDEX(VKF_A_MK(s, k0, e).x, VKF_A_MK(s, k0, e).y)) : 0.0)
#define VKF_A_LOAD(s, k0) packHalf2x16(vec2(VKF_A_ONE(s, k0, 0u), VKF_A_ONE(s, k0, 1u)))
#endif
#if VKF_B_RAW
#define VKF_B_LOAD(s, k0) (VKF_B_IN(VKF_B_KN(s, k0, 0u).x, VKF_B_KN(s, k0, 0u).y) \
                           ? VKF_B_FETCH16(VKF_B_INDEX(VKF_B_KN(s, k0, 0u).x, VKF_B_KN(s, k0, 0u).y)) : uvec4(0u))
#else
#if VKF_CONV_GATHER
#define VKF_B_AT(k, n) vkf_conv_b(batch, k, n)
#else
#define VKF_B_AT(k, n) VKF_B_FETCH(VKF_B_INDEX(k, n))
#endif
#define VKF_B_ONE(s, k0, e) (VKF_B_IN(VKF_B_KN(s, k0, e).x, VKF_B_KN(s, k0, e).y) \
                              ? VKF_B_AT(VKF_B_KN(s, k0, e).x, VKF_B_KN(s, k0, e).y) : 0.0)
#define VKF_B_LOAD(s, k0) packHalf2x16(vec2(VKF_B_ONE(s, k0, 0u), VKF_B_ONE(s, k0, 1u)))
#endif
#define VKF_LOAD_SLICES(k0)                                                                          \
    [[unroll]] for (uint i = 0u; i < kLoadsA; ++i) {                                                 \
      const uvec2 s = vkf_pair(i, kRunA / VKF_A_VEC);                                                \
      ra[i] = VKF_A_LOAD(s, k0);                                                                     \
    }                                                                                                \
    [[unroll]] for (uint i = 0u; i < kLoadsB; ++i) {                                                 \
      const uvec2 s = vkf_pair(i, kRunB / VKF_B_VEC);                                                \
      rb[i] = VKF_B_LOAD(s, k0);                                                                     \
    }

    VKF_LOAD_SLICES(0u)
    for (uint k0 = 0u; k0 < VKF_K; k0 += VKF_BK) {
      barrier();  // every subgroup is done reading the previous step's slices
      [[unroll]] for (uint i = 0u; i < kLoadsA; ++i) {
        const uvec2 s = vkf_pair(i, kRunA / VKF_A_VEC);
#if VKF_A_RAW
        [[unroll]] for (uint c = 0u; c < 4u; ++c) vkf_sa[s.x * kRowA + 4u * s.y + c] = ra[i][c];
#else
        vkf_sa[s.x * kRowA + s.y] = ra[i];
#endif
      }
      [[unroll]] for (uint i = 0u; i < kLoadsB; ++i) {
        const uvec2 s = vkf_pair(i, kRunB / VKF_B_VEC);
#if VKF_B_RAW
        [[unroll]] for (uint c = 0u; c < 4u; ++c) vkf_sb[s.x * kRowB + 4u * s.y + c] = rb[i][c];
#else
        vkf_sb[s.x * kRowB + s.y] = rb[i];
#endif
      }
      barrier();
      if (k0 + VKF_BK < VKF_K) {
        VKF_LOAD_SLICES(k0 + VKF_BK)  // in flight while this step multiplies
      }
      // A constant trip count (the loop unrolls; the subgroup's offset along K is only in the addresses).
      [[unroll]] for (uint kq = 0u; kq < VKF_BK / (16u * uint(VKF_WARPS_K)); ++kq) {
        const uint kk = (kq * uint(VKF_WARPS_K) + warp_k) * 16u;
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a[kFragM];
        [[unroll]] for (uint i = 0u; i < kFragM; ++i) {
          const uint m = warp_m * kWarpM + i * 16u;
#if VKF_A_K_FAST
          coopMatLoadNV(a[i], vkf_sa, m * kRowA + kk / 2u, kRowA, false);
#else
          coopMatLoadNV(a[i], vkf_sa, kk * kRowA + m / 2u, kRowA, true);
#endif
        }
        [[unroll]] for (uint j = 0u; j < kFragN; ++j) {
          const uint n = warp_n * kWarpN + j * 16u;
          fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> b;
#if VKF_B_N_FAST
          coopMatLoadNV(b, vkf_sb, kk * kRowB + n / 2u, kRowB, false);
#else
          coopMatLoadNV(b, vkf_sb, n * kRowB + kk / 2u, kRowB, true);
#endif
          [[unroll]] for (uint i = 0u; i < kFragM; ++i) acc[i][j] = coopMatMulAddNV(a[i], b, acc[i][j]);
        }
      }
    }
#undef VKF_LOAD_SLICES

#if VKF_WARPS_K > 1
    if (warp_k > 0u) {
      [[unroll]] for (uint i = 0u; i < kFragM; ++i)
        [[unroll]] for (uint j = 0u; j < kFragN; ++j)
          coopMatStoreNV(acc[i][j], vkf_parts, (((warp_k - 1u) * kBlocks + warp) * kFrags + i * kFragN + j) * 256u, 16u, false);
    }
    barrier();
#endif
    // Accumulators -> this subgroup's patch -> sums (plus the parts of subgroups 1..) -> VKF_OUT0, one
    // 16x16 block at a time (subgroup 0 of each block).
    const uint out_base = batch * VKF_M * VKF_N;
    const uint own = warp * 256u;  // this subgroup's patch
    if (warp_k == 0u) {
      [[unroll]] for (uint i = 0u; i < kFragM; ++i)
        [[unroll]] for (uint j = 0u; j < kFragN; ++j) {
          coopMatStoreNV(acc[i][j], vkf_patch, own, 16u, false);
          subgroupMemoryBarrierShared();
          subgroupBarrier();
          const uint mb = m0 + warp_m * kWarpM + i * 16u, nb = n0 + warp_n * kWarpN + j * 16u;
          if (VKF_N % 4u == 0u) {
            // Rows of whole vec4s: each invocation takes 4 neighbouring columns, so the post chain's
            // inputs load and the outputs store as vectors.
            for (uint q = gl_SubgroupInvocationID; q < 64u; q += gl_SubgroupSize) {
              const uint e = 4u * q, m = mb + e / 16u, n = nb + e % 16u;
              if ((VKF_M % VKF_BM == 0u || m < VKF_M) && (VKF_N % VKF_BN == 0u || n < VKF_N)) {
                vec4 sum = vec4(vkf_patch[own + e], vkf_patch[own + e + 1u], vkf_patch[own + e + 2u], vkf_patch[own + e + 3u]);
#if VKF_WARPS_K > 1
                [[unroll]] for (uint s = 1u; s < uint(VKF_WARPS_K); ++s) {
                  const uint at = (((s - 1u) * kBlocks + warp) * kFrags + i * kFragN + j) * 256u + e;
                  sum += vec4(vkf_parts[at], vkf_parts[at + 1u], vkf_parts[at + 2u], vkf_parts[at + 3u]);
                }
#endif
                VKF_OUT0_X4(out_base + m * VKF_N + n, VKF_GEMM_VALUE4(m, n, sum));
              }
            }
            subgroupBarrier();  // the patch is read before the next block overwrites it
            continue;
          }
          for (uint e = gl_SubgroupInvocationID; e < 256u; e += gl_SubgroupSize) {
            const uint m = mb + e / 16u, n = nb + e % 16u;
            if ((VKF_M % VKF_BM == 0u || m < VKF_M) && (VKF_N % VKF_BN == 0u || n < VKF_N)) {
              float sum = vkf_patch[own + e];
#if VKF_WARPS_K > 1
              // (Added here, not as matrices: SPIRV-Tools' folding of adds does not know matrix types.)
              [[unroll]] for (uint s = 1u; s < uint(VKF_WARPS_K); ++s)
                sum += vkf_parts[(((s - 1u) * kBlocks + warp) * kFrags + i * kFragN + j) * 256u + e];
#endif
              VKF_OUT0(out_base + m * VKF_N + n, VKF_GEMM_VALUE(m, n, sum));
            }
          }
          subgroupBarrier();  // the patch is read before the next block overwrites it
        }
    }
  }
}
