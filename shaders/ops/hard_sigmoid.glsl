// HardSigmoid: y = max(0, min(1, alpha * x + beta))
float op_hard_sigmoid(float x, float alpha, float beta) { return clamp(alpha * x + beta, 0.0, 1.0); }
