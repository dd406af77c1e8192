// Where: y = cond ? a : b (a and b of any one dtype)
float op_where(bool cond, float a, float b) { return cond ? a : b; }
int op_where(bool cond, int a, int b) { return cond ? a : b; }
bool op_where(bool cond, bool a, bool b) { return cond ? a : b; }
