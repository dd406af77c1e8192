// Decoding on a thread of its own, a few frames ahead, so a frame's decode overlaps the GPU work and
// presentation of the frames before it instead of adding to them.
//
// Contract: the queue owns the thread and reads the VideoSource only from it (the source's own rule:
// one thread at a time); the caller keeps the source alive for the queue's life and may only read its
// immutable properties (width, height, fps, live, describe) meanwhile. pop() is called from one thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "video_source.h"

namespace viewer {

class FrameQueue {
 public:
  // Starts decoding at once, up to `depth` frames ahead.
  FrameQueue(VideoSource& source, std::size_t depth);
  ~FrameQueue();  // stops the thread and waits for it
  FrameQueue(const FrameQueue&) = delete;
  FrameQueue& operator=(const FrameQueue&) = delete;

  // The next frame in order, waiting for it if need be; `frame`'s old pixels go back to the decoder
  // (no allocation in steady state). False after the source failed, with its message.
  bool pop(Frame& frame, std::string* error);

 private:
  void decode_loop();

  VideoSource& source_;
  const std::size_t depth_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Frame> ready_;
  std::vector<Frame> spare_;  // buffers handed back by pop
  bool stop_ = false;
  std::string error_;         // the source's failure, once it failed
  std::thread thread_;
};

}  // namespace viewer
