// PRelu: y = x >= 0 ? x : slope * x (slope is the second input, broadcast like any other)
float op_prelu(float x, float slope) { return x >= 0.0 ? x : slope * x; }
