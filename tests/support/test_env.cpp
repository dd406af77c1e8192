#include "support/test_env.h"

#include <algorithm>
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

std::vector<std::filesystem::path> files_with_extension(const std::filesystem::path& dir, const std::string& extension) {
  std::vector<std::filesystem::path> found;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == extension) found.push_back(entry.path());
  std::sort(found.begin(), found.end());
  return found;
}

std::size_t temp_file_count(const std::filesystem::path& dir) {
  std::size_t count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    count += entry.path().filename().string().find(".tmp") != std::string::npos ? 1 : 0;
  return count;
}

}  // namespace vkfuse::testing
