#include "campaign/stop_rule.hpp"

#include <algorithm>

namespace kf {

std::string to_string(StopKind k) {
  switch (k) {
    case StopKind::Budget: return "budget";
    case StopKind::Plateau: return "plateau";
    case StopKind::Exhausted: return "exhausted";
    case StopKind::Time: return "time";
    case StopKind::Interrupt: return "interrupt";
  }
  return "?";
}

bool TimeBudget::reached(const LoopState&) const {
  return std::chrono::duration<double>(Clock::now() - start_).count() >= seconds_;
}

StopRule::StopRule() { add(std::make_unique<Exhausted>()); }

StopRule& StopRule::add(std::unique_ptr<StopCondition> c) {
  conditions_.push_back(std::move(c));
  return *this;
}

StopRule& StopRule::budget(size_t allowed) {
  return allowed == std::numeric_limits<size_t>::max() ? *this : add(std::make_unique<EvaluationBudget>(allowed));
}

StopRule& StopRule::plateau(size_t evaluations) {
  return evaluations == 0 ? *this : add(std::make_unique<Plateau>(evaluations));
}

StopRule& StopRule::time(TimeBudget::Clock::time_point start, double seconds) {
  return seconds > 0 ? add(std::make_unique<TimeBudget>(start, seconds)) : *this;
}

StopRule& StopRule::interrupt(const std::atomic<bool>& flag) { return add(std::make_unique<Interrupt>(flag)); }

bool StopRule::reached(const LoopState& s) const {
  for (const auto& c : conditions_)
    if (c->reached(s)) return true;
  return false;
}

StopKind StopRule::why(const LoopState& s) const {
  const StopCondition* outside = nullptr;
  for (const auto& c : conditions_) {
    if (!c->reached(s)) continue;
    if (!cuts_short(c->kind())) return c->kind();
    if (!outside) outside = c.get();
  }
  return outside ? outside->kind() : StopKind::Exhausted;
}

size_t StopRule::dispatches_left(const LoopState& s) const {
  size_t left = std::numeric_limits<size_t>::max();
  for (const auto& c : conditions_) left = std::min(left, c->dispatches_left(s));
  return left;
}

}  // namespace kf
