#include "pattern.h"

#include <algorithm>

namespace viewer {

void draw_pattern(std::vector<uint8_t>& rgba, int width, int height, int64_t t) {
  rgba.resize(static_cast<size_t>(width) * height * 4);
  const int bar_width = std::max(8, width / 20);
  const int bar_x = static_cast<int>((t * 8) % (width + bar_width)) - bar_width;
  // The red ramp depends on x alone: computed once a frame, not once a pixel.
  std::vector<uint8_t> red(static_cast<size_t>(width));
  for (int x = 0; x < width; ++x) red[static_cast<size_t>(x)] = static_cast<uint8_t>((x * 256 / width + t * 2) & 255);
  uint8_t* p = rgba.data();
  for (int y = 0; y < height; ++y) {
    const uint8_t g = static_cast<uint8_t>(y * 255 / std::max(1, height - 1));
    for (int x = 0; x < width; ++x, p += 4) {
      const bool in_bar = x >= bar_x && x < bar_x + bar_width;
      const bool checker = (((x + static_cast<int>(t)) >> 5) ^ (y >> 5)) & 1;
      p[0] = in_bar ? 255 : red[static_cast<size_t>(x)];
      p[1] = in_bar ? 255 : g;
      p[2] = in_bar ? 255 : (checker ? 200 : 60);
      p[3] = 255;
    }
  }
}

}  // namespace viewer
