// Element of a linear Resize (over the last two dimensions), alone: output element i, interpolated
// between the two neighbours of its source coordinate in each of the two dimensions, clamped to the
// input; the source coordinate along a dimension is the exact fraction (x * NUM + OFF) / DEN (see
// roots/resize.glsl). For a consumer kernel that computes it where it loads it (KernelElement) and for
// the Resize's own root, which stores each. X is VKF_E_IN0.
// Defines (u: uint, else int): VKF_E_OUT_H u, VKF_E_OUT_W u, VKF_E_IN_H, VKF_E_IN_W, VKF_E_NUM_H,
// VKF_E_OFF_H, VKF_E_DEN_H, VKF_E_NUM_W, VKF_E_OFF_W, VKF_E_DEN_W.

// The source coordinate of x: (floor, remainder over the denominator).
ivec2 vkf_linear_source(int x, int num, int offset, int den) {
  const int t = x * num + offset;
  const int q = t >= 0 ? t / den : -((den - 1 - t) / den);
  return ivec2(q, t - q * den);
}

float vkf_element(uint i) {
  const ivec2 sx = vkf_linear_source(int(i % VKF_E_OUT_W), VKF_E_NUM_W, VKF_E_OFF_W, VKF_E_DEN_W);
  const ivec2 sy = vkf_linear_source(int((i / VKF_E_OUT_W) % VKF_E_OUT_H), VKF_E_NUM_H, VKF_E_OFF_H, VKF_E_DEN_H);
  const uint x0 = uint(clamp(sx.x, 0, VKF_E_IN_W - 1)), x1 = uint(clamp(sx.x + 1, 0, VKF_E_IN_W - 1));
  const uint y0 = uint(clamp(sy.x, 0, VKF_E_IN_H - 1)), y1 = uint(clamp(sy.x + 1, 0, VKF_E_IN_H - 1));
  const float fx = float(sx.y) / float(VKF_E_DEN_W);
  const float fy = float(sy.y) / float(VKF_E_DEN_H);
  const uint base = (i / (VKF_E_OUT_W * VKF_E_OUT_H)) * uint(VKF_E_IN_H * VKF_E_IN_W);
  const float top = mix(float(VKF_E_IN0(base + y0 * uint(VKF_E_IN_W) + x0)), float(VKF_E_IN0(base + y0 * uint(VKF_E_IN_W) + x1)), fx);
  const float bottom = mix(float(VKF_E_IN0(base + y1 * uint(VKF_E_IN_W) + x0)), float(VKF_E_IN0(base + y1 * uint(VKF_E_IN_W) + x1)), fx);
  return mix(top, bottom, fy);
}
