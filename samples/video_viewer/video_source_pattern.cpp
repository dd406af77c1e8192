// VideoSource for a viewer built without FFmpeg (VKFUSE_VIEWER_LITE): the generated test pattern only,
// so the viewer runs on machines that have a GPU and no FFmpeg libraries to carry (the lent benchmark
// machine). The interface and contract are video_source.h's.
#include <chrono>
#include <cstdio>

#include "pattern.h"
#include "video_source.h"

namespace viewer {

struct VideoSource::Impl {
  int width = 1280, height = 720;
  int64_t next = 0;
};

VideoSource::VideoSource(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
VideoSource::~VideoSource() = default;

std::unique_ptr<VideoSource> VideoSource::open(const std::string& input, int width_hint, int height_hint, std::string* error) {
  if (input != "testsrc") {
    *error = "this viewer was built without FFmpeg (VKFUSE_VIEWER_LITE): only --input testsrc; cannot open " + input;
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  if (width_hint > 0 && height_hint > 0) impl->width = width_hint, impl->height = height_hint;
  return std::unique_ptr<VideoSource>(new VideoSource(std::move(impl)));
}

int VideoSource::width() const { return impl_->width; }
int VideoSource::height() const { return impl_->height; }
double VideoSource::fps() const { return 30.0; }
bool VideoSource::live() const { return true; }

bool VideoSource::read(Frame& frame, std::string*) {
  const auto start = std::chrono::steady_clock::now();
  draw_pattern(frame.rgba, impl_->width, impl_->height, impl_->next);
  frame.width = impl_->width;
  frame.height = impl_->height;
  frame.index = impl_->next++;
  frame.decode_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return true;
}

std::string VideoSource::describe() const {
  char text[64];
  std::snprintf(text, sizeof text, "testsrc: generated pattern %dx%d 30 fps", impl_->width, impl_->height);
  return text;
}

}  // namespace viewer
