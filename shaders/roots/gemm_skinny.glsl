// GEMM root for a few output rows (a batch-1 fully connected layer, a vector times a matrix): Y[b] =
// A[b] * B[b] with M of at most a handful. A 128x128 tile would be mostly padding and leave the GPU
// idle, and such a product is bound by reading B once; so a workgroup computes VKF_ROWS rows of
// VKF_COLS columns, the VKF_K_LANES lanes of each column split K between them, and a shared-memory tree
// adds their partial dot products (within the workgroup: each output element is still written once,
// with its final value, through VKF_OUT0). Consecutive invocations read consecutive elements of B
// whichever of k and n is contiguous (VKF_B_N_FAST), in fp32 registers. Where B's k is contiguous and
// its columns are whole 16-byte runs (VKF_B_RUN elements: 4 f32 or 8 f16) of a plain tensor, a lane
// reads a run at a time, raw, four runs in flight; A's rows likewise where they are (VKF_A_RUN).
//
// Defines (host/ops/kernel_support.cpp, gemm_launch): those of roots/gemm_tiled.glsl for the problem
// (VKF_BATCH, VKF_M, VKF_N, VKF_K, VKF_A_BATCH(b), VKF_B_BATCH(b), VKF_A_STRIDE_M, VKF_A_STRIDE_K,
// VKF_B_STRIDE_K, VKF_B_STRIDE_N, VKF_B_N_FAST, VKF_TILES_M, VKF_TILES_N, VKF_GEMM_VALUE), and
// VKF_ROWS, VKF_COLS, VKF_K_LANES (a power of two; VKF_COLS * VKF_K_LANES is the workgroup size),
// VKF_RAW_INPUTS 1, VKF_B_RUN and VKF_A_RUN (0, or the elements of a 16-byte run where the operand's k
// is contiguous and its rows and row stride are whole runs).
#extension GL_EXT_control_flow_attributes : enable

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

const uint kThreads = uint(VKF_WORKGROUP_SIZE);
#if VKF_B_N_FAST
const uint kLaneStride = VKF_COLS;  // invocation = lane * VKF_COLS + column
#else
const uint kLaneStride = 1u;        // invocation = column * VKF_K_LANES + lane
#endif

shared float vkf_partial[VKF_ROWS][kThreads];

// acc[i] += A[m0 + i, k] * bv for the rows that exist.
void vkf_accumulate(inout float acc[VKF_ROWS], uint a_base, uint m0, uint k, float bv) {
  [[unroll]] for (uint i = 0u; i < VKF_ROWS; ++i) {
    if (VKF_M % VKF_ROWS == 0u || m0 + i < VKF_M)
      acc[i] = fma(VKF_IN0(a_base + (m0 + i) * VKF_A_STRIDE_M + k * VKF_A_STRIDE_K), bv, acc[i]);
  }
}

#if defined(VKF_IN1_RAW) && VKF_B_RUN > 0 && !VKF_B_N_FAST
#define VKF_B_RUNS 1
#if defined(VKF_IN0_RAW) && VKF_A_RUN == VKF_B_RUN
#define VKF_A_RUNS 1
#endif
// Element e of a raw 16-byte run of VKF_B_RUN elements (the same dtype for A's runs).
float vkf_run_element(uvec4 run, uint e) {
#if VKF_B_RUN == 8
  const vec2 pair = unpackHalf2x16(run[e / 2u]);
  return (e % 2u) == 0u ? pair.x : pair.y;
#else
  return uintBitsToFloat(run[e]);
#endif
}
// acc[i] += A[m0 + i, k .. k + VKF_B_RUN - 1] . run, B's run starting at k.
void vkf_accumulate_run(inout float acc[VKF_ROWS], uint a_base, uint m0, uint k, uvec4 run) {
#if defined(VKF_A_RUNS)
  [[unroll]] for (uint i = 0u; i < VKF_ROWS; ++i) {
    if (VKF_M % VKF_ROWS == 0u || m0 + i < VKF_M) {
      const uvec4 a = VKF_IN0_RAW16(a_base + (m0 + i) * VKF_A_STRIDE_M + k);
      [[unroll]] for (uint e = 0u; e < uint(VKF_B_RUN); ++e) acc[i] = fma(vkf_run_element(a, e), vkf_run_element(run, e), acc[i]);
    }
  }
#else
  [[unroll]] for (uint e = 0u; e < uint(VKF_B_RUN); ++e) vkf_accumulate(acc, a_base, m0, k + e, vkf_run_element(run, e));
#endif
}
#endif

