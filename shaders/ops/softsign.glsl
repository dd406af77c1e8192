// Softsign: y = x / (1 + |x|)
float op_softsign(float x) { return x / (1.0 + abs(x)); }
