// Softplus: y = ln(1 + e^x) = max(x, 0) + ln(1 + e^-|x|)
// The second form never overflows. ln(1 + u) for u = e^-|x| in (0, 1] is computed as 2 atanh(s) with
// s = u / (2 + u) in (0, 1/3], a fitted odd polynomial (relative error 4e-9), so small results keep their
// relative precision (the built-in log is only accurate to an absolute 2^-21 near 1).
float op_softplus(float x) {
  float u = exp(-abs(x));
  float s = u / (2.0 + u);
  float s2 = s * s;
  float log1p_u = 2.0 * s + s * s2 * (6.666631699e-01 + s2 * (4.002490640e-01 +
                  s2 * (2.796061635e-01 + s2 * 2.817834020e-01)));
  return max(x, 0.0) + log1p_u;
}
