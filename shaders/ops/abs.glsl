// Abs: y = |x|
float op_abs(float x) { return abs(x); }
