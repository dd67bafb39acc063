// A progress line for long commands (check, replay, counting): done/total or a rate, and an
// ETA. On a terminal it is redrawn in place; in a log it is printed every 10 s, so a command
// that runs for minutes is never silent for longer than that.
#pragma once
#include <chrono>
#include <cstddef>
#include <string>

namespace kf {

// A remaining time as "12m05s" or "3h07m"; ">99h" past 99 hours (a crawling rate over a large
// total), "?" when not a number.
std::string format_eta(double seconds);

class ProgressLine {
 public:
  // total 0: unknown (a rate, no ETA); approximate: total is an estimate, shown with "~".
  ProgressLine(std::string label, std::string unit, size_t total, bool approximate = false, bool quiet = false);
  void update(size_t done);  // draws when due
  void finish(size_t done);  // draws once more and ends the line
  // Seconds between lines in a log (a test may shorten it).
  static constexpr double kLogInterval = 10.0;
  // The line drawn after `elapsed` seconds with `done` finished (exposed for tests).
  std::string text(size_t done, double elapsed) const;

 private:
  void draw(size_t done);
  std::string label_, unit_;
  size_t total_;
  bool approximate_, quiet_, tty_;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace kf
