// The elementwise op table: one row per op, each naming its GLSL function in
// shaders/ops/<snippet>.glsl and carrying the scalar reference that the conformance tests check it
// against.
//
// To add an elementwise op: write shaders/ops/<snippet>.glsl (first line states the maths), add a
// reference below and a row to kOps. Fusion, codegen and the GPU tests pick it up from the row.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <span>

#include "host/op_registry.h"

namespace vkfuse {
namespace {

using Inputs = std::span<const double>;
using Attrs = std::span<const float>;

constexpr double as_double(bool value) { return value ? 1.0 : 0.0; }

// Round half to even without depending on the floating-point environment's rounding mode:
// std::round goes half away from zero, and only exact ties (x - trunc(x) == 0.5, computed
// exactly) differ.
double round_half_even(double x) {
  if (std::fabs(x - std::trunc(x)) == 0.5) return 2.0 * std::round(x / 2.0);
  return std::round(x);
}

// x rounded to the nearest IEEE binary16 value, ties to even; overflows to infinity, NaN stays NaN.
double round_to_half(double x) {
  if (!std::isfinite(x)) return x;
  const double a = std::fabs(x);
  // The largest half is 65504 and its ulp is 32: from 65504 + 16 up it rounds to 2^16 = infinity.
  if (a >= 65520.0) return std::copysign(std::numeric_limits<double>::infinity(), x);
  int e = 0;
  std::frexp(a, &e);                                // a = m * 2^e with m in [0.5, 1)
  const int step_exp = std::max(e - 1, -14) - 10;  // 10 fraction bits; 2^-24 steps below 2^-14
  const double steps = std::ldexp(a, -step_exp);    // exact: a power-of-two scaling, < 2^11
  return std::copysign(std::ldexp(round_half_even(steps), step_exp), x);
}

// ln(1 + e^x) without overflow.
double softplus(double x) {
  return x > 0.0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

// --- Arithmetic ----------------------------------------------------------------------------------
double ref_add(Inputs in, Attrs) { return in[0] + in[1]; }
double ref_sub(Inputs in, Attrs) { return in[0] - in[1]; }
double ref_mul(Inputs in, Attrs) { return in[0] * in[1]; }
double ref_div(Inputs in, Attrs) { return in[0] / in[1]; }
double ref_pow(Inputs in, Attrs) { return std::pow(in[0], in[1]); }  // C semantics, as ONNX
double ref_max(Inputs in, Attrs) { return in[0] > in[1] ? in[0] : in[1]; }
double ref_min(Inputs in, Attrs) { return in[0] < in[1] ? in[0] : in[1]; }
double ref_neg(Inputs in, Attrs) { return -in[0]; }
double ref_abs(Inputs in, Attrs) { return std::fabs(in[0]); }
double ref_sign(Inputs in, Attrs) { return as_double(in[0] > 0.0) - as_double(in[0] < 0.0); }
double ref_reciprocal(Inputs in, Attrs) { return 1.0 / in[0]; }
double ref_floor(Inputs in, Attrs) { return std::floor(in[0]); }
double ref_ceil(Inputs in, Attrs) { return std::ceil(in[0]); }
double ref_round(Inputs in, Attrs) { return round_half_even(in[0]); }

// --- Transcendental ------------------------------------------------------------------------------
double ref_exp(Inputs in, Attrs) { return std::exp(in[0]); }
double ref_log(Inputs in, Attrs) { return std::log(in[0]); }
double ref_sqrt(Inputs in, Attrs) { return std::sqrt(in[0]); }
double ref_sin(Inputs in, Attrs) { return std::sin(in[0]); }
double ref_cos(Inputs in, Attrs) { return std::cos(in[0]); }
double ref_erf(Inputs in, Attrs) { return std::erf(in[0]); }

// --- Activations (attributes in table order) -----------------------------------------------------
double ref_relu(Inputs in, Attrs) { return std::max(in[0], 0.0); }
double ref_leaky_relu(Inputs in, Attrs at) { return in[0] >= 0.0 ? in[0] : at[0] * in[0]; }
double ref_prelu(Inputs in, Attrs) { return in[0] >= 0.0 ? in[0] : in[1] * in[0]; }
double ref_elu(Inputs in, Attrs at) { return in[0] >= 0.0 ? in[0] : at[0] * std::expm1(in[0]); }
double ref_selu(Inputs in, Attrs at) {
  return at[1] * (in[0] > 0.0 ? in[0] : at[0] * std::expm1(in[0]));
}
double ref_celu(Inputs in, Attrs at) {
  return std::max(0.0, in[0]) + std::min(0.0, at[0] * std::expm1(in[0] / at[0]));
}
double ref_clip(Inputs in, Attrs at) {
  return std::min(std::max(in[0], double{at[0]}), double{at[1]});
}
double ref_sigmoid(Inputs in, Attrs) { return 1.0 / (1.0 + std::exp(-in[0])); }
double ref_hard_sigmoid(Inputs in, Attrs at) { return std::clamp(at[0] * in[0] + at[1], 0.0, 1.0); }
double ref_tanh(Inputs in, Attrs) { return std::tanh(in[0]); }
double ref_hard_swish(Inputs in, Attrs) { return in[0] * std::clamp(in[0] / 6.0 + 0.5, 0.0, 1.0); }
double ref_softplus(Inputs in, Attrs) { return softplus(in[0]); }
double ref_softsign(Inputs in, Attrs) { return in[0] / (1.0 + std::fabs(in[0])); }
double ref_mish(Inputs in, Attrs) { return in[0] * std::tanh(softplus(in[0])); }
double ref_silu(Inputs in, Attrs) { return in[0] / (1.0 + std::exp(-in[0])); }
double ref_gelu(Inputs in, Attrs at) {
  const double x = in[0];
  if (at[0] != 0.0f) {
    const double k = std::sqrt(2.0 / std::numbers::pi);
    return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
  }
  // = 0.5 x (1 + erf(x / sqrt 2)), without the cancellation in 1 + erf for x << 0.
  return 0.5 * x * std::erfc(-x / std::numbers::sqrt2);
}

// --- Selection, comparison, logic (bools are 0.0 / 1.0) ------------------------------------------
double ref_where(Inputs in, Attrs) { return in[0] != 0.0 ? in[1] : in[2]; }
double ref_equal(Inputs in, Attrs) { return as_double(in[0] == in[1]); }
double ref_greater(Inputs in, Attrs) { return as_double(in[0] > in[1]); }
double ref_less(Inputs in, Attrs) { return as_double(in[0] < in[1]); }
double ref_greater_or_equal(Inputs in, Attrs) { return as_double(in[0] >= in[1]); }
double ref_less_or_equal(Inputs in, Attrs) { return as_double(in[0] <= in[1]); }
double ref_not(Inputs in, Attrs) { return as_double(in[0] == 0.0); }
double ref_and(Inputs in, Attrs) { return as_double(in[0] != 0.0 && in[1] != 0.0); }
double ref_or(Inputs in, Attrs) { return as_double(in[0] != 0.0 || in[1] != 0.0); }

// --- Conversion ----------------------------------------------------------------------------------
double ref_cast(Inputs in, Attrs at) {
  const double x = in[0];
  switch (static_cast<DType>(at[0])) {
    case DType::kF32: return static_cast<double>(static_cast<float>(x));
    case DType::kF16: return round_to_half(x);
    case DType::kI32: return std::trunc(x);  // toward zero, like C and ONNX
    case DType::kBool: return as_double(x != 0.0);
    case DType::kU8: return std::isnan(x) ? 0.0 : std::clamp(std::trunc(x), 0.0, 255.0);
  }
  return std::numeric_limits<double>::quiet_NaN();  // not a DType; type inference rejects it first
}
double ref_identity(Inputs in, Attrs) { return in[0]; }

// --- Attribute tables (ONNX names and defaults) --------------------------------------------------
constexpr AttrDef kLeakyReluAttrs[] = {{"alpha", 0.01f}};
constexpr AttrDef kEluAttrs[] = {{"alpha", 1.0f}};
constexpr AttrDef kSeluAttrs[] = {{"alpha", 1.67326319217681884765625f},
                                  {"gamma", 1.05070102214813232421875f}};
constexpr AttrDef kCeluAttrs[] = {{"alpha", 1.0f}};
constexpr AttrDef kClipAttrs[] = {{"min", std::numeric_limits<float>::lowest()},
                                  {"max", std::numeric_limits<float>::max()}};
constexpr AttrDef kHardSigmoidAttrs[] = {{"alpha", 0.2f}, {"beta", 0.5f}};
// ONNX spells it as a string, "none" or "tanh"; the importer maps it to 0 or 1.
constexpr AttrDef kGeluAttrs[] = {{"approximate", 0.0f}};
constexpr AttrDef kCastAttrs[] = {{"to", static_cast<float>(DType::kF32)}};

// Short names for the table.
constexpr std::span<const AttrDef> kNoAttrs{};
constexpr OpKind kEw = OpKind::kElementwise;
constexpr InputClass kFloatIn = InputClass::kFloat;
constexpr InputClass kBoolIn = InputClass::kBool;
constexpr InputClass kAnyIn = InputClass::kAny;
constexpr TypeRule kSameAsFirst = TypeRule::kSameAsFirst;
constexpr TypeRule kBoolOut = TypeRule::kBool;
constexpr Tolerance kExact = Tolerance::kExact;
constexpr Tolerance kSmooth = Tolerance::kSmooth;

// Test domains. Inputs are drawn where the op is defined and well conditioned.
constexpr TestDomain kDefault{};                                    // [-4, 4]
constexpr TestDomain kWide{.lo = -8.0f, .hi = 8.0f};  // both saturated tails and the middle
constexpr TestDomain kNonZero{.lo = -4.0f, .hi = 4.0f, .min_magnitude = 0.25f};  // divisors
constexpr TestDomain kWhole{.lo = -4.0f, .hi = 4.0f, .integers = true};  // zeros, equality occur

// Every op above, in a stable order. Costs are rough ALU counts in adds (Add = 1, Exp ~ 8).
constexpr OpDef kOps[] = {
    // Arithmetic. IEEE-exact on the GPU (division within 2.5 ulp), so kExact. Pow goes through
    // exp2(b * log2|a|) on every driver: kSmooth. One domain serves both inputs, so Pow's is a
    // positive base range (exponents then lie in [0.1, 4] too); the negative-base branch needs its
    // own test.
    {.name = "Add", .kind = kEw, .arity = 2, .snippet = "add", .glsl_function = "op_add",
     .input_class = {kFloatIn, kFloatIn}, .type_rule = kSameAsFirst, .attrs = kNoAttrs,
     .reference = ref_add, .cost = 1, .tolerance = kExact, .domain = kDefault},
    {.name = "Sub", .kind = kEw, .arity = 2, .snippet = "sub", .glsl_function = "op_sub",
     .input_class = {kFloatIn, kFloatIn}, .type_rule = kSameAsFirst, .attrs = kNoAttrs,
     .reference = ref_sub, .cost = 1, .tolerance = kExact, .domain = kDefault},
    {.name = "Mul", .kind = kEw, .arity = 2, .snippet = "mul", .glsl_function = "op_mul",
     .input_class = {kFloatIn, kFloatIn}, .type_rule = kSameAsFirst, .attrs = kNoAttrs,
     .reference = ref_mul, .cost = 1, .tolerance = kExact, .domain = kDefault, .linear_inputs = 0b11},
    {.name = "Div", .kind = kEw, .arity = 2, .snippet = "div", .glsl_function = "op_div",
     .input_class = {kFloatIn, kFloatIn}, .type_rule = kSameAsFirst, .attrs = kNoAttrs,
     .reference = ref_div, .cost = 4, .tolerance = kExact, .domain = kNonZero, .linear_inputs = 0b01},
    {.name = "Pow", .kind = kEw, .arity = 2, .snippet = "pow", .glsl_function = "op_pow",
     .input_class = {kFloatIn, kFloatIn}, .type_rule = kSameAsFirst, .attrs = kNoAttrs,
     .reference = ref_pow, .cost = 16, .tolerance = kSmooth, .domain = {.lo = 0.1f, .hi = 4.0f}},
    {.name = "Max", .kind = kEw, .arity = 2, .snippet = "max", .glsl_function = "op_max",
     .input_class = {kFloatIn, kFloatIn}, .type_rule = kSameAsFirst, .attrs = kNoAttrs,
     .reference = ref_max, .cost = 1, .tolerance = kExact, .domain = kDefault},
    {.name = "Min", .kind = kEw, .arity = 2, .snippet = "min", .glsl_function = "op_min",
     .input_class = {kFloatIn, kFloatIn}, .type_rule = kSameAsFirst, .attrs = kNoAttrs,
     .reference = ref_min, .cost = 1, .tolerance = kExact, .domain = kDefault},
    {.name = "Neg", .kind = kEw, .arity = 1, .snippet = "neg", .glsl_function = "op_neg",
     .input_class = {kFloatIn}, .type_rule = kSameAsFirst, .attrs = kNoAttrs, .reference = ref_neg,
     .cost = 1, .tolerance = kExact, .domain = kDefault},
    {.name = "Abs", .kind = kEw, .arity = 1, .snippet = "abs", .glsl_function = "op_abs",
     .input_class = {kFloatIn}, .type_rule = kSameAsFirst, .attrs = kNoAttrs, .reference = ref_abs,
     .cost = 1, .tolerance = kExact, .domain = kDefault},
    // whole numbers so Sign(0) = 0 is exercised
    {.name = "Sign", .kind = kEw, .arity = 1, .snippet = "sign", .glsl_function = "op_sign",
     .input_class = {kFloatIn}, .type_rule = kSameAsFirst, .attrs = kNoAttrs, .reference = ref_sign,
     .cost = 2, .tolerance = kExact, .domain = kWhole},
    {.name = "Reciprocal", .kind = kEw, .arity = 1, .snippet = "reciprocal",
     .glsl_function = "op_reciprocal", .input_class = {kFloatIn}, .type_rule = kSameAsFirst,
     .attrs = kNoAttrs, .reference = ref_reciprocal, .cost = 4, .tolerance = kExact,
     .domain = kNonZero},
    // Rounding. Random floats in [-8, 8]: exact .5 ties are rare there, a tie test must add them.
    {.name = "Floor", .kind = kEw, .arity = 1, .snippet = "floor", .glsl_function = "op_floor",
     .input_class = {kFloatIn}, .type_rule = kSameAsFirst, .attrs = kNoAttrs,
     .reference = ref_floor, .cost = 1, .tolerance = kExact, .domain = kWide},
    {.name = "Ceil", .kind = kEw, .arity = 1, .snippet = "ceil", .glsl_function = "op_ceil",
     .input_class = {kFloatIn}, .type_rule = kSameAsFirst, .attrs = kNoAttrs, .reference = ref_ceil,
     .cost = 1, .tolerance = kExact, .domain = kWide},
    {.name = "Round", .kind = kEw, .arity = 1, .snippet = "round", .glsl_function = "op_round",
     .input_class = {kFloatIn}, .type_rule = kSameAsFirst, .attrs = kNoAttrs,
     .reference = ref_round, .cost = 1, .tolerance = kExact, .domain = kWide},

    // Transcendental: driver built-ins (Erf: our own fit, see erf.glsl), kSmooth. Sin/Cos stay in
    // [-pi, pi], the range the Vulkan precision requirements speak about.
    {.name = "Exp", .kind = kEw, .arity = 1, .snippet = "exp", .glsl_function = "op_exp",
     .input_class = {kFloatIn}, .type_rule = kSameAsFirst, .attrs = kNoAttrs, .reference = ref_exp,
     .cost = 8, .tolerance = kSmooth, .domain = kWide},
    {.name = "Log", .kind = kEw, .arity = 1, .snippet = "log", .glsl_function = "op_log",
     .input_class = {kFloatIn}, .type_rule = kSameAsFirst, .attrs = kNoAttrs, .reference = ref_log,
     .cost = 8, .tolerance = kSmooth, .domain = {.lo = 0.05f, .hi = 8.0f}},
    {.name = "Sqrt", .kind = kEw, .arity = 1, .snippet = "sqrt", .glsl_function = "op_sqrt",
     .input_class = {kFloatIn}, .type_rule = kSameAsFirst, .attrs = kNoAttrs, .reference = ref_sqrt,
     .cost = 4, .tolerance = kSmooth, .domain = {.lo = 0.0f, .hi = 8.0f}},
    {.name = "Sin", .kind = kEw, .arity = 1, .snippet = "sin", .glsl_function = "op_sin",
     .input_class = {kFloatIn}, .type_rule = kSameAsFirst, .attrs = kNoAttrs, .reference = ref_sin,
     .cost = 8, .tolerance = kSmooth, .domain = {.lo = -3.14159f, .hi = 3.14159f}},
    {.name = "Cos", .kind = kEw, .arity = 1, .snippet = "cos", .glsl_function = "op_cos",
     .input_class = {kFloatIn}, .type_rule = kSameAsFirst, .attrs = kNoAttrs, .reference = ref_cos,
     .cost = 8, .tolerance = kSmooth, .domain = {.lo = -3.14159f, .hi = 3.14159f}},
    {.name = "Erf", .kind = kEw, .arity = 1, .snippet = "erf", .glsl_function = "op_erf",
     .input_class = {kFloatIn}, .type_rule = kSameAsFirst, .attrs = kNoAttrs, .reference = ref_erf,
     .cost = 16, .tolerance = kSmooth, .domain = kDefault},

    // Piecewise-linear activations: kExact (HardSigmoid/HardSwish round a few times, inside 1e-6).
    {.name = "Relu", .kind = kEw, .arity = 1, .snippet = "relu", .glsl_function = "op_relu",
     .input_class = {kFloatIn}, .type_rule = kSameAsFirst, .attrs = kNoAttrs, .reference = ref_relu,
     .cost = 1, .tolerance = kExact, .domain = kDefault},
    {.name = "LeakyRelu", .kind = kEw, .arity = 1, .snippet = "leaky_relu",
     .glsl_function = "op_leaky_relu", .input_class = {kFloatIn}, .type_rule = kSameAsFirst,
     .attrs = kLeakyReluAttrs, .reference = ref_leaky_relu, .cost = 2, .tolerance = kExact,
     .domain = kDefault},
    {.name = "PRelu", .kind = kEw, .arity = 2, .snippet = "prelu", .glsl_function = "op_prelu",
     .input_class = {kFloatIn, kFloatIn}, .type_rule = kSameAsFirst, .attrs = kNoAttrs,
     .reference = ref_prelu, .cost = 2, .tolerance = kExact, .domain = kDefault},
    {.name = "Clip", .kind = kEw, .arity = 1, .snippet = "clip", .glsl_function = "op_clip",
     .input_class = {kFloatIn}, .type_rule = kSameAsFirst, .attrs = kClipAttrs,
     .reference = ref_clip, .cost = 2, .tolerance = kExact, .domain = kDefault},
    {.name = "HardSigmoid", .kind = kEw, .arity = 1, .snippet = "hard_sigmoid",
     .glsl_function = "op_hard_sigmoid", .input_class = {kFloatIn}, .type_rule = kSameAsFirst,
     .attrs = kHardSigmoidAttrs, .reference = ref_hard_sigmoid, .cost = 3, .tolerance = kExact,
     .domain = kDefault},
    {.name = "HardSwish", .kind = kEw, .arity = 1, .snippet = "hard_swish",
     .glsl_function = "op_hard_swish", .input_class = {kFloatIn}, .type_rule = kSameAsFirst,
     .attrs = kNoAttrs, .reference = ref_hard_swish, .cost = 4, .tolerance = kExact,
     .domain = kDefault},
    {.name = "Softsign", .kind = kEw, .arity = 1, .snippet = "softsign",
     .glsl_function = "op_softsign", .input_class = {kFloatIn}, .type_rule = kSameAsFirst,
     .attrs = kNoAttrs, .reference = ref_softsign, .cost = 6, .tolerance = kExact, .domain = kWide},

    // Smooth activations: overflow-free forms in the snippets (exp only ever sees a non-positive
    // argument or a clamped one), kSmooth, tested across both tails.
    {.name = "Elu", .kind = kEw, .arity = 1, .snippet = "elu", .glsl_function = "op_elu",
     .input_class = {kFloatIn}, .type_rule = kSameAsFirst, .attrs = kEluAttrs, .reference = ref_elu,
     .cost = 10, .tolerance = kSmooth, .domain = kWide},
    {.name = "Selu", .kind = kEw, .arity = 1, .snippet = "elu", .glsl_function = "op_selu",
     .input_class = {kFloatIn}, .type_rule = kSameAsFirst, .attrs = kSeluAttrs,
     .reference = ref_selu, .cost = 11, .tolerance = kSmooth, .domain = kWide},
    {.name = "Celu", .kind = kEw, .arity = 1, .snippet = "elu", .glsl_function = "op_celu",
     .input_class = {kFloatIn}, .type_rule = kSameAsFirst, .attrs = kCeluAttrs,
     .reference = ref_celu, .cost = 14, .tolerance = kSmooth, .domain = kWide},
    {.name = "Sigmoid", .kind = kEw, .arity = 1, .snippet = "sigmoid",
     .glsl_function = "op_sigmoid", .input_class = {kFloatIn}, .type_rule = kSameAsFirst,
     .attrs = kNoAttrs, .reference = ref_sigmoid, .cost = 10, .tolerance = kSmooth,
     .domain = kWide},
    {.name = "Tanh", .kind = kEw, .arity = 1, .snippet = "tanh", .glsl_function = "op_tanh",
     .input_class = {kFloatIn}, .type_rule = kSameAsFirst, .attrs = kNoAttrs, .reference = ref_tanh,
     .cost = 10, .tolerance = kSmooth, .domain = kWide},
    {.name = "Softplus", .kind = kEw, .arity = 1, .snippet = "softplus",
     .glsl_function = "op_softplus", .input_class = {kFloatIn}, .type_rule = kSameAsFirst,
     .attrs = kNoAttrs, .reference = ref_softplus, .cost = 16, .tolerance = kSmooth,
     .domain = kWide},
    {.name = "Mish", .kind = kEw, .arity = 1, .snippet = "mish", .glsl_function = "op_mish",
     .input_class = {kFloatIn}, .type_rule = kSameAsFirst, .attrs = kNoAttrs, .reference = ref_mish,
     .cost = 24, .tolerance = kSmooth, .domain = kWide},
    {.name = "Silu", .kind = kEw, .arity = 1, .snippet = "silu", .glsl_function = "op_silu",
     .input_class = {kFloatIn}, .type_rule = kSameAsFirst, .attrs = kNoAttrs, .reference = ref_silu,
     .cost = 11, .tolerance = kSmooth, .domain = kWide},
    {.name = "Gelu", .kind = kEw, .arity = 1, .snippet = "erf", .glsl_function = "op_gelu",
     .input_class = {kFloatIn}, .type_rule = kSameAsFirst, .attrs = kGeluAttrs,
     .reference = ref_gelu, .cost = 18, .tolerance = kSmooth, .domain = {.lo = -6.0f, .hi = 6.0f}},

    // Selection and comparisons. Whole-number operands so that equality actually occurs.
    {.name = "Where", .kind = kEw, .arity = 3, .snippet = "where", .glsl_function = "op_where",
     .input_class = {kBoolIn, kAnyIn, kAnyIn}, .type_rule = TypeRule::kSameAsSecond,
     .attrs = kNoAttrs, .reference = ref_where, .cost = 1, .tolerance = kExact, .domain = kDefault},
    {.name = "Equal", .kind = kEw, .arity = 2, .snippet = "compare", .glsl_function = "op_equal",
     .input_class = {kFloatIn, kFloatIn}, .type_rule = kBoolOut, .attrs = kNoAttrs,
     .reference = ref_equal, .cost = 1, .tolerance = kExact, .domain = kWhole},
    {.name = "Greater", .kind = kEw, .arity = 2, .snippet = "compare",
     .glsl_function = "op_greater", .input_class = {kFloatIn, kFloatIn}, .type_rule = kBoolOut,
     .attrs = kNoAttrs, .reference = ref_greater, .cost = 1, .tolerance = kExact, .domain = kWhole},
    {.name = "Less", .kind = kEw, .arity = 2, .snippet = "compare", .glsl_function = "op_less",
     .input_class = {kFloatIn, kFloatIn}, .type_rule = kBoolOut, .attrs = kNoAttrs,
     .reference = ref_less, .cost = 1, .tolerance = kExact, .domain = kWhole},
    {.name = "GreaterOrEqual", .kind = kEw, .arity = 2, .snippet = "compare",
     .glsl_function = "op_greater_or_equal", .input_class = {kFloatIn, kFloatIn},
     .type_rule = kBoolOut, .attrs = kNoAttrs, .reference = ref_greater_or_equal, .cost = 1,
     .tolerance = kExact, .domain = kWhole},
    {.name = "LessOrEqual", .kind = kEw, .arity = 2, .snippet = "compare",
     .glsl_function = "op_less_or_equal", .input_class = {kFloatIn, kFloatIn},
     .type_rule = kBoolOut, .attrs = kNoAttrs, .reference = ref_less_or_equal, .cost = 1,
     .tolerance = kExact, .domain = kWhole},

    // Logic on bools.
    {.name = "Not", .kind = kEw, .arity = 1, .snippet = "logic", .glsl_function = "op_not",
     .input_class = {kBoolIn}, .type_rule = kBoolOut, .attrs = kNoAttrs, .reference = ref_not,
     .cost = 1, .tolerance = kExact, .domain = kDefault},
    {.name = "And", .kind = kEw, .arity = 2, .snippet = "logic", .glsl_function = "op_and",
     .input_class = {kBoolIn, kBoolIn}, .type_rule = kBoolOut, .attrs = kNoAttrs,
     .reference = ref_and, .cost = 1, .tolerance = kExact, .domain = kDefault},
    {.name = "Or", .kind = kEw, .arity = 2, .snippet = "logic", .glsl_function = "op_or",
     .input_class = {kBoolIn, kBoolIn}, .type_rule = kBoolOut, .attrs = kNoAttrs,
     .reference = ref_or, .cost = 1, .tolerance = kExact, .domain = kDefault},

    // Conversion. Cast's "{out}" picks op_cast_to_f32/f16/i32/bool/u8, each with float/int/bool/uint
    // overloads.
    {.name = "Cast", .kind = kEw, .arity = 1, .snippet = "cast",
     .glsl_function = "op_cast_to_{out}", .input_class = {kAnyIn}, .type_rule = TypeRule::kCastAttr,
     .attrs = kCastAttrs, .reference = ref_cast, .cost = 1, .tolerance = kExact,
     .domain = kDefault},
    {.name = "Identity", .kind = kEw, .arity = 1, .snippet = "identity",
     .glsl_function = "op_identity", .input_class = {kAnyIn}, .type_rule = kSameAsFirst,
     .attrs = kNoAttrs, .reference = ref_identity, .cost = 0, .tolerance = kExact,
     .domain = kDefault, .copies_input = true},
};

}  // namespace

std::span<const OpDef> elementwise_ops() { return kOps; }

}  // namespace vkfuse
