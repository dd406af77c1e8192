// Equal / Greater / Less / GreaterOrEqual / LessOrEqual: y = a == b, a > b, a < b, a >= b, a <= b
bool op_equal(float a, float b) { return a == b; }
bool op_greater(float a, float b) { return a > b; }
bool op_less(float a, float b) { return a < b; }
bool op_greater_or_equal(float a, float b) { return a >= b; }
bool op_less_or_equal(float a, float b) { return a <= b; }
