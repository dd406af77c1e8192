// GEMM root on cooperative matrices (GL_NV_cooperative_matrix): Y[b] = A[b] * B[b] with fp16 operands
// and fp32 accumulation on the device's matrix units (tensor cores), for f16 graphs on devices that
// offer 16x16x16 fp16 x fp16 + fp32 products at subgroup scope (host/ops/kernel_support.cpp checks).
//
// A workgroup computes VKF_BM x VKF_BN output tiles (looping when the grid is clamped), walking K in
// VKF_BK steps. Each step's slices of A and B go global -> registers -> shared memory as fp16 pairs (one
// uint each: packHalf2x16), through VKF_IN0 / VKF_IN1 so that pre-fused chains and chunked inputs load as
// everywhere else; the next step's slices are loaded into registers while the current ones multiply.
// The workgroup is VKF_WARPS_M x VKF_WARPS_N subgroups; each owns a (BM / WARPS_M) x (BN / WARPS_N)
// block of 16x16 accumulators. An operand is staged the way it is contiguous in memory (A as m rows of
// k when k is fast, else k rows of m; B likewise) and loaded into matrices row- or column-major to
// match, so the global loads stay coalesced either way. Rows are padded by 8 halves (16 bytes).
// Stores: a subgroup writes one accumulator at a time to its own 16x16 fp32 patch of shared memory and
// its invocations store the patch's elements through VKF_OUT0, so post-fused chains run as in every
// other root. Elements past M, N, K load as zero and stores are guarded.
//
// Defines: as roots/gemm_tiled.glsl (VKF_BATCH, VKF_M, VKF_N, VKF_K, VKF_A_BATCH(b), VKF_B_BATCH(b),
// strides, VKF_A_K_FAST, VKF_B_N_FAST, VKF_TILES_M, VKF_TILES_N, VKF_GEMM_VALUE(m, n, acc)), plus
// VKF_BM, VKF_BN (multiples of 16 * warps), VKF_BK (a multiple of 16), VKF_WARPS_M, VKF_WARPS_N and
// VKF_SUBGROUP_SIZE (VKF_WORKGROUP_SIZE == WARPS_M * WARPS_N * SUBGROUP_SIZE; the subgroup size must be
// the device's fixed one).
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
const uint kPairsA = kRowsA * kRunA / kThreads;  // fp16 pairs each invocation loads per step
const uint kPairsB = kRowsB * kRunB / kThreads;

shared uint vkf_sa[kRowsA * kRowA];
shared uint vkf_sb[kRowsB * kRowB];
shared float vkf_patch[VKF_WARPS_M * VKF_WARPS_N * 256];

// Pair `i` of this invocation's share of a slice: (row, pair within the row); consecutive invocations
// take consecutive pairs of a row, which are consecutive in memory.
uvec2 vkf_pair(uint i, uint run) {
  const uint e = gl_LocalInvocationID.x + i * kThreads;
  return uvec2(e / run, e % run);
}

void main() {
  const uint warp = gl_SubgroupID;
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

    uint ra[kPairsA];
    uint rb[kPairsB];
    // Global -> registers: the slices at k0 as fp16 pairs, zero past the matrices' edges.
#define VKF_A_AT(m, k) (((VKF_M % VKF_BM == 0u || (m) < VKF_M) && (VKF_K % VKF_BK == 0u || (k) < VKF_K)) \
                         ? VKF_IN0(a_base + (m) * VKF_A_STRIDE_M + (k) * VKF_A_STRIDE_K) : 0.0)
#define VKF_B_AT(k, n) (((VKF_K % VKF_BK == 0u || (k) < VKF_K) && (VKF_N % VKF_BN == 0u || (n) < VKF_N)) \
                         ? VKF_IN1(b_base + (k) * VKF_B_STRIDE_K + (n) * VKF_B_STRIDE_N) : 0.0)
#if VKF_A_K_FAST
#define VKF_A_PAIR(s, k0) vec2(VKF_A_AT(m0 + s.x, (k0) + 2u * s.y), VKF_A_AT(m0 + s.x, (k0) + 2u * s.y + 1u))
#else
#define VKF_A_PAIR(s, k0) vec2(VKF_A_AT(m0 + 2u * s.y, (k0) + s.x), VKF_A_AT(m0 + 2u * s.y + 1u, (k0) + s.x))
#endif
#if VKF_B_N_FAST
#define VKF_B_PAIR(s, k0) vec2(VKF_B_AT((k0) + s.x, n0 + 2u * s.y), VKF_B_AT((k0) + s.x, n0 + 2u * s.y + 1u))
#else
#define VKF_B_PAIR(s, k0) vec2(VKF_B_AT((k0) + 2u * s.y, n0 + s.x), VKF_B_AT((k0) + 2u * s.y + 1u, n0 + s.x))
#endif
#define VKF_LOAD_SLICES(k0)                                                                          \
    [[unroll]] for (uint i = 0u; i < kPairsA; ++i) {                                                 \
      const uvec2 s = vkf_pair(i, kRunA);                                                            \
      ra[i] = packHalf2x16(VKF_A_PAIR(s, k0));                                                       \
    }                                                                                                \
    [[unroll]] for (uint i = 0u; i < kPairsB; ++i) {                                                 \
      const uvec2 s = vkf_pair(i, kRunB);                                                            \
      rb[i] = packHalf2x16(VKF_B_PAIR(s, k0));                                                       \
    }

    VKF_LOAD_SLICES(0u)
    for (uint k0 = 0u; k0 < VKF_K; k0 += VKF_BK) {
      barrier();  // every subgroup is done reading the previous step's slices
      [[unroll]] for (uint i = 0u; i < kPairsA; ++i) {
        const uvec2 s = vkf_pair(i, kRunA);
        vkf_sa[s.x * kRowA + s.y] = ra[i];
      }
      [[unroll]] for (uint i = 0u; i < kPairsB; ++i) {
        const uvec2 s = vkf_pair(i, kRunB);
        vkf_sb[s.x * kRowB + s.y] = rb[i];
      }
      barrier();
      if (k0 + VKF_BK < VKF_K) {
        VKF_LOAD_SLICES(k0 + VKF_BK)  // in flight while this step multiplies
      }
      [[unroll]] for (uint kk = 0u; kk < VKF_BK; kk += 16u) {
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
#undef VKF_A_PAIR
#undef VKF_B_PAIR
#undef VKF_A_AT
#undef VKF_B_AT

    // Accumulators -> this subgroup's patch -> VKF_OUT0, one 16x16 block at a time.
    const uint out_base = batch * VKF_M * VKF_N;
    const uint own = warp * 256u;  // this subgroup's patch
    [[unroll]] for (uint i = 0u; i < kFragM; ++i)
      [[unroll]] for (uint j = 0u; j < kFragN; ++j) {
        coopMatStoreNV(acc[i][j], vkf_patch, own, 16u, false);
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        const uint mb = m0 + warp_m * kWarpM + i * 16u, nb = n0 + warp_n * kWarpN + j * 16u;
        for (uint e = gl_SubgroupInvocationID; e < 256u; e += gl_SubgroupSize) {
          const uint m = mb + e / 16u, n = nb + e % 16u;
          if ((VKF_M % VKF_BM == 0u || m < VKF_M) && (VKF_N % VKF_BN == 0u || n < VKF_N)) {
            VKF_OUT0(out_base + m * VKF_N + n, VKF_GEMM_VALUE(m, n, vkf_patch[own + e]));
          }
        }
        subgroupBarrier();  // the patch is read before the next block overwrites it
      }
  }
}
