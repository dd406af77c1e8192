// Relu: y = max(0, x)
float op_relu(float x) { return max(x, 0.0); }
