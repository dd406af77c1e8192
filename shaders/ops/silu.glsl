// Silu: y = x * sigmoid(x) = x / (1 + e^-x)
// Same overflow-free sigmoid as sigmoid.glsl (kept self-contained so either snippet can be used alone).
float op_silu(float x) {
  float e = exp(-abs(x));
  float r = 1.0 / (1.0 + e);
  return x * (x >= 0.0 ? r : e * r);
}
