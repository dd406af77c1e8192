// parallel_for (session creation's compile pool): every index runs once, the failure reported is the
// one with the lowest index whatever order the threads finish in, and VKFUSE_COMPILE_THREADS is read.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "host/parallel_for.h"
#include "support/test_env.h"

namespace vkfuse {
TEST_CASE("parallel_for runs every index once, on up to the threads asked for") {
  for (unsigned threads : {1u, 3u, 8u}) {
    CAPTURE(threads);
    std::vector<std::atomic<int>> runs(37);
    std::vector<std::thread::id> ran_on(runs.size());
    const Status status = parallel_for(runs.size(), threads, [&](std::size_t i) -> Status {
      runs[i].fetch_add(1);
      ran_on[i] = std::this_thread::get_id();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      return {};
    });
    CHECK(status.ok());
    for (const auto& count : runs) CHECK(count.load() == 1);
    std::vector<std::thread::id> distinct;
    for (std::thread::id id : ran_on)
      if (std::find(distinct.begin(), distinct.end(), id) == distinct.end()) distinct.push_back(id);
    CHECK(distinct.size() <= threads);
    if (threads == 1) CHECK(distinct.front() == std::this_thread::get_id());  // no thread is started
  }
  CHECK(parallel_for(0, 4, [](std::size_t) -> Status { return make_error(ErrorCode::kInternal, "never"); }).ok());
}

TEST_CASE("parallel_for reports the failure with the lowest index, even when a later one fails first") {
  // Index 2 fails slowly and index 5 fails at once: 5 is seen first, 2 must be reported.
  std::vector<std::atomic<int>> runs(40);
  const Status status = parallel_for(runs.size(), 4, [&](std::size_t i) -> Status {
    runs[i].fetch_add(1);
    if (i == 2) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      return make_error(ErrorCode::kCompile, "group 2 failed");
    }
    if (i == 5) return make_error(ErrorCode::kCompile, "group 5 failed");
    return {};
  });
  REQUIRE_FALSE(status.ok());
  CHECK(status.message() == "group 2 failed");
  for (std::size_t i = 0; i < 2; ++i) CHECK(runs[i].load() == 1);  // below the failure: all ran

  // On one thread the order is fixed: nothing after the first failure starts.
  std::vector<int> ran;
  const Status one = parallel_for(10, 1, [&](std::size_t i) -> Status {
    ran.push_back(static_cast<int>(i));
    return i == 3 ? make_error(ErrorCode::kCompile, "group 3 failed") : Status{};
  });
  CHECK(one.message() == "group 3 failed");
  CHECK(ran == std::vector<int>{0, 1, 2, 3});
}

TEST_CASE("VKFUSE_COMPILE_THREADS sets the compile threads; a bad value falls back to the cores") {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  {
    testing::ScopedEnv env("VKFUSE_COMPILE_THREADS", "3");
    CHECK(compile_thread_count() == 3);
  }
  for (const char* bad : {"0", "-2", "four", "2x", ""}) {
    CAPTURE(bad);
    testing::ScopedEnv env("VKFUSE_COMPILE_THREADS", bad);
    CHECK(compile_thread_count() == cores);
  }
}

}  // namespace vkfuse
