#include "eval/round_rule.hpp"

#include <algorithm>

#include "eval/stats.hpp"

namespace kf {

namespace {

constexpr std::pair<RoundStop, const char*> kStopNames[] = {
    {RoundStop::Fixed, "fixed"},          {RoundStop::Separated, "separated"}, {RoundStop::Tie, "tie"},
    {RoundStop::MaxRounds, "max rounds"}, {RoundStop::TimeCap, "time cap"},    {RoundStop::OneKernel, "one kernel"}};

}  // namespace

std::string to_string(RoundStop s) {
  for (const auto& [stop, name] : kStopNames)
    if (stop == s) return name;
  return "";
}

RoundStop round_stop_from_string(const std::string& s) {
  for (const auto& [stop, name] : kStopNames)
    if (s == name) return stop;
  return RoundStop::Continue;
}

RoundVerdict judge_rounds(const std::vector<std::vector<double>>& samples, int rounds, int max_rounds,
                          const RoundRule& rule) {
  RoundVerdict v;
  v.next.assign(samples.size(), false);
  std::vector<Summary> s(samples.size());
  std::vector<size_t> timed;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (samples[i].empty()) continue;
    s[i] = summarize(samples[i]);
    timed.push_back(i);
    if (!v.leader || s[i].median < s[*v.leader].median) v.leader = i;
  }
  if (timed.size() < 2) {
    v.stop = RoundStop::OneKernel;  // nothing to compare
    if (v.leader) v.next[*v.leader] = true;
    return v;
  }
  const Summary& lead = s[*v.leader];
  v.next[*v.leader] = true;
  bool undecided = false, tied = false;
  for (size_t i : timed) {
    if (i == *v.leader) continue;
    if (s[i].ci_lo > lead.ci_hi) continue;  // behind: its interval lies entirely above the leader's
    v.next[i] = true;
    // Whatever the two medians are within their intervals, they differ by at most this much.
    const double span = std::max(s[i].ci_hi, lead.ci_hi) - std::min(s[i].ci_lo, lead.ci_lo);
    if (span <= rule.tie_rel * lead.median)
      tied = true;
    else
      undecided = true;
  }
  if (!undecided)
    v.stop = tied ? RoundStop::Tie : RoundStop::Separated;
  else if (rounds >= max_rounds)
    v.stop = RoundStop::MaxRounds;
  return v;
}

RoundsRun run_rounds(size_t n, const RoundPlan& plan, const std::function<std::optional<double>(size_t)>& time_one,
                     const std::function<double()>& elapsed_s) {
  RoundsRun run;
  run.samples.assign(n, {});
  run.stop = plan.until_decided ? RoundStop::OneKernel : RoundStop::Fixed;  // (no kernel left to time)
  const int max_rounds = std::max(plan.rounds, 1);
  std::vector<bool> alive(n, true), next(n, true);
  const int first_batch = std::min(std::max(plan.rule.first_batch, 1), max_rounds);
  int next_look = first_batch;
  double last_round_s = 0;
  size_t last_round_timed = 0;
  for (int r = 0; r < max_rounds; ++r) {
    size_t to_time = 0;
    for (size_t i = 0; i < n; ++i) to_time += alive[i] && next[i];
    if (to_time == 0) break;
    // The first batch always runs (fewer rounds give no interval to judge); the rounds after it are
    // estimated from the one before (not from the first, which carries each kernel's full warm-up).
    if (plan.until_decided && r >= first_batch && plan.max_s > 0 && last_round_timed > 0 &&
        elapsed_s() + last_round_s / static_cast<double>(last_round_timed) * static_cast<double>(to_time) > plan.max_s) {
      run.stop = RoundStop::TimeCap;
      break;
    }
    const double start = elapsed_s();
    size_t timed = 0;
    for (size_t k = 0; k < n; ++k) {
      const size_t i = r % 2 == 0 ? k : n - 1 - k;
      if (!alive[i] || !next[i]) continue;
      ++timed;
      if (const auto t = time_one(i))
        run.samples[i].push_back(*t);
      else
        alive[i] = false;
    }
    last_round_s = elapsed_s() - start;
    last_round_timed = timed;
    run.rounds = r + 1;
    if (!plan.until_decided) continue;
    if (run.rounds < next_look) continue;
    std::vector<std::vector<double>> live(n);
    for (size_t i = 0; i < n; ++i)
      if (alive[i]) live[i] = run.samples[i];
    const RoundVerdict v = judge_rounds(live, run.rounds, max_rounds, plan.rule);
    if (v.stop != RoundStop::Continue) {
      run.stop = v.stop;
      return run;
    }
    next = v.next;
    next_look = std::min(next_look + std::max(plan.rule.batch, 1), max_rounds);
  }
  return run;
}

}  // namespace kf
