// Erf: y = erf(x) = 2/sqrt(pi) * integral_0^x e^(-t^2) dt
// Gelu: y = x * Phi(x) = 0.5 * x * (1 + erf(x / sqrt(2)))                      (approximate == 0)
//       y = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))              (approximate != 0)
// GLSL has no erf. Two fits, made for vkfuse (least squares refined by Lawson reweighting):
//   |x| < 1: erf(x) = x * P(x^2), P of degree 6, relative error 1.2e-9;
//   |x| >= 1: erfc(a) = t * e^(Q(t) - a^2), t = 2 / (2 + a), Q of degree 8, valid for all a in [1, inf)
//             with absolute error 1.8e-8 in the exponent, i.e. relative error 1.8e-8 in erfc.
// Gelu (erf form) uses erfc directly for x < 0, so its tiny negative-side values keep relative precision
// instead of coming from 1 + erf(x) ~ 1 - 1.

// erf(x) for |x| < 1.
float op_erf_core(float x) {
  float s = x * x;
  return x * (1.128379107e+00 + s * (-3.761262596e-01 + s * (1.128358543e-01 + s * (-2.685381286e-02 +
              s * (5.188328680e-03 + s * (-8.010197780e-04 + s * 7.853862189e-05))))));
}

// erfc(a) for any a >= 1, +inf included (the exp underflows to 0 from a ~ 10 on).
float op_erf_tail(float a) {
  float t = 2.0 / (2.0 + a);
  float q = -1.265512109e+00 + t * (1.000005007e+00 + t * (3.747763932e-01 + t * (8.721474558e-02 +
            t * (-1.195645556e-01 + t * (1.833171025e-02 + t * (-5.387881994e-01 +
            t * (6.936919093e-01 + t * -2.512249351e-01)))))));
  return t * exp(q - a * a);
}

float op_erf(float x) {
  float a = abs(x);
  if (a < 1.0) return op_erf_core(x);
  float r = 1.0 - op_erf_tail(a);
  return x < 0.0 ? -r : r;
}

float op_gelu(float x, float approximate) {
  if (approximate != 0.0) {
    // 0.5 * (1 + tanh(u)) = sigmoid(2u), evaluated without overflow as in sigmoid.glsl.
    float u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
    float e = exp(-2.0 * abs(u));
    float r = 1.0 / (1.0 + e);
    return x * (u >= 0.0 ? r : e * r);
  }
  float z = abs(x) * 0.7071067811865476;
  float erfc_z = z < 1.0 ? 1.0 - op_erf_core(z) : op_erf_tail(z);
  // Phi(x) = 1 - erfc(z) / 2 for x >= 0 and erfc(z) / 2 for x < 0.
  return x * (x >= 0.0 ? 1.0 - 0.5 * erfc_z : 0.5 * erfc_z);
}
