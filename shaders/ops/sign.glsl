// Sign: y = 1 if x > 0, -1 if x < 0, 0 if x == 0
float op_sign(float x) { return sign(x); }
