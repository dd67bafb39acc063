// When a search stops, as small conditions combined by the search loop (campaign/search_loop):
// the evaluation budget, a plateau, the wall-time budget, an outside interrupt (Ctrl-C) and
// the strategy's running out of configs. Each condition reads the loop's counters; the rule
// answers whether any is reached and which one ended the search, so a campaign can tell a
// shape that finished (budget, plateau, exhausted) from one cut short (time, interrupt).
#pragma once
#include <atomic>
#include <chrono>
#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace kf {

// What the loop has done so far, as the conditions see it.
struct LoopState {
  size_t dispatched = 0;         // configs handed to the evaluator
  size_t evaluated = 0;          // results told to the strategy
  size_t since_improvement = 0;  // results since the best time last improved
  bool exhausted = false;        // the strategy had nothing left and nothing was pending
};

enum class StopKind {
  Budget,     // the evaluation budget is spent
  Plateau,    // no new best for a number of evaluations
  Exhausted,  // the strategy has nothing left to propose
  Time,       // the wall-time budget is over
  Interrupt,  // an outside stop (Ctrl-C)
};

std::string to_string(StopKind k);
// Time and interrupt end a search before its own budget: the campaign is `stopped`, not `done`.
inline bool cuts_short(StopKind k) { return k == StopKind::Time || k == StopKind::Interrupt; }

class StopCondition {
 public:
  virtual ~StopCondition() = default;
  virtual StopKind kind() const = 0;
  virtual bool reached(const LoopState& s) const = 0;
  // How many more configs may be dispatched before the condition is reached by dispatching alone.
  virtual size_t dispatches_left(const LoopState&) const { return std::numeric_limits<size_t>::max(); }
};

class EvaluationBudget final : public StopCondition {
 public:
  explicit EvaluationBudget(size_t allowed) : allowed_(allowed) {}
  StopKind kind() const override { return StopKind::Budget; }
  bool reached(const LoopState& s) const override { return s.dispatched >= allowed_; }
  size_t dispatches_left(const LoopState& s) const override {
    return s.dispatched >= allowed_ ? 0 : allowed_ - s.dispatched;
  }

 private:
  size_t allowed_;
};

class Plateau final : public StopCondition {
 public:
  explicit Plateau(size_t evaluations) : evaluations_(evaluations) {}
  StopKind kind() const override { return StopKind::Plateau; }
  bool reached(const LoopState& s) const override { return s.since_improvement >= evaluations_; }

 private:
  size_t evaluations_;
};

class Exhausted final : public StopCondition {
 public:
  StopKind kind() const override { return StopKind::Exhausted; }
  bool reached(const LoopState& s) const override { return s.exhausted; }
};

// Wall time counted from a start that may precede the loop (a campaign's budget spans its shapes).
class TimeBudget final : public StopCondition {
 public:
  using Clock = std::chrono::steady_clock;
  TimeBudget(Clock::time_point start, double seconds) : start_(start), seconds_(seconds) {}
  StopKind kind() const override { return StopKind::Time; }
  bool reached(const LoopState&) const override;

 private:
  Clock::time_point start_;
  double seconds_;
};

class Interrupt final : public StopCondition {
 public:
  explicit Interrupt(const std::atomic<bool>& flag) : flag_(flag) {}
  StopKind kind() const override { return StopKind::Interrupt; }
  bool reached(const LoopState&) const override { return flag_.load(); }

 private:
  const std::atomic<bool>& flag_;
};

// The conditions of one search. It always holds Exhausted; the others are added as the
// options ask (a zero budget, plateau or time means "off" and adds nothing).
class StopRule {
 public:
  StopRule();
  StopRule& add(std::unique_ptr<StopCondition> c);
  StopRule& budget(size_t allowed);        // max(): off
  StopRule& plateau(size_t evaluations);   // 0: off
  StopRule& time(TimeBudget::Clock::time_point start, double seconds);  // 0: off
  StopRule& interrupt(const std::atomic<bool>& flag);

  bool reached(const LoopState& s) const;
  // The condition that ended the search, conditions of the search's own end (exhausted, budget,
  // plateau) before outside ones (time, interrupt), so a shape whose budget was spent as the
  // time ran out counts as finished. Only meaningful once reached(s).
  StopKind why(const LoopState& s) const;
  size_t dispatches_left(const LoopState& s) const;

 private:
  std::vector<std::shared_ptr<const StopCondition>> conditions_;  // shared: a rule is copied into loop rules
};

}  // namespace kf
