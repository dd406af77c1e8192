// Cast: y = x converted to the output dtype (ONNX Cast; attribute "to" = the target DType as a number)
// The code generator calls op_cast_to_<f32|f16|i32|bool|u8>(x, to); the overload follows the input's register
// type (float for f32/f16, int for i32, bool, uint for u8). To u8 truncates toward zero and saturates at
// 0..255 (NaN -> 0), as HostTensor::from_floats does. Float to int truncates toward zero (GLSL int(), like C and
// ONNX); anything to bool is x != 0; bool to a number is 0 or 1. Cast to f16 rounds the value to half
// precision (registers stay float), with no extension: packHalf2x16 does the rounding.
float op_cast_to_f32(float x, float to) { return x; }
float op_cast_to_f32(int x, float to) { return float(x); }
float op_cast_to_f32(bool x, float to) { return float(x); }
float op_cast_to_f32(uint x, float to) { return float(x); }

float op_cast_to_f16(float x, float to) { return unpackHalf2x16(packHalf2x16(vec2(x, 0.0))).x; }
float op_cast_to_f16(int x, float to) { return unpackHalf2x16(packHalf2x16(vec2(float(x), 0.0))).x; }
float op_cast_to_f16(bool x, float to) { return float(x); }
float op_cast_to_f16(uint x, float to) { return float(x); }

int op_cast_to_i32(float x, float to) { return int(x); }
int op_cast_to_i32(int x, float to) { return x; }
int op_cast_to_i32(bool x, float to) { return int(x); }
int op_cast_to_i32(uint x, float to) { return int(x); }

bool op_cast_to_bool(float x, float to) { return x != 0.0; }
bool op_cast_to_bool(int x, float to) { return x != 0; }
bool op_cast_to_bool(bool x, float to) { return x; }
bool op_cast_to_bool(uint x, float to) { return x != 0u; }

uint op_cast_to_u8(float x, float to) { return isnan(x) ? 0u : uint(clamp(trunc(x), 0.0, 255.0)); }
uint op_cast_to_u8(int x, float to) { return uint(clamp(x, 0, 255)); }
uint op_cast_to_u8(bool x, float to) { return uint(x); }
uint op_cast_to_u8(uint x, float to) { return x; }
