#include "util/progress_line.hpp"

#include <unistd.h>

#include <cstdio>

namespace kf {

ProgressLine::ProgressLine(std::string label, std::string unit, size_t total, bool approximate, bool quiet)
    : label_(std::move(label)), unit_(std::move(unit)), total_(total), approximate_(approximate), quiet_(quiet),
      tty_(isatty(STDERR_FILENO) != 0), start_(std::chrono::steady_clock::now()), last_(start_) {}

void ProgressLine::update(size_t done) {
  if (quiet_) return;
  const double since = std::chrono::duration<double>(std::chrono::steady_clock::now() - last_).count();
  if (since >= (tty_ ? 0.5 : kLogInterval)) draw(done);
}

void ProgressLine::finish(size_t done) {
  if (quiet_) return;
  draw(done);
  if (tty_) std::fputc('\n', stderr);
}

void ProgressLine::draw(size_t done) {
  const auto now = std::chrono::steady_clock::now();
  last_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0;
  char line[512];
  int n = std::snprintf(line, sizeof line, "%s: %zu", label_.c_str(), done);
  if (total_) n += std::snprintf(line + n, sizeof line - static_cast<size_t>(n), "/%s%zu", approximate_ ? "~" : "", total_);
  n += std::snprintf(line + n, sizeof line - static_cast<size_t>(n), " %s, %.1f/s, %.0f s", unit_.c_str(), rate, elapsed);
  if (total_ && done > 0 && done < total_ && rate > 0) {
    const double eta = static_cast<double>(total_ - done) / rate;
    std::snprintf(line + n, sizeof line - static_cast<size_t>(n), ", ETA %dm%02ds", static_cast<int>(eta) / 60,
                  static_cast<int>(eta) % 60);
  }
  if (tty_)
    std::fprintf(stderr, "\r\033[K%s", line);
  else
    std::fprintf(stderr, "%s\n", line);
  std::fflush(stderr);
}

}  // namespace kf
