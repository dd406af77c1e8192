// ImageColor and ImagePalette: the kernel ops that end a graph whose output is written into an image
// (SessionOptions::image_outputs, appended by host/passes/image_outputs.h). They are not in the op
// table: a model cannot name them, a session adds them.
#pragma once

#include "host/op_def.h"

namespace vkfuse {

// ImageColor(x): x [1, C, H, W] (nhwc = 1: [1, H, W, C]), C <= 4 -> texels [H, W, 4]:
// texel[i] = x[src_i] * mul_i + add_i (src_i = -1: add_i), clamped to 0..1 where clamp = 1.
// Attributes, in order: nhwc, src0..src3, mul0..mul3, add0..add3, clamp.
const OpDef& image_color_op();
// ImagePalette(x, palette): x as above, any C; palette [K, 4] -> texels [H, W, 4]:
// texel = palette[argmax over c of x % K] (ties: the first). Attribute: nhwc.
const OpDef& image_palette_op();

}  // namespace vkfuse
