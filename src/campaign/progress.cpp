#include "campaign/progress.hpp"

#include "util/progress_line.hpp"

#include <unistd.h>

#include <cstdio>
#include <sstream>

namespace kf {

Progress::Progress(std::string label, Total total, bool quiet,
                   std::optional<std::chrono::steady_clock::time_point> origin)
    : label_(std::move(label)), total_(total.count), approximate_(total.approximate), quiet_(quiet), tty_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()), origin_(origin.value_or(start_)), last_draw_(start_) {}

void Progress::record(const std::string& status, std::optional<double> time_us, double tflops) {
  std::lock_guard lock(mu_);
  ++done_;
  ++counts_[status];
  if (time_us && (!best_us_ || *time_us < *best_us_)) {
    best_us_ = time_us;
    best_tflops_ = tflops;
  }
  draw(false);
}

void Progress::finish() {
  std::lock_guard lock(mu_);
  draw(true);
  if (!quiet_ && tty_) std::fputc('\n', stderr);
}

void Progress::draw(bool force) {
  if (quiet_) return;
  const auto now = std::chrono::steady_clock::now();
  const double since_draw = std::chrono::duration<double>(now - last_draw_).count();
  // On a terminal redraw often in place; in a log print a line every 10 s or 25 evaluations, and
  // after the first (its elapsed time is how long the campaign took to get going).
  if (!force && !tty_ && since_draw < 10.0 && done_ % 25 != 0 && done_ != 1) return;
  if (!force && tty_ && since_draw < 0.2) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double per_min = elapsed > 0 ? 60.0 * static_cast<double>(done_) / elapsed : 0.0;
  std::ostringstream line;
  line << label_ << "  " << done_;
  if (total_) line << "/" << (approximate_ ? "~" : "") << total_;
  line << " evals";
  if (!detail_ && best_us_) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "  best %.2f us (%.0f TFLOP/s)", *best_us_, best_tflops_);
    line << buf;
  }
  char rate[64];
  const double since_origin = std::chrono::duration<double>(now - origin_).count();
  std::snprintf(rate, sizeof rate, "  %.0f/min  t+%.1fs", per_min, since_origin);
  line << rate << "  [";
  bool first = true;
  for (const auto& [status, n] : counts_) {
    line << (first ? "" : " ") << status << " " << n;
    first = false;
  }
  line << "]";
  if (total_ && done_ > 0 && done_ < total_)
    line << "  ETA " << format_eta(elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_));
  if (detail_) line << "  " << detail_();
  if (tty_)
    std::fprintf(stderr, "\r\033[K%s", line.str().c_str());
  else
    std::fprintf(stderr, "%s\n", line.str().c_str());
  std::fflush(stderr);
}

}  // namespace kf
