// Attention root: two batched products through a row chain, Y[b] = f(A1[b] * B1[b]) * B2[b], where f runs
// along each row of the first product's result S (Softmax(Q K^T) V: A1 = Q, B1 = K^T, f = the scaled
// softmax, B2 = V). A workgroup takes VKF_BQ rows of one batch at a time (a query block):
//  - it stages their A1 rows in shared memory, 4 rows of a depth to a vec4;
//  - it walks B1 in chunks of VKF_KC columns (keys), each staged in shared memory by all invocations at
//    once, neighbouring invocations loading neighbouring elements (the next chunk's loads in flight
//    while this one multiplies), and computes the block's rows of S into vkf_s, each invocation one key
//    for 4 rows (their A1 elements one vec4 read per depth);
//  - one subgroup walks each row through the chain (vkf_row_passes, generated: each walk's reductions
//    folded with subgroup operations), which hands the chain's values to vkf_row_value, 4 rows to a
//    vec4 per key;
//  - it walks B2 in chunks of VKF_KC rows the same way, each invocation accumulating one column for 4
//    rows (a staged B2 element and a vec4 of values per key), and stores through VKF_OUT0 (the post
//    stage).
// S and the chain's values never leave shared memory. Accumulation is in fp32.
// Unrolling the depth loop and the second product's chunks was tried and ran slower (docs/tuning-log.md,
// "attention.glsl").
//
// Defines (host/attention_kernel.cpp): VKF_BATCH, VKF_M (rows of S per batch), VKF_ROW_N (columns of S:
// the second product's K), VKF_ROW_PITCH (= VKF_ROW_N: vkf_s's row stride), VKF_D (the first product's
// K), VKF_DV (columns of Y), VKF_BQ (a multiple of 4), VKF_Q_BLOCKS (ceil(M / BQ)), VKF_KC; operand
// addressing as OpDef::matrix_product gives it: element (m, d) of A1 at VKF_A1_BATCH(b) + m * VKF_A1_SM
// + d * VKF_A1_SK (input 0), (d, n) of B1 at VKF_B1_BATCH(b) + d * VKF_B1_SK + n * VKF_B1_SN (input 1),
// (n, c) of B2 at VKF_B2_BATCH(b) + n * VKF_B2_SK + c * VKF_B2_SN (input 2).
#extension GL_EXT_control_flow_attributes : enable

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

const uint kThreads = uint(VKF_WORKGROUP_SIZE);
const uint kGroups = VKF_BQ / 4u;  // groups of 4 rows of the block
const uint kKeyRow = VKF_D + 1u;  // a staged B1 column (key), padded: neighbouring keys in other banks
const uint kKLoads = (VKF_KC * VKF_D + kThreads - 1u) / kThreads;  // each invocation's share of a chunk
const uint kVLoads = (VKF_KC * VKF_DV + kThreads - 1u) / kThreads;
const uint kScores = (kGroups * VKF_KC + kThreads - 1u) / kThreads;  // (4 rows, key) items per invocation
const uint kOutputs = (kGroups * VKF_DV + kThreads - 1u) / kThreads;  // (4 rows, column) items
shared vec4 vkf_q4[VKF_D * kGroups];         // A1's block: depth d of rows 4g .. 4g + 3 at d * kGroups + g
shared vec4 vkf_p4[VKF_ROW_N * kGroups];     // the chain's values: key n of rows 4g .. 4g + 3
shared float vkf_chunk[max(VKF_KC * kKeyRow, VKF_KC * VKF_DV)];

void vkf_row_value(uint r, uint n, float v) { vkf_p4[n * kGroups + r / 4u][r % 4u] = v; }

