#include "frame_queue.h"

#include <utility>

namespace viewer {

FrameQueue::FrameQueue(VideoSource& source, std::size_t depth)
    : source_(source), depth_(depth < 1 ? 1 : depth), thread_([this] { decode_loop(); }) {}

FrameQueue::~FrameQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void FrameQueue::decode_loop() {
  for (;;) {
    Frame frame;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || ready_.size() < depth_; });
      if (stop_) return;
      if (!spare_.empty()) {
        frame = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    std::string error;
    const bool ok = source_.read(frame, &error);  // outside the lock: this is the slow part
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!ok) {
        error_ = error;
      } else {
        ready_.push_back(std::move(frame));
      }
    }
    changed_.notify_all();
    if (!ok) return;
  }
}

bool FrameQueue::pop(Frame& frame, std::string* error) {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return !ready_.empty() || !error_.empty(); });
  if (ready_.empty()) {
    *error = error_;
    return false;
  }
  if (!frame.rgba.empty()) spare_.push_back(std::move(frame));
  frame = std::move(ready_.front());
  ready_.pop_front();
  lock.unlock();
  changed_.notify_all();
  return true;
}

}  // namespace viewer
