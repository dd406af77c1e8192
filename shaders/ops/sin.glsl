// Sin: y = sin(x)
float op_sin(float x) { return sin(x); }
