// Mul: y = a * b
float op_mul(float a, float b) { return a * b; }
