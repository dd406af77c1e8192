// Concat root: one invocation per output element, the output viewed as [outer, VKF_AXIS, VKF_INNER].
// The axis coordinate is tested against each input's end in turn (VKF_TAKE_ALL expands to
// VKF_TAKE(0) VKF_TAKE(1) ...); the first input whose range holds it supplies the element.
// Defines: VKF_NUMEL, VKF_INNER, VKF_AXIS, VKF_TAKE_ALL, and per input k: VKF_BEGIN<k>, VKF_END<k>,
// VKF_SIZE<k> (its extent along the axis).

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

#define VKF_TAKE(k)                                                                       \
  if (a < VKF_END##k) {                                                                   \
    VKF_OUT0(o, VKF_IN##k((outer * VKF_SIZE##k + (a - VKF_BEGIN##k)) * VKF_INNER + r));   \
    continue;                                                                             \
  }

void main() {
  const uint stride = gl_NumWorkGroups.x * uint(VKF_WORKGROUP_SIZE);
  for (uint o = gl_GlobalInvocationID.x; o < VKF_NUMEL; o += stride) {
    const uint r = o % VKF_INNER;
    const uint a = (o / VKF_INNER) % VKF_AXIS;
    const uint outer = o / (VKF_INNER * VKF_AXIS);
    VKF_TAKE_ALL
  }
}
