// HardSwish: y = x * max(0, min(1, x / 6 + 1/2))
float op_hard_swish(float x) { return x * clamp(x / 6.0 + 0.5, 0.0, 1.0); }
