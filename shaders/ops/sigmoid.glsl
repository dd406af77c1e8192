// Sigmoid: y = 1 / (1 + e^-x)
// exp only ever sees -|x|, so it cannot overflow; for x < 0 the form e^x / (1 + e^x) keeps full relative
// precision down to the smallest outputs.
float op_sigmoid(float x) {
  float e = exp(-abs(x));
  float r = 1.0 / (1.0 + e);
  return x >= 0.0 ? r : e * r;
}
