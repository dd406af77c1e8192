#include "support/test_env.h"

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <system_error>

namespace vkfuse::testing {

ScratchDir::ScratchDir(const std::string& prefix) {
  std::mt19937_64 rng(std::random_device{}() ^
                      static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  path_ = std::filesystem::temp_directory_path() / (prefix + "_" + std::to_string(rng()));
  std::filesystem::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

ScopedEnv::ScopedEnv(const char* name, const char* value) : name_(name) {
  if (const char* old = std::getenv(name)) {
    old_ = old;
    had_old_ = true;
  }
  setenv(name, value, 1);
}

ScopedEnv::~ScopedEnv() {
  if (had_old_) setenv(name_.c_str(), old_.c_str(), 1);
  else unsetenv(name_.c_str());
}

}  // namespace vkfuse::testing
