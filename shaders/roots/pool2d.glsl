// Pool root (2-D over planes): one invocation per output element Y[plane, oh, ow], computed by
// elements/pool2d.glsl's vkf_element (KernelLaunch::element: the code generator places it before this
// root, reading VKF_IN0), the formula a consumer's loads run too: the max or the fp32 sum of the
// window's taps inside the input. A global pool is the window 1 x (whole flattened spatial extent).
// Average divisor: the taps inside the input, or with VKF_E_COUNT_INCLUDE_PAD the taps inside the padded
// input (rows < VKF_E_H_END, columns < VKF_E_W_END; a ceil_mode window may reach past both). A window
// with no input tap yields -FLT_MAX (max) or 0 (average).
// Defines: VKF_OUTPUTS u (planes x OH x OW), and elements/pool2d.glsl's.

layout(local_size_x = VKF_WORKGROUP_SIZE) in;

void main() {
  const uint stride = gl_NumWorkGroups.x * uint(VKF_WORKGROUP_SIZE);
  for (uint o = gl_GlobalInvocationID.x; o < VKF_OUTPUTS; o += stride) VKF_OUT0(o, vkf_element(o));
}
