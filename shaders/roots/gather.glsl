// Gather root: one invocation per output element, the output viewed as [outer, VKF_COUNT, VKF_INNER]
// and the data as [outer, VKF_AXIS_SIZE, VKF_INNER]. Input 1 holds the i32 indices; a negative index
// counts from the end. An index outside [-n, n) is invalid (ONNX); it is clamped so that no invocation
// reads outside the data.
// Defines: VKF_NUMEL, VKF_INNER, VKF_COUNT (number of indices), VKF_AXIS_SIZE (int).

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

void main() {
  const uint stride = gl_NumWorkGroups.x * uint(VKF_WORKGROUP_SIZE);
  for (uint o = gl_GlobalInvocationID.x; o < VKF_NUMEL; o += stride) {
    const uint r = o % VKF_INNER;
    const uint j = (o / VKF_INNER) % VKF_COUNT;
    const uint outer = o / (VKF_INNER * VKF_COUNT);
    int index = VKF_IN1(j);
    if (index < 0) index += VKF_AXIS_SIZE;
    index = clamp(index, 0, VKF_AXIS_SIZE - 1);
    VKF_OUT0(o, VKF_IN0((outer * uint(VKF_AXIS_SIZE) + uint(index)) * VKF_INNER + r));
  }
}
