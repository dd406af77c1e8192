// Sqrt: y = sqrt(x)
float op_sqrt(float x) { return sqrt(x); }
