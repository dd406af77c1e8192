// Add: y = a + b
float op_add(float a, float b) { return a + b; }
