// A test's own environment: a scratch directory (caches, dumps, tensor files) and environment variables
// set for one scope.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace vkfuse::testing {

// A fresh, uniquely named directory under the system temp directory, removed with all it holds at
// scope exit.
class ScratchDir {
 public:
  // `prefix` names the directory for whoever finds one left behind by a crash.
  explicit ScratchDir(const std::string& prefix = "vkfuse_test");
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// Sets an environment variable for one scope and puts back what was there (or unsets it).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_, old_;
  bool had_old_ = false;
};

// The files in `dir` whose names end in `extension` (".vkfk"), sorted.
std::vector<std::filesystem::path> files_with_extension(const std::filesystem::path& dir, const std::string& extension);
// How many files in `dir` are the caches' temporary files (names holding ".tmp").
std::size_t temp_file_count(const std::filesystem::path& dir);

}  // namespace vkfuse::testing
