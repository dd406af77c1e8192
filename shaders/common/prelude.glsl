// Prelude: shared by every generated kernel. The code generator emits #version, extensions and the
// VKF_* constants before this file.

// Exact float literal from its IEEE-754 bits (covers inf and NaN, which GLSL cannot spell).
#define VKF_F32(bits) uintBitsToFloat(bits)
