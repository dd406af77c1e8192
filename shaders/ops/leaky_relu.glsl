// LeakyRelu: y = x >= 0 ? x : alpha * x
float op_leaky_relu(float x, float alpha) { return x >= 0.0 ? x : alpha * x; }
