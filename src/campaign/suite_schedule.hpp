// How a local campaign over several shapes shares its pipeline between them. Every shape searches at
// once, each with its own strategy, store view and stop rule; this object decides how many of the
// campaign's in-flight slots (campaign_depth: configs compiling or queued for a GPU) each shape may hold.
// A slot goes, one at a time, to the shape with the largest weight / (slots held + 1) (D'Hondt), so a shape
// of twice the weight holds about twice the slots and gets about twice the GPU time:
//   - floor: a shape with fewer than `floor` evaluations outranks every shape past it (fewest first), so
//     every shape has a first result, and `floor` of them, before gains decide;
//   - past the floor, weight = recent gain + exploration + distance from the baseline:
//       recent gain   relative improvement of the shape's best over its last `window` evaluations;
//       exploration   explore * sqrt(ln(1 + evaluations of all shapes) / (1 + the shape's)), so a shape that
//                     stopped improving still gets a share, more the fewer evaluations it had (UCB);
//       baseline gap  gap_weight * min(1, best / best stored baseline - 1): a shape slower than the
//                     library it should beat (cuDNN, cuBLAS) is worth more time.
// A shape holds at most max_per_shape slots (the depth it would have searched alone, so a strategy such as
// evo never proposes further ahead of its results than it would alone); slots left over stay unused.
// A finished shape (its --evals, --plateau, or its space exhausted) holds none. Slots are reallocated after
// every result; a shape's loop dispatches only while it holds more slots than it has in flight (SuiteQuota).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "campaign/stop_rule.hpp"

namespace kf {

struct SuiteScheduleOptions {
  size_t floor = 20;          // evaluations every shape gets first
  size_t window = 10;         // evaluations over which the recent gain is measured
  double explore = 0.01;      // weight of the exploration bonus
  double gap_weight = 0.01;   // weight of the distance from the best stored baseline
  size_t max_per_shape = 0;   // 0: no cap; else no shape holds more (a lone shape's own pipeline depth)
};

// What the store knew of a shape when the campaign (or its resume) started.
struct SuiteShapeStart {
  size_t evaluated = 0;                // by this campaign already (a resume)
  std::optional<double> best_us;       // this device's best current time, if any
  std::optional<double> baseline_us;   // the fastest stored baseline on this device, if any
};

class SuiteSchedule {
 public:
  SuiteSchedule(std::vector<SuiteShapeStart> shapes, size_t slots, SuiteScheduleOptions options = {});

  size_t quota(size_t shape) const;                       // slots the shape may hold now
  void record(size_t shape, std::optional<double> time_us);  // one finished evaluation (time when ok)
  void finished(size_t shape);                            // the shape's search ended: its slots go elsewhere
  // Called when the shape's quota grows, so an idle loop wakes up at once; under the schedule's lock, so it
  // must not call back into the schedule (it only notifies). An empty function removes it.
  void on_grow(size_t shape, std::function<void()> wake);

  struct ShapeView {
    size_t evaluated = 0;
    std::optional<double> best_us;
    size_t quota = 0;
    bool finished = false;
    double weight = 0;
  };
  std::vector<ShapeView> view() const;
  // Per-shape state for the progress line: "#1 24 ev 330.2 us x2 | #2 done 20 ev 449.8 us | ..."
  std::string line() const;

 private:
  struct ShapeState {
    SuiteShapeStart start;
    size_t evaluated = 0;
    std::vector<std::optional<double>> best_after;  // best time after each evaluation of this campaign
    size_t quota = 0;
    bool finished = false;
    std::function<void()> wake;
  };
  double weight(const ShapeState& s, size_t all_evaluated) const;
  void reallocate();  // under mu_; wakes the shapes whose quota grew

  const size_t slots_;
  const SuiteScheduleOptions options_;
  mutable std::mutex mu_;
  std::vector<ShapeState> shapes_;
};

// The stop condition that holds one shape's loop to its quota. It never ends the search.
class SuiteQuota final : public StopCondition {
 public:
  SuiteQuota(const SuiteSchedule& schedule, size_t shape) : schedule_(schedule), shape_(shape) {}
  StopKind kind() const override { return StopKind::Budget; }
  bool reached(const LoopState&) const override { return false; }
  size_t dispatches_left(const LoopState& s) const override;

 private:
  const SuiteSchedule& schedule_;
  size_t shape_;
};

}  // namespace kf
