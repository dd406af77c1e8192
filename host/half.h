// IEEE-754 binary16 <-> float conversion on the host (round to nearest even).
#pragma once

#include <cstdint>

namespace vkfuse {

std::uint16_t float_to_half(float value);
float half_to_float(std::uint16_t bits);

}  // namespace vkfuse
