// Max: y = a > b ? a : b
// A plain comparison rather than the max() builtin, whose result is undefined when an input is NaN.
float op_max(float a, float b) { return a > b ? a : b; }
