#include "codegen/glsl_types.h"

#include <cstdint>
#include <cstring>
#include <sstream>

namespace vkfuse {

const char* glsl_register_type(DType dtype) {
  switch (dtype) {
    case DType::kF32:
    case DType::kF16: return "float";
    case DType::kI32: return "int";
    case DType::kBool: return "bool";
    case DType::kU8: return "uint";
  }
  return "float";
}

const char* glsl_storage_type(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "float";
    case DType::kF16: return "float16_t";
    case DType::kI32: return "int";
    case DType::kBool:
    case DType::kU8: return "uint8_t";
  }
  return "float";
}

const char* glsl_storage_vec4(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "vec4";
    case DType::kF16: return "f16vec4";
    case DType::kI32: return "ivec4";
    case DType::kBool:
    case DType::kU8: return "u8vec4";
  }
  return "vec4";
}

std::string glsl_load(DType dtype, const std::string& expr) {
  switch (dtype) {
    case DType::kF32:
    case DType::kI32: return expr;
    case DType::kF16: return "float(" + expr + ")";
    case DType::kBool: return "(uint(" + expr + ") != 0u)";
    case DType::kU8: return "uint(" + expr + ")";
  }
  return expr;
}

std::string glsl_store(DType dtype, const std::string& expr) {
  switch (dtype) {
    case DType::kF32:
    case DType::kI32: return expr;
    case DType::kF16: return "float16_t(" + expr + ")";
    case DType::kBool: return "uint8_t(" + expr + " ? 1u : 0u)";
    case DType::kU8: return "uint8_t(" + expr + ")";
  }
  return expr;
}

const char* glsl_wide_vec4(DType dtype) {
  switch (dtype) {
    case DType::kF32:
    case DType::kF16: return "vec4";
    case DType::kI32: return "ivec4";
    case DType::kBool:
    case DType::kU8: return "uvec4";
  }
  return "vec4";
}

std::string glsl_wide_lane(DType dtype, const std::string& lane) {
  return dtype == DType::kBool ? "(" + lane + " != 0u)" : lane;
}

std::string glsl_store_vec4(DType dtype, const std::string (&lanes)[4]) {
  std::string wide;
  for (int l = 0; l < 4; ++l) {
    const std::string lane = dtype == DType::kBool ? "(" + lanes[l] + " ? 1u : 0u)" : lanes[l];
    wide += (l ? ", " : "") + lane;
  }
  switch (dtype) {
    case DType::kF32: return "vec4(" + wide + ")";
    case DType::kF16: return "f16vec4(vec4(" + wide + "))";
    case DType::kI32: return "ivec4(" + wide + ")";
    case DType::kBool:
    case DType::kU8: return "u8vec4(uvec4(" + wide + "))";
  }
  return wide;
}

std::string glsl_float_literal(double value) {
  const float f = static_cast<float>(value);
  std::uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof bits);
  std::ostringstream out;
  out << "VKF_F32(0x" << std::hex << bits << std::dec << "u) /*" << f << "*/";
  return out.str();
}

std::string glsl_literal(DType dtype, double value) {
  switch (dtype) {
    case DType::kF32:
    case DType::kF16: return glsl_float_literal(value);
    case DType::kI32: return std::to_string(static_cast<std::int64_t>(value));
    case DType::kBool: return value != 0.0 ? "true" : "false";
    case DType::kU8: return std::to_string(static_cast<std::uint32_t>(value)) + "u";
  }
  return "0";
}

}  // namespace vkfuse
