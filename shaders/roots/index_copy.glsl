// Index-copy root: one invocation per output element, which copies the input element at
// VKF_SOURCE(o), an index expression the launcher generates (Tile: coordinates modulo the input's
// shape; Expand: numpy broadcasting).
// Defines: VKF_NUMEL, VKF_SOURCE(o).

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

void main() {
  const uint stride = gl_NumWorkGroups.x * uint(VKF_WORKGROUP_SIZE);
  for (uint o = gl_GlobalInvocationID.x; o < VKF_NUMEL; o += stride) VKF_OUT0(o, VKF_IN0(VKF_SOURCE(o)));
}
