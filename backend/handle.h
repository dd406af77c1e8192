// UniqueHandle: a move-only owner of one Vulkan handle and the function that destroys it.
#pragma once

#include <functional>
#include <utility>

namespace vkfuse {

template <class Handle>
class UniqueHandle {
 public:
  using Deleter = std::function<void(Handle)>;

  UniqueHandle() = default;
  UniqueHandle(Handle handle, Deleter deleter) : handle_(handle), deleter_(std::move(deleter)) {}
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  UniqueHandle(UniqueHandle&& other) noexcept
      : handle_(std::exchange(other.handle_, Handle{})), deleter_(std::move(other.deleter_)) {}
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, Handle{});
      deleter_ = std::move(other.deleter_);
    }
    return *this;
  }
  ~UniqueHandle() { reset(); }

  Handle get() const { return handle_; }
  explicit operator bool() const { return handle_ != Handle{}; }
  void reset() {
    if (handle_ != Handle{} && deleter_) deleter_(handle_);
    handle_ = Handle{};
  }

 private:
  Handle handle_{};
  Deleter deleter_;
};

}  // namespace vkfuse
