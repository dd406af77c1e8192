// Elu: y = x >= 0 ? x : alpha * (e^x - 1)
// Selu: y = gamma * (x > 0 ? x : alpha * (e^x - 1))
// Celu: y = max(0, x) + min(0, alpha * (e^(x / alpha) - 1))
// The three share op_elu_expm1, e^x - 1 without the cancellation near 0: below |x| = 0.5 a fitted
// polynomial x + x^2 * P(x) (relative error 3e-9); above, e^x - 1 loses at most a bit.
float op_elu_expm1(float x) {
  if (abs(x) < 0.5) {
    float p = 5.000000596e-01 + x * (1.666666269e-01 + x * (4.166531935e-02 +
              x * (8.333634585e-03 + x * (1.399733592e-03 + x * 1.984119881e-04))));
    return x + x * x * p;
  }
  return exp(x) - 1.0;
}

float op_elu(float x, float alpha) { return x >= 0.0 ? x : alpha * op_elu_expm1(x); }

float op_selu(float x, float alpha, float gamma) {
  return gamma * (x > 0.0 ? x : alpha * op_elu_expm1(x));
}

float op_celu(float x, float alpha) {
  return max(x, 0.0) + min(alpha * op_elu_expm1(x / alpha), 0.0);
}
