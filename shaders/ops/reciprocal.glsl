// Reciprocal: y = 1 / x
float op_reciprocal(float x) { return 1.0 / x; }
