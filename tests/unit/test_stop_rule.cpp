// The search loop's stop rule: each condition alone, which one ends a search when several are
// reached, and the loop ending on each of them.
#include <gtest/gtest.h>

#include <atomic>

#include "campaign/search_loop.hpp"
#include "campaign/stop_rule.hpp"

namespace kf {
namespace {

LoopState state(size_t dispatched, size_t since_improvement = 0, bool exhausted = false) {
  LoopState s;
  s.dispatched = s.evaluated = dispatched;
  s.since_improvement = since_improvement;
  s.exhausted = exhausted;
  return s;
}

TEST(StopRule, EachConditionAlone) {
  EXPECT_FALSE(StopRule().reached(state(1000, 1000)));  // only exhaustion: runs until the strategy ends
  EXPECT_TRUE(StopRule().reached(state(0, 0, true)));
  EXPECT_FALSE(StopRule().budget(10).reached(state(9)));
  EXPECT_TRUE(StopRule().budget(10).reached(state(10)));
  EXPECT_FALSE(StopRule().plateau(5).reached(state(20, 4)));
  EXPECT_TRUE(StopRule().plateau(5).reached(state(20, 5)));
  EXPECT_FALSE(StopRule().plateau(0).reached(state(20, 1000)));  // 0: off
  const auto now = TimeBudget::Clock::now();
  EXPECT_FALSE(StopRule().time(now, 3600).reached(state(0)));
  EXPECT_TRUE(StopRule().time(now - std::chrono::seconds(2), 1).reached(state(0)));
  EXPECT_FALSE(StopRule().time(now - std::chrono::seconds(2), 0).reached(state(0)));  // 0: off
  std::atomic<bool> flag{false};
  StopRule interrupt;
  interrupt.interrupt(flag);
  EXPECT_FALSE(interrupt.reached(state(0)));
  flag = true;
  EXPECT_TRUE(interrupt.reached(state(0)));
  EXPECT_EQ(interrupt.why(state(0)), StopKind::Interrupt);
}

TEST(StopRule, OwnEndWinsOverOutsideStop) {
  // A shape whose budget was spent as the time ran out finished: it was not cut short.
  std::atomic<bool> flag{true};
  StopRule rule;
  rule.interrupt(flag).time(TimeBudget::Clock::now() - std::chrono::seconds(2), 1).budget(10);
  EXPECT_EQ(rule.why(state(10)), StopKind::Budget);
  EXPECT_EQ(rule.why(state(3)), StopKind::Interrupt);  // the first outside condition added
  EXPECT_TRUE(cuts_short(rule.why(state(3))));
  EXPECT_FALSE(cuts_short(StopKind::Plateau));
  EXPECT_EQ(StopRule().budget(10).plateau(2).why(state(4, 2)), StopKind::Plateau);
}

TEST(StopRule, DispatchesLeftIsTheBudgetsRemainder) {
  EXPECT_EQ(StopRule().budget(10).dispatches_left(state(4)), 6u);
  EXPECT_EQ(StopRule().budget(10).dispatches_left(state(12)), 0u);
  EXPECT_EQ(StopRule().plateau(3).dispatches_left(state(4)), std::numeric_limits<size_t>::max());
}

// Proposes x=0, x=1, ... up to a count; config x takes 100 - x us (each one a new best) unless
// `flat` (all equal: no improvement after the first).
class CountingStrategy final : public Strategy {
 public:
  explicit CountingStrategy(int64_t count) : count_(count) {}
  std::string name() const override { return "counting"; }
  std::vector<Config> ask(size_t n) override {
    std::vector<Config> out;
    while (out.size() < n && next_ < count_) out.push_back({{"x", next_++}});
    return out;
  }
  void tell(const Observation&) override {}

 private:
  int64_t count_, next_ = 0;
};

class ImmediateEvaluator final : public LoopEvaluator {
 public:
  explicit ImmediateEvaluator(bool flat, std::atomic<bool>* interrupt_after_first = nullptr)
      : flat_(flat), interrupt_(interrupt_after_first) {}
  void submit(const Config& c) override {
    const double t = flat_ ? 50.0 : 100.0 - static_cast<double>(std::get<int64_t>(c.at("x")));
    pending_.push_back({{c, t}, "ok", 0});
    if (interrupt_) *interrupt_ = true;
  }
  std::vector<LoopResult> collect(std::chrono::milliseconds) override { return std::exchange(pending_, {}); }

 private:
  bool flat_;
  std::atomic<bool>* interrupt_;
  std::vector<LoopResult> pending_;
};

LoopOutcome run(int64_t configs, LoopRules rules, bool flat = false, std::atomic<bool>* interrupt = nullptr) {
  CountingStrategy strategy(configs);
  ImmediateEvaluator evaluator(flat, interrupt);
  return run_search_loop(strategy, evaluator, rules, {});
}

TEST(SearchLoopStops, OnEachCondition) {
  LoopRules rules;
  rules.depth = 3;
  auto exhausted = run(7, rules);
  EXPECT_EQ(exhausted.stopped_by, StopKind::Exhausted);
  EXPECT_EQ(exhausted.evaluated, 7u);

  LoopRules budget = rules;
  budget.stop.budget(5);
  auto spent = run(100, budget);
  EXPECT_EQ(spent.stopped_by, StopKind::Budget);
  EXPECT_EQ(spent.dispatched, 5u);  // never asks past the budget, even with room in flight
  EXPECT_FALSE(spent.cut_short());

  LoopRules plateau = rules;
  plateau.stop.plateau(4);
  auto flat = run(100, plateau, true);
  EXPECT_EQ(flat.stopped_by, StopKind::Plateau);
  EXPECT_LE(flat.evaluated, 5u + rules.depth);  // the ones in flight finish

  std::atomic<bool> flag{false};
  LoopRules interrupted = rules;
  interrupted.stop.budget(50).interrupt(flag);
  auto stopped = run(100, interrupted, false, &flag);
  EXPECT_EQ(stopped.stopped_by, StopKind::Interrupt);
  EXPECT_TRUE(stopped.cut_short());
  EXPECT_LE(stopped.evaluated, rules.depth);
}

}  // namespace
}  // namespace kf
