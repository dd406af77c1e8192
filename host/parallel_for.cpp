#include "host/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "backend/log.h"

namespace vkfuse {

unsigned compile_thread_count() {
  if (const char* env = std::getenv("VKFUSE_COMPILE_THREADS"); env && *env) {
    char* stop = nullptr;
    const long value = std::strtol(env, &stop, 10);
    if (*stop == '\0' && value >= 1 && value <= 1024) return static_cast<unsigned>(value);
    log_message(LogLevel::kWarn, std::string("VKFUSE_COMPILE_THREADS='") + env +
                                     "' is not a positive integer (at most 1024); using one thread per core");
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

Status parallel_for(std::size_t count, unsigned threads, const std::function<Status(std::size_t)>& task) {
  std::vector<Status> results(count);
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> first_failure{count};  // lowest failing index so far; count = none
  auto work = [&] {
    for (std::size_t i = next.fetch_add(1); i < count; i = next.fetch_add(1)) {
      if (i > first_failure.load()) break;  // indices only grow: nothing later can matter
      results[i] = task(i);
      if (!results[i].ok()) {
        std::size_t seen = first_failure.load();
        while (i < seen && !first_failure.compare_exchange_weak(seen, i)) {
        }
      }
    }
  };
  const std::size_t helpers = std::min<std::size_t>(std::max(threads, 1u), count);
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < helpers; ++t) pool.emplace_back(work);
  work();
  for (std::thread& thread : pool) thread.join();
  for (const Status& status : results)
    if (!status.ok()) return status;
  return {};
}

}  // namespace vkfuse
