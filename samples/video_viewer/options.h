// The viewer's command line.
#pragma once

#include <optional>
#include <string>

#include <vulkan/vulkan.h>

#include "inference.h"
#include "renderer.h"

namespace viewer {

struct Options {
  std::string input = "testsrc";         // a file, a V4L2 camera (/dev/videoN) or "testsrc"
  std::optional<VkExtent2D> input_size;  // testsrc's size (default 1280x720)
  ModelOptions model;
  std::string labels;                    // a classifier's class names, one per line
  bool fp16 = false;                     // start in fp16 (F16 key toggles)
  bool fusion = true;                    // start fused (F key toggles)
  std::optional<ViewMode> view;          // default: by the model's kind
  int frames = 0;                        // stop after this many (0: until closed)
  std::string screenshot;                // PNG of the last frame shown
  std::string dump_frame;                // PNG of the last decoded frame (the model's input)
  bool offscreen = false;                // no window system at all
  std::optional<VkExtent2D> size;        // the window's or offscreen target's size
  bool hud = true;
  bool pace = true;                      // a file plays at its frame rate (off: as fast as it can)
  int frames_in_flight = 3;
  int device = -1;
  bool json = false;                     // a summary as JSON on stdout at exit
  int resize_frame = -1;                 // --resize-after N:WxH: the window resizes itself (tests)
  VkExtent2D resize_to{0, 0};
};

// Parses argv; returns the exit code to leave with (0 after --help, 2 on bad usage) or nullopt to run.
std::optional<int> parse_options(int argc, char** argv, Options* options);

}  // namespace viewer
