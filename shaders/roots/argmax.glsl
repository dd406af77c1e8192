// ArgMax root: one invocation per output element, the input viewed as [outer, VKF_AXIS_SIZE,
// VKF_INNER]; the invocation scans its row along the axis in the input's register type (VKF_VALUE_T:
// float or int, so i32 compares exactly) and writes the position as an i32. Ties keep the first
// position, or the last when VKF_SELECT_LAST is 1.
// Defines: VKF_NUMEL (outer * inner), VKF_INNER, VKF_AXIS_SIZE, VKF_SELECT_LAST, VKF_VALUE_T.

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

void main() {
  const uint stride = gl_NumWorkGroups.x * uint(VKF_WORKGROUP_SIZE);
  for (uint o = gl_GlobalInvocationID.x; o < VKF_NUMEL; o += stride) {
    const uint base = (o / VKF_INNER) * VKF_AXIS_SIZE * VKF_INNER + o % VKF_INNER;
    VKF_VALUE_T best = VKF_IN0(base);
    uint best_k = 0u;
    for (uint k = 1u; k < VKF_AXIS_SIZE; ++k) {
      const VKF_VALUE_T v = VKF_IN0(base + k * VKF_INNER);
#if VKF_SELECT_LAST
      if (v >= best) {
#else
      if (v > best) {
#endif
        best = v;
        best_k = k;
      }
    }
    VKF_OUT0(o, int(best_k));
  }
}
