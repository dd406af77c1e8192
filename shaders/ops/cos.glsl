// Cos: y = cos(x)
float op_cos(float x) { return cos(x); }
