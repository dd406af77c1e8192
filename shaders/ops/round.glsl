// Round: y = x rounded to the nearest whole number, ties to even (ONNX Round, numpy.round)
float op_round(float x) { return roundEven(x); }
