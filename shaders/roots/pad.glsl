// Pad root: one invocation per output element. Along each dimension the output coordinate less the
// pad before it is the source coordinate; outside the input it is filled (mode 0: VKF_PAD_VALUE),
// mirrored without repeating the edge (mode 1, reflect) or clamped (mode 2, edge). Negative pads crop.
// Defines: VKF_NUMEL, VKF_RANK, VKF_IN_SHAPE, VKF_OUT_SHAPE, VKF_PAD_BEGIN (int[] of VKF_RANK),
// VKF_PAD_MODE, VKF_PAD_VALUE (a literal of the output's register type).

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

const int vkf_in_shape[VKF_RANK] = VKF_IN_SHAPE;
const int vkf_out_shape[VKF_RANK] = VKF_OUT_SHAPE;
const int vkf_pad_begin[VKF_RANK] = VKF_PAD_BEGIN;

// The source of coordinate s, outside [0, n), along a dimension of extent n.
int vkf_pad_source(int s, int n) {
#if VKF_PAD_MODE == 1
  // Reflect has period 2(n - 1) and is symmetric about 0, which also covers pads wider than n.
  if (n == 1) return 0;
  const int period = 2 * (n - 1);
  s = abs(s) % period;
  return s < n ? s : period - s;
#else
  return clamp(s, 0, n - 1);
#endif
}

void main() {
  const uint stride = gl_NumWorkGroups.x * uint(VKF_WORKGROUP_SIZE);
  for (uint o = gl_GlobalInvocationID.x; o < VKF_NUMEL; o += stride) {
    uint rest = o;
    int source = 0, in_stride = 1;
    bool inside = true;
    for (int d = VKF_RANK - 1; d >= 0; --d) {
      int s = int(rest % uint(vkf_out_shape[d])) - vkf_pad_begin[d];
      rest /= uint(vkf_out_shape[d]);
      if (s < 0 || s >= vkf_in_shape[d]) {
#if VKF_PAD_MODE == 0
        inside = false;
#else
        s = vkf_pad_source(s, vkf_in_shape[d]);
#endif
      }
      source += s * in_stride;
      in_stride *= vkf_in_shape[d];
    }
    if (inside)
      VKF_OUT0(o, VKF_IN0(uint(source)));
    else
      VKF_OUT0(o, VKF_PAD_VALUE);
  }
}
