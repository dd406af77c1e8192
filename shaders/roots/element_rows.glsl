// Element-rows root: a row chain (KernelSpec::row_chain) over the output of an op whose elements are
// computed here (the root's element, vkf_element(i): a depthwise Conv), read through a view of it
// (convnext's Permute to channels-last before a LayerNormalization). A workgroup takes VKF_BQ rows of
// the chain's domain at a time:
//  - it computes their elements into vkf_s, neighbouring invocations taking neighbouring rows of one
//    column (for a channels-last view of an NCHW Conv: neighbouring positions of one channel's plane,
//    whose window loads then share cache lines); with VKF_RUN > 1, each invocation a run of VKF_RUN
//    rows that are neighbouring elements of the op's output (vkf_element_run: a depthwise Conv's
//    window loads each input segment once for the run);
//  - one subgroup walks each row through the chain (vkf_row_passes, generated: each walk's reductions
//    folded with subgroup operations) and stores each element's value through VKF_OUT0 at its index in
//    the domain, neighbouring lanes neighbouring elements of the row.
// The op's result never reaches memory. Accumulation is in fp32.
//
// Defines (host/element_rows_kernel.cpp): VKF_ROWS (rows of the domain), VKF_ROW_N (their length),
// VKF_ROW_PITCH (vkf_s's row stride: VKF_ROW_N + 1, so that the rows of one column lie in different
// banks), VKF_BQ (rows per block), VKF_BLOCKS (ceil(VKF_ROWS / VKF_BQ)), VKF_RUN (an int: 1, or rows per
// run, dividing VKF_BQ and VKF_ROWS; VKF_E_RUN the same as a uint), and vkf_element_index(row, n) (a
// macro), the element of the op's output that element n of row `row` reads.

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

const uint kThreads = uint(VKF_WORKGROUP_SIZE);

uint vkf_row0;  // the block's first row

void vkf_row_value(uint r, uint n, float v) { VKF_OUT0((vkf_row0 + r) * VKF_ROW_N + n, v); }

void main() {
  const uint tid = gl_LocalInvocationID.x;
  for (uint t = gl_WorkGroupID.x; t < VKF_BLOCKS; t += gl_NumWorkGroups.x) {
    vkf_row0 = t * VKF_BQ;
#if VKF_RUN > 1
    // Item e: the run of VKF_RUN rows (neighbouring elements of the op's output) q = e % kRuns of column
    // n = e / kRuns.
    const uint kRuns = VKF_BQ / uint(VKF_RUN);
    for (uint e = tid; e < kRuns * VKF_ROW_N; e += kThreads) {
      const uint r0 = (e % kRuns) * uint(VKF_RUN), n = e / kRuns;
      if (vkf_row0 + r0 >= VKF_ROWS) continue;  // (VKF_RUN divides VKF_ROWS)
      float v[VKF_RUN];
      vkf_element_run(vkf_element_index(vkf_row0 + r0, n), v);
      [[unroll]] for (uint r = 0u; r < uint(VKF_RUN); ++r) vkf_s[(r0 + r) * VKF_ROW_PITCH + n] = v[r];
    }
#else
    for (uint e = tid; e < VKF_BQ * VKF_ROW_N; e += kThreads) {
      const uint r = e % VKF_BQ, n = e / VKF_BQ;
      if (vkf_row0 + r < VKF_ROWS) vkf_s[r * VKF_ROW_PITCH + n] = vkf_element(vkf_element_index(vkf_row0 + r, n));
    }
#endif
    barrier();
    for (uint r = gl_SubgroupID; r < VKF_BQ; r += gl_NumSubgroups)
      if (vkf_row0 + r < VKF_ROWS) vkf_row_passes(vkf_row0 + r, r);  // uniform in the subgroup
    barrier();  // the block's rows are refilled for the next
  }
}
