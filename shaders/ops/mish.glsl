// Mish: y = x * tanh(softplus(x)) = x * tanh(ln(1 + e^x))
// With e = e^x, tanh(ln(1 + e)) = ((1 + e)^2 - 1) / ((1 + e)^2 + 1) = n / (n + 2) where n = e * (e + 2):
// no cancellation for x << 0 (n ~ 2e), and above x = 20 the factor is 1 in fp32 (1 - 2e^-40), which also
// keeps e * e far from overflow.
float op_mish(float x) {
  if (x > 20.0) return x;
  float e = exp(x);
  float n = e * (e + 2.0);
  return x * (n / (n + 2.0));
}