// Chunk c0's B1 columns (element e: key c0 + e / D, depth e % D) and B2 rows (key c0 + e / DV, column
// e % DV): neighbouring invocations load neighbouring elements along the contiguous dimension of a view
// whose depth (or column) stride is 1.
void vkf_fetch_keys(uint b, uint c0, out float k[kKLoads]) {
  [[unroll]] for (uint i = 0u; i < kKLoads; ++i) {
    const uint e = gl_LocalInvocationID.x + i * kThreads, j = c0 + e / VKF_D;
    k[i] = e < VKF_KC * VKF_D && j < VKF_ROW_N ? VKF_IN1(VKF_B1_BATCH(b) + (e % VKF_D) * VKF_B1_SK + j * VKF_B1_SN) : 0.0;
  }
}
void vkf_fetch_values(uint b, uint c0, out float v[kVLoads]) {
  [[unroll]] for (uint i = 0u; i < kVLoads; ++i) {
    const uint e = gl_LocalInvocationID.x + i * kThreads, n = c0 + e / VKF_DV;
    v[i] = e < VKF_KC * VKF_DV && n < VKF_ROW_N ? VKF_IN2(VKF_B2_BATCH(b) + n * VKF_B2_SK + (e % VKF_DV) * VKF_B2_SN) : 0.0;
  }
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
  for (uint t = gl_WorkGroupID.x; t < VKF_BATCH * VKF_Q_BLOCKS; t += gl_NumWorkGroups.x) {
    const uint b = t / VKF_Q_BLOCKS, q0 = (t % VKF_Q_BLOCKS) * VKF_BQ;
    for (uint e = tid; e < VKF_BQ * VKF_D; e += kThreads) {
      const uint r = e / VKF_D, d = e % VKF_D, m = q0 + r;
      vkf_q4[d * kGroups + r / 4u][r % 4u] = m < VKF_M ? VKF_IN0(VKF_A1_BATCH(b) + m * VKF_A1_SM + d * VKF_A1_SK) : 0.0;
    }
    // S, chunk by chunk: item p is key p % KC of rows 4 (p / KC) .. + 3.
    float k[kKLoads];
    vkf_fetch_keys(b, 0u, k);
    for (uint c0 = 0u; c0 < VKF_ROW_N; c0 += VKF_KC) {
      barrier();  // the previous chunk's readers are done (and, the first time, A1's block is staged)
      [[unroll]] for (uint i = 0u; i < kKLoads; ++i) {
        const uint e = tid + i * kThreads;
        if (e < VKF_KC * VKF_D) vkf_chunk[(e / VKF_D) * kKeyRow + e % VKF_D] = k[i];
      }
      barrier();
      if (c0 + VKF_KC < VKF_ROW_N) vkf_fetch_keys(b, c0 + VKF_KC, k);  // in flight while this chunk multiplies
      [[unroll]] for (uint i = 0u; i < kScores; ++i) {
        const uint p = tid + i * kThreads, g = p / VKF_KC, key = p % VKF_KC;
        if (g >= kGroups) break;
        vec4 acc = vec4(0.0);
        for (uint d = 0u; d < VKF_D; ++d) acc = fma(vkf_q4[d * kGroups + g], vec4(vkf_chunk[key * kKeyRow + d]), acc);
        if (c0 + key < VKF_ROW_N)
          [[unroll]] for (uint q = 0u; q < 4u; ++q) vkf_s[(4u * g + q) * VKF_ROW_PITCH + c0 + key] = acc[q];
      }
    }
    barrier();
    for (uint r = gl_SubgroupID; r < VKF_BQ; r += gl_NumSubgroups)
      if (q0 + r < VKF_M) vkf_row_passes(b * VKF_M + q0 + r, r);  // uniform in the subgroup
    // Y = values * B2, chunk by chunk: item p is column p % DV of rows 4 (p / DV) .. + 3.
    vec4 acc[kOutputs];
    [[unroll]] for (uint i = 0u; i < kOutputs; ++i) acc[i] = vec4(0.0);
    float v[kVLoads];
    vkf_fetch_values(b, 0u, v);
    for (uint c0 = 0u; c0 < VKF_ROW_N; c0 += VKF_KC) {
      barrier();  // the chain's values are in vkf_p4, and the previous chunk's readers are done
      [[unroll]] for (uint i = 0u; i < kVLoads; ++i) {
        const uint e = tid + i * kThreads;
        if (e < VKF_KC * VKF_DV) vkf_chunk[e] = v[i];
      }
      barrier();
      if (c0 + VKF_KC < VKF_ROW_N) vkf_fetch_values(b, c0 + VKF_KC, v);
      const uint keys = min(VKF_KC, VKF_ROW_N - c0);
      [[unroll]] for (uint i = 0u; i < kOutputs; ++i) {
        const uint p = tid + i * kThreads, g = min(p / VKF_DV, kGroups - 1u), c = p % VKF_DV;
        for (uint n = 0u; n < keys; ++n) acc[i] = fma(vkf_p4[(c0 + n) * kGroups + g], vec4(vkf_chunk[n * VKF_DV + c]), acc[i]);
      }
    }
    [[unroll]] for (uint i = 0u; i < kOutputs; ++i) {
      const uint p = tid + i * kThreads, g = p / VKF_DV, c = p % VKF_DV;
      [[unroll]] for (uint q = 0u; q < 4u; ++q) {
        const uint m = q0 + 4u * g + q;
        if (g < kGroups && m < VKF_M) VKF_OUT0((b * VKF_M + m) * VKF_DV + c, acc[i][q]);
      }
    }
    barrier();  // the block's shared arrays are refilled for the next
  }
}
