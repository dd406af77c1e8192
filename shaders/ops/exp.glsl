// Exp: y = e^x
float op_exp(float x) { return exp(x); }
