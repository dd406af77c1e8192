// Neg: y = -x
float op_neg(float x) { return -x; }
