// Clip: y = min(max(x, lo), hi) (ONNX attributes "min", "max"; lo > hi gives hi, like numpy.clip)
float op_clip(float x, float lo, float hi) { return min(max(x, lo), hi); }
