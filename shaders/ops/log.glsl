// Log: y = ln(x)
float op_log(float x) { return log(x); }
