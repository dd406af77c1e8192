// Min: y = a < b ? a : b
// A plain comparison rather than the min() builtin, whose result is undefined when an input is NaN.
float op_min(float a, float b) { return a < b ? a : b; }
