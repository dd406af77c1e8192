// Div: y = a / b
float op_div(float a, float b) { return a / b; }
