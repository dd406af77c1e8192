// Identity: y = x (any dtype)
float op_identity(float x) { return x; }
int op_identity(int x) { return x; }
bool op_identity(bool x) { return x; }
uint op_identity(uint x) { return x; }
