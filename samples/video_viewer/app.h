// The viewer: one Vulkan device for decode upload, inference and presentation. Each frame in flight
// has its frame image, its staging buffer, its command buffer and its vkfuse executions; a frame is
// one command buffer: upload the decoded pixels, vkfuse's dispatches (sampling the frame image,
// writing the output image), the draw and the HUD; then present.
#pragma once

#include "options.h"

namespace viewer {

// Runs the viewer as `options` say; returns the process exit code (1 on any error, with a message on
// stderr; 1 too when the validation layer reported anything).
int run_viewer(const Options& options);

}  // namespace viewer