void main() {
  const uint id = gl_LocalInvocationID.x;
#if VKF_B_N_FAST
  const uint lane = id / VKF_COLS;
  const uint col = id % VKF_COLS;
#else
  const uint lane = id % VKF_K_LANES;
  const uint col = id / VKF_K_LANES;
#endif
  const uint tiles = VKF_TILES_M * VKF_TILES_N;
  for (uint t = gl_WorkGroupID.x; t < VKF_BATCH * tiles; t += gl_NumWorkGroups.x) {
    const uint batch = t / tiles;
    const uint r = t - batch * tiles;
    const uint m0 = (r / VKF_TILES_N) * VKF_ROWS;
    const uint n = (r % VKF_TILES_N) * VKF_COLS + col;
    const uint a_base = VKF_A_BATCH(batch);
    const uint b_base = VKF_B_BATCH(batch);

    float acc[VKF_ROWS];
    [[unroll]] for (uint i = 0u; i < VKF_ROWS; ++i) acc[i] = 0.0;
    if (n < VKF_N) {
#if defined(VKF_B_RUNS)
      // Runs q, q + K_LANES, ... of column n: a subgroup of lanes reads consecutive runs, 16 bytes each.
      const uint runs = VKF_K / uint(VKF_B_RUN), column = b_base + n * VKF_B_STRIDE_N;
      uint q = lane;
      for (; q + 3u * VKF_K_LANES < runs; q += 4u * VKF_K_LANES) {
        uvec4 rv[4];
        [[unroll]] for (uint u = 0u; u < 4u; ++u) rv[u] = VKF_IN1_RAW16(column + (q + u * VKF_K_LANES) * uint(VKF_B_RUN));
        [[unroll]] for (uint u = 0u; u < 4u; ++u) vkf_accumulate_run(acc, a_base, m0, (q + u * VKF_K_LANES) * uint(VKF_B_RUN), rv[u]);
      }
      for (; q < runs; q += VKF_K_LANES)
        vkf_accumulate_run(acc, a_base, m0, q * uint(VKF_B_RUN), VKF_IN1_RAW16(column + q * uint(VKF_B_RUN)));
#else
      // Four loads of B in flight per invocation before their multiplies: a product this thin is bound
      // by memory, and one outstanding load per invocation would leave much of its bandwidth unused.
      uint k = lane;
      for (; k + 3u * VKF_K_LANES < VKF_K; k += 4u * VKF_K_LANES) {
        float bv[4];
        [[unroll]] for (uint u = 0u; u < 4u; ++u) bv[u] = VKF_IN1(b_base + (k + u * VKF_K_LANES) * VKF_B_STRIDE_K + n * VKF_B_STRIDE_N);
        [[unroll]] for (uint u = 0u; u < 4u; ++u) vkf_accumulate(acc, a_base, m0, k + u * VKF_K_LANES, bv[u]);
      }
      for (; k < VKF_K; k += VKF_K_LANES)
        vkf_accumulate(acc, a_base, m0, k, VKF_IN1(b_base + k * VKF_B_STRIDE_K + n * VKF_B_STRIDE_N));
#endif
    }
    [[unroll]] for (uint i = 0u; i < VKF_ROWS; ++i) vkf_partial[i][id] = acc[i];
    barrier();
    [[unroll]] for (uint s = VKF_K_LANES / 2u; s > 0u; s /= 2u) {
      if (lane < s) {
        [[unroll]] for (uint i = 0u; i < VKF_ROWS; ++i) vkf_partial[i][id] += vkf_partial[i][id + s * kLaneStride];
      }
      barrier();
    }
    if (lane == 0u && n < VKF_N) {
      const uint out_base = batch * VKF_M * VKF_N;
      [[unroll]] for (uint i = 0u; i < VKF_ROWS; ++i) {
        const uint m = m0 + i;
        if (VKF_M % VKF_ROWS == 0u || m < VKF_M) {
          VKF_OUT0(out_base + m * VKF_N + n, VKF_GEMM_VALUE(m, n, vkf_partial[i][id]));
        }
      }
    }
    barrier();  // the partials are read before the next tile overwrites them
  }
}
