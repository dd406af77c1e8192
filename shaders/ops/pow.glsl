// Pow: y = a^b with C/ONNX semantics: a < 0 with a whole b gives (-1)^b * |a|^b, a < 0 otherwise NaN
// GLSL pow() is undefined for a < 0 and for a == 0 with b <= 0, so only |a| > 0 reaches it.
float op_pow(float a, float b) {
  if (b == 0.0) return 1.0;  // pow(x, 0) = 1 for every x
  float m = abs(a);
  if (m == 0.0) {
    m = b > 0.0 ? 0.0 : uintBitsToFloat(0x7f800000u);  // 0^b: 0 for b > 0, +inf for b < 0
  } else {
    m = pow(m, b);
  }
  if (a < 0.0) {
    if (floor(b) != b) return uintBitsToFloat(0x7fc00000u);  // negative base, fractional exponent: NaN
    if (fract(b * 0.5) != 0.0) m = -m;                       // odd exponent (b * 0.5 is exact)
  }
  return m;
}
