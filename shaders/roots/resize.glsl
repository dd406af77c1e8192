// Resize root: one invocation per output element. The source coordinate of output coordinate x along
// dimension d is the exact fraction (x * VKF_COORD_NUM[d] + VKF_COORD_OFFSET[d]) / VKF_COORD_DEN[d]
// (the launcher derives it from the coordinate transformation mode), so rounding ties are decided
// exactly. Nearest (VKF_RESIZE_LINEAR 0) rounds it by VKF_NEAREST_MODE (0 round_prefer_floor,
// 1 round_prefer_ceil, 2 floor, 3 ceil) in every dimension; linear (1) interpolates between the two
// neighbours in each of the last two dimensions (elements/resize_linear.glsl, which a consumer's loads
// may compute instead). Source indices are clamped to the input.
// Defines: VKF_NUMEL, VKF_RANK (>= 2), VKF_IN_SHAPE, VKF_OUT_SHAPE, VKF_COORD_NUM, VKF_COORD_OFFSET,
// VKF_COORD_DEN (int[] of VKF_RANK), VKF_RESIZE_LINEAR, VKF_NEAREST_MODE.

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

const int vkf_in_shape[VKF_RANK] = VKF_IN_SHAPE;
const int vkf_out_shape[VKF_RANK] = VKF_OUT_SHAPE;
const int vkf_coord_num[VKF_RANK] = VKF_COORD_NUM;
const int vkf_coord_offset[VKF_RANK] = VKF_COORD_OFFSET;
const int vkf_coord_den[VKF_RANK] = VKF_COORD_DEN;

// The source coordinate of x along dimension d: (floor, remainder over the denominator).
ivec2 vkf_source(int x, int d) {
  const int t = x * vkf_coord_num[d] + vkf_coord_offset[d];
  const int den = vkf_coord_den[d];
  const int q = t >= 0 ? t / den : -((den - 1 - t) / den);
  return ivec2(q, t - q * den);
}

#if VKF_RESIZE_LINEAR == 0
int vkf_nearest(ivec2 s, int d) {
  const int twice = 2 * s.y;
  const int den = vkf_coord_den[d];
#if VKF_NEAREST_MODE == 0
  const int i = twice > den ? s.x + 1 : s.x;
#elif VKF_NEAREST_MODE == 1
  const int i = twice >= den ? s.x + 1 : s.x;
#elif VKF_NEAREST_MODE == 2
  const int i = s.x;
#else
  const int i = s.y > 0 ? s.x + 1 : s.x;
#endif
  return clamp(i, 0, vkf_in_shape[d] - 1);
}
#endif

void main() {
  const uint stride = gl_NumWorkGroups.x * uint(VKF_WORKGROUP_SIZE);
  for (uint o = gl_GlobalInvocationID.x; o < VKF_NUMEL; o += stride) {
#if VKF_RESIZE_LINEAR == 0
    uint rest = o, source = 0u, in_stride = 1u;
    for (int d = VKF_RANK - 1; d >= 0; --d) {
      const int x = int(rest % uint(vkf_out_shape[d]));
      rest /= uint(vkf_out_shape[d]);
      source += uint(vkf_nearest(vkf_source(x, d), d)) * in_stride;
      in_stride *= uint(vkf_in_shape[d]);
    }
    VKF_OUT0(o, VKF_IN0(source));
#else
    VKF_OUT0(o, vkf_element(o));  // elements/resize_linear.glsl, placed before this root
#endif
  }
}
