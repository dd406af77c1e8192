// Floor: y = floor(x), the largest whole number <= x
float op_floor(float x) { return floor(x); }
