// vkfuse_bench_frame's image mode: a WxH RGBA8 frame into a model, per frame, host path (the frame
// resized and normalized on the CPU, then Session::run) against device path (the frame a VkImage on
// the device, sampled by the model's first kernels, recorded into one command buffer per frame), and
// optionally an image output (a segmentation's palette image).
#pragma once

#include <string>

#include <vkfuse/vkfuse.hpp>

namespace vkfuse::bench {

// Prints one JSON line; returns the process exit code. With `palette_output` the output (class scores
// [1, C, H, W]) is shown as each pixel's best class through a palette: on the CPU after the host path,
// written by the model's last kernel into an RGBA8 image on the device path.
int run_image_frames(const Context& context, const Graph& graph, const std::string& model, const std::string& precision,
                     std::uint32_t width, std::uint32_t height, int frames, bool palette_output);

}  // namespace vkfuse::bench
