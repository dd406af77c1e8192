// Ceil: y = ceil(x), the smallest whole number >= x
float op_ceil(float x) { return ceil(x); }
