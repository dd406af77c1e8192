// VideoSource: the viewer's frames, from a video file, a V4L2 camera or a generated test pattern,
// delivered as tightly packed RGBA8 (row 0 at the top, alpha 255) through FFmpeg.
//
// Contract:
//  - open() returns null on failure and sets *error to one line saying what is wrong and how to fix it.
//    It decodes the first frame before returning, so an input that opens will also produce frames.
//  - Every frame has width() x height() of the first decoded frame; a stream that changes size later is
//    scaled back to it, so consumers can allocate once.
//  - read() never ends on its own: a file loops back to its start, a camera and testsrc are endless.
//    It returns false only on a real error (corrupt stream, camera unplugged), with *error set; after
//    that the source is unusable and should be destroyed.
//  - read() does not pace: files and testsrc come as fast as they decode, a camera at its own rate.
//    Pace files with fps() where wall-clock playback matters; live() tells which sources to leave unpaced.
//  - The VideoSource owns all FFmpeg state and frees it in its destructor. It is not thread-safe: use one
//    VideoSource from one thread at a time (distinct instances are independent). FFmpeg may decode on
//    its own worker threads internally.
//  - The first open() sets FFmpeg's process-wide log level to AV_LOG_ERROR; failures are reported
//    through *error instead.
//
// Link: pkg-config modules libavformat libavcodec libswscale libavdevice libavutil.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace viewer {

struct Frame {
  std::vector<uint8_t> rgba;  // width * height * 4 bytes; read() reuses the storage between calls
  int width = 0;
  int height = 0;
  int64_t index = 0;       // 0, 1, 2, ... across loops of a file
  double decode_ms = 0.0;  // wall time of the read() that produced it: demux + decode + convert
};

class VideoSource {
 public:
  // input: a video file path, a V4L2 camera device (/dev/video0) or "testsrc" (a moving test pattern).
  // width_hint x height_hint: the size to request from a camera and the testsrc size (0: camera default,
  // testsrc 1280x720). Files ignore them.
  static std::unique_ptr<VideoSource> open(const std::string& input, int width_hint, int height_hint,
                                           std::string* error);
  ~VideoSource();
  VideoSource(const VideoSource&) = delete;
  VideoSource& operator=(const VideoSource&) = delete;

  int width() const;
  int height() const;
  double fps() const;  // the stream's nominal rate; 30 when it does not say
  bool live() const;   // a camera or testsrc (never ends, not worth pacing); false for a file

  // Decodes the next frame into frame (see the contract above).
  bool read(Frame& frame, std::string* error);

  // One line for a HUD, e.g. "clip.mp4: h264 1920x1080 30 fps".
  std::string describe() const;

 private:
  struct Impl;
  explicit VideoSource(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;  // keeps FFmpeg's headers out of the viewer's includes
};

}  // namespace viewer
