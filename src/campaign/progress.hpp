// The live progress line of a campaign: done/budget, best so far (or a suite's per-shape state), rate,
// seconds since the campaign began, status counts, ETA.
#pragma once
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace kf {

class Progress {
 public:
  // The total to show (evaluations); approximate: an estimate, shown with "~".
  struct Total {
    size_t count = 0;  // 0: unknown
    bool approximate = false;
  };
  // origin: where the shown time counts from (a campaign's start; default: now). The rate and
  // ETA count from now.
  Progress(std::string label, Total total, bool quiet,
           std::optional<std::chrono::steady_clock::time_point> origin = std::nullopt);
  Progress(std::string label, size_t total, bool quiet) : Progress(std::move(label), Total{total, false}, quiet) {}
  // Text drawn at the end of the line instead of the best time: a suite's per-shape state, whose
  // shapes' times do not compare. Called while the line is drawn.
  void set_detail(std::function<std::string()> detail) { detail_ = std::move(detail); }
  // One finished evaluation: its status and, when ok, its median time and TFLOP/s. Thread-safe: a
  // suite's shapes share one line.
  void record(const std::string& status, std::optional<double> time_us, double tflops);
  void finish();
  size_t done() const { return done_; }
  std::optional<double> best_us() const { return best_us_; }

 private:
  void draw(bool force);
  std::string label_;
  size_t total_;  // 0: unknown
  bool approximate_;
  bool quiet_;
  bool tty_;
  size_t done_ = 0;
  std::optional<double> best_us_;
  double best_tflops_ = 0;
  std::map<std::string, int> counts_;
  std::chrono::steady_clock::time_point start_, origin_, last_draw_;
  std::function<std::string()> detail_;
  std::mutex mu_;
};

}  // namespace kf
