// The generated test pattern: what testsrc shows where FFmpeg's lavfi is missing, and all a viewer
// built without FFmpeg can show. A scrolling gradient, a checkerboard and a sweeping bar, so motion and
// tearing are visible.
#pragma once

#include <cstdint>
#include <vector>

namespace viewer {

// Frame `t` of the pattern into `rgba` (resized to width * height * 4, alpha 255).
void draw_pattern(std::vector<uint8_t>& rgba, int width, int height, int64_t t);

}  // namespace viewer
