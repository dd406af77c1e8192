// video_viewer: a video, a camera or a test pattern through an ONNX model, on the GPU, every frame.
// See README.md.
#include "app.h"

int main(int argc, char** argv) {
  viewer::Options options;
  if (auto exit_code = viewer::parse_options(argc, argv, &options)) return *exit_code;
  return viewer::run_viewer(options);
}
