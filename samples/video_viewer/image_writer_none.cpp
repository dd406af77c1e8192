// PNG files in a viewer built without FFmpeg (VKFUSE_VIEWER_LITE): refused, saying why.
#include "image_writer.h"

namespace viewer {

bool write_png(const std::string& path, int, int, const uint8_t*, std::string* error) {
  *error = "cannot write " + path + ": this viewer was built without FFmpeg (VKFUSE_VIEWER_LITE), which writes PNGs";
  return false;
}

bool read_png(const std::string& path, int*, int*, std::vector<uint8_t>*, std::string* error) {
  *error = "cannot read " + path + ": this viewer was built without FFmpeg (VKFUSE_VIEWER_LITE)";
  return false;
}

}  // namespace viewer
