// Not / And / Or: y = !a, a && b, a || b
bool op_not(bool a) { return !a; }
bool op_and(bool a, bool b) { return a && b; }
bool op_or(bool a, bool b) { return a || b; }
