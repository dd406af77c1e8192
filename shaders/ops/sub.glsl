// Sub: y = a - b
float op_sub(float a, float b) { return a - b; }
