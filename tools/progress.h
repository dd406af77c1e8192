// Progress on stderr for work that can take seconds (importing a model, compiling its kernels, the
// first run). On a terminal the phase in progress is one line rewritten in place, with a count where
// there is one; wherever stderr goes, a phase that took a second or more leaves one line saying what it
// did and how long it took, so a log shows where the time went without a line per kernel. --verbose
// prints that line for every phase, --quiet none.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace CLI {
class App;
}

namespace vkfuse::cli {

class Progress {
 public:
  enum class Level { kQuiet, kNormal, kVerbose };
  explicit Progress(Level level);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Starts a phase: "importing resnet50.onnx".
  void begin(std::string what);
  // Updates the phase's count ("compiling kernels 12/57"); from any thread, one call at a time.
  void count(std::size_t done, std::size_t total);
  // Ends the phase; if it took a second or more (or at kVerbose), prints "<summary> in 3.2 s" (`summary`
  // defaults to the phase's own words).
  void end(const std::string& summary = "");
  // A SessionOptions::progress that feeds count().
  std::function<void(std::string_view, std::size_t, std::size_t)> session_callback();

 private:
  void clear_line();

  Level level_;
  bool terminal_;
  bool live_ = false;  // a line in place on the terminal that the next write replaces
  std::string what_;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

// --quiet and --verbose, for the commands that report progress.
struct ProgressFlags {
  bool quiet = false;
  bool verbose = false;
  Progress::Level level() const { return quiet ? Progress::Level::kQuiet : verbose ? Progress::Level::kVerbose : Progress::Level::kNormal; }
};
void add_progress_flags(CLI::App& app, ProgressFlags& flags);

}  // namespace vkfuse::cli
