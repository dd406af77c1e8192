// parallel_for: index-ordered work on a few threads, with the first failure by index as the result.
// Session creation builds, compiles and turns kernels into pipelines with it (one group per task) and
// writes the constants' staging; the ONNX importer decodes initializers with it.
#pragma once

#include <cstddef>
#include <functional>

#include <vkfuse/status.hpp>

namespace vkfuse {

// VKFUSE_COMPILE_THREADS when it is a positive integer, else std::thread::hardware_concurrency()
// (at least 1). A value that is not a positive integer is ignored with a warning.
unsigned compile_thread_count();

// Runs task(0) .. task(count - 1) on min(threads, count) threads, the calling thread included. Indices
// are handed out in increasing order; once task(i) fails, indices above i are no longer started (no
// failure after i could be the one reported), while those below i still run. Returns the failure with
// the lowest index, or Ok. `task` must be safe to call from several threads for different indices.
Status parallel_for(std::size_t count, unsigned threads, const std::function<Status(std::size_t)>& task);

}  // namespace vkfuse
