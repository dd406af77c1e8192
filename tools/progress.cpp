#include "progress.h"

#include <CLI/CLI.hpp>

#include <unistd.h>  // isatty

#include <cstdio>

namespace vkfuse::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Below this a phase is not worth a line of its own.
constexpr double kReportSeconds = 1.0;
// A live count is redrawn at most this often, so thousands of kernels cost nothing to show.
constexpr auto kRedrawInterval = std::chrono::milliseconds(100);

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

Progress::Progress(Level level) : level_(level), terminal_(level != Level::kQuiet && isatty(fileno(stderr)) == 1) {}

Progress::~Progress() { clear_line(); }

void Progress::clear_line() {
  if (!live_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  live_ = false;
}

void Progress::begin(std::string what) {
  what_ = std::move(what);
  start_ = Clock::now();
  if (!terminal_) return;
  clear_line();
  std::fprintf(stderr, "%s ...", what_.c_str());
  std::fflush(stderr);
  live_ = true;
}

void Progress::count(std::size_t done, std::size_t total) {
  if (!terminal_) return;
  const auto now = Clock::now();
  if (done < total && now - last_draw_ < kRedrawInterval) return;
  last_draw_ = now;
  std::fprintf(stderr, "\r\033[K%s %zu/%zu", what_.c_str(), done, total);
  std::fflush(stderr);
  live_ = true;
}

void Progress::end(const std::string& summary) {
  clear_line();
  const double seconds = seconds_since(start_);
  const char* text = summary.empty() ? what_.c_str() : summary.c_str();
  if (level_ == Level::kQuiet || (level_ == Level::kNormal && seconds < kReportSeconds)) return;
  if (seconds >= kReportSeconds) std::fprintf(stderr, "%s in %.1f s\n", text, seconds);
  else std::fprintf(stderr, "%s in %.0f ms\n", text, seconds * 1000.0);
}

std::function<void(std::string_view, std::size_t, std::size_t)> Progress::session_callback() {
  if (!terminal_) return {};
  return [this](std::string_view, std::size_t done, std::size_t total) { count(done, total); };
}

void add_progress_flags(CLI::App& app, ProgressFlags& flags) {
  app.add_flag("--quiet,-q", flags.quiet, "no progress lines on stderr");
  app.add_flag("--verbose,-v", flags.verbose, "a progress line for every phase, however short (--quiet wins)");
}

}  // namespace vkfuse::cli
