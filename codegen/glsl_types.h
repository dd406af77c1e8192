// How vkfuse dtypes appear in GLSL: register types the chains compute in, storage types in buffers,
// conversions between them, and exact literals.
#pragma once

#include <string>

#include <vkfuse/types.hpp>

namespace vkfuse {

const char* glsl_register_type(DType dtype);  // float (f32, f16), int, bool
const char* glsl_storage_type(DType dtype);   // float, float16_t, int, uint8_t
const char* glsl_storage_vec4(DType dtype);   // vec4, f16vec4, ivec4, u8vec4
std::string glsl_load(DType dtype, const std::string& storage_expr);    // storage -> register
std::string glsl_store(DType dtype, const std::string& register_expr);  // register -> storage
// Vector loads: a storage vec4 is widened to a 32-bit vector (vec4, vec4, ivec4, uvec4), whose lanes
// then convert to the register type.
const char* glsl_wide_vec4(DType dtype);
std::string glsl_wide_lane(DType dtype, const std::string& lane_expr);
// Four register lanes -> one storage vec4. Built through a 32-bit vector: 8- and 16-bit vectors can
// only be converted from vectors without the explicit-arithmetic-types extensions.
std::string glsl_store_vec4(DType dtype, const std::string (&lanes)[4]);
// Bit-exact float literal (inf and NaN included), with the value in a comment.
std::string glsl_float_literal(double value);
std::string glsl_literal(DType dtype, double value);

}  // namespace vkfuse
