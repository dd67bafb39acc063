// eval/round_rule: when interleaved rounds know their answer (separated, tie, a noisy but distinct
// pair, one outlier round, a kernel behind sitting out), and the loop that runs them (order, failures,
// batches, the time cap), on synthetic per-round medians.
#include <gtest/gtest.h>

#include "eval/protocol.hpp"
#include "eval/round_rule.hpp"

using namespace kf;

namespace {

// Rounds around `us`, spread by +-rel in a fixed pattern (deterministic, no outliers).
std::vector<double> steady(double us, double rel, int n) {
  static const double kPattern[] = {0.0, 1.0, -1.0, 0.5, -0.5, 0.25, -0.25, 0.75, -0.75};
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(us * (1 + rel * kPattern[i % 9]));
  return out;
}

RoundRule rule() { return RoundRule{}; }

// A loop over fixed streams: time_one(i) returns kernel i's next value; calls records the order.
struct Streams {
  std::vector<std::vector<double>> values;
  std::vector<size_t> used;
  std::vector<size_t> calls;
  explicit Streams(std::vector<std::vector<double>> v) : values(std::move(v)), used(values.size(), 0) {}
  std::optional<double> operator()(size_t i) {
    calls.push_back(i);
    if (used[i] >= values[i].size()) return std::nullopt;  // past its stream: it failed
    return values[i][used[i]++];
  }
};

RoundsRun run(Streams& s, RoundPlan plan, double round_s = 0) {
  double now = 0;
  return run_rounds(s.values.size(), plan, [&](size_t i) {
    now += round_s / static_cast<double>(s.values.size());
    return s(i);
  }, [&] { return now; });
}

RoundPlan auto_plan(int max_rounds = kMaxAutoRounds) {
  RoundPlan p;
  p.rounds = max_rounds;
  p.until_decided = true;
  return p;
}

}  // namespace

TEST(RoundRule, SeparatedOnceTheLeadersIntervalIsBelowEveryOther) {
  const auto v = judge_rounds({steady(5.0, 0.001, 5), steady(5.1, 0.001, 5), steady(6.0, 0.001, 5)}, 5, 21, rule());
  EXPECT_EQ(v.stop, RoundStop::Separated);
  ASSERT_TRUE(v.leader);
  EXPECT_EQ(*v.leader, 0u);
}

TEST(RoundRule, TieWhenTheOverlappingIntervalsSpanLessThanTheThreshold) {
  // 0.04% apart with +-0.05% rounds: the intervals overlap and together span ~0.14% < 0.5%.
  const auto v = judge_rounds({steady(5.002, 0.0005, 5), steady(5.0, 0.0005, 5)}, 5, 21, rule());
  EXPECT_EQ(v.stop, RoundStop::Tie);
  EXPECT_EQ(*v.leader, 1u);
  // The same pair with +-1% rounds is not known to be a tie: the intervals are too wide.
  const auto wide = judge_rounds({steady(5.005, 0.01, 5), steady(5.0, 0.01, 5)}, 5, 21, rule());
  EXPECT_EQ(wide.stop, RoundStop::Continue);
  EXPECT_EQ(wide.next, (std::vector<bool>{true, true}));
  // ... and at the last round it says so.
  EXPECT_EQ(judge_rounds({steady(5.005, 0.01, 21), steady(5.0, 0.01, 21)}, 21, 21, rule()).stop,
            RoundStop::MaxRounds);
}

TEST(RoundRule, AKernelBehindSitsOutWhileTheCloseOnesGoOn) {
  const auto v = judge_rounds({steady(5.0, 0.01, 5), steady(5.02, 0.01, 5), steady(7.0, 0.01, 5)}, 5, 21, rule());
  EXPECT_EQ(v.stop, RoundStop::Continue);
  EXPECT_EQ(v.next, (std::vector<bool>{true, true, false}));
}

TEST(RoundRule, OneOutlierRoundDelaysButDoesNotDecide) {
  // The leader is 1.5% faster, but one of its first five rounds ran 5% slow: its min..max interval
  // reaches the other's, so the first look goes on; at nine rounds the interval drops the outlier.
  std::vector<double> lead = steady(3.0, 0.001, 9), other = steady(3.045, 0.001, 9);
  lead[2] = 3.15;
  const auto first = judge_rounds({std::vector<double>(lead.begin(), lead.begin() + 5),
                                   std::vector<double>(other.begin(), other.begin() + 5)},
                                  5, 21, rule());
  EXPECT_EQ(first.stop, RoundStop::Continue);
  const auto second = judge_rounds({lead, other}, 9, 21, rule());
  EXPECT_EQ(second.stop, RoundStop::Separated);
  EXPECT_EQ(*second.leader, 0u);
}

TEST(RoundRule, NoisyButDistinctPairSeparatesLaterWithTheRightWinner) {
  // 1% apart, rounds spread +-0.8%: the intervals narrow with the rounds (+-0.8% at five rounds,
  // +-0.6% at nine and 13, +-0.4% at 17) and part at 17.
  Streams s({steady(10.1, 0.008, 21), steady(10.0, 0.008, 21)});
  const RoundsRun res = run(s, auto_plan());
  EXPECT_EQ(res.rounds, 17);
  EXPECT_EQ(res.stop, RoundStop::Separated);
  EXPECT_EQ(*judge_rounds(res.samples, res.rounds, 21, rule()).leader, 1u);
}

TEST(RoundRule, OneKernelOrNoneIsNothingToCompare) {
  EXPECT_EQ(judge_rounds({steady(1, 0, 5), {}}, 5, 21, rule()).stop, RoundStop::OneKernel);
  const auto none = judge_rounds({{}, {}}, 5, 21, rule());
  EXPECT_EQ(none.stop, RoundStop::OneKernel);
  EXPECT_FALSE(none.leader);
}

TEST(RoundRule, StopNamesRoundTrip) {
  for (RoundStop s : {RoundStop::Fixed, RoundStop::Separated, RoundStop::Tie, RoundStop::MaxRounds,
                      RoundStop::TimeCap, RoundStop::OneKernel})
    EXPECT_EQ(round_stop_from_string(to_string(s)), s) << to_string(s);
  EXPECT_EQ(round_stop_from_string("sideways"), RoundStop::Continue);
}

TEST(RunRounds, FixedCountAlternatesTheOrderAndDropsAFailure) {
  // Kernel 1 fails in its third round: it is not timed again.
  Streams s({steady(1, 0, 9), steady(2, 0, 2), steady(3, 0, 9)});
  RoundPlan p;
  p.rounds = 4;
  const RoundsRun res = run(s, p);
  EXPECT_EQ(res.rounds, 4);
  EXPECT_EQ(res.stop, RoundStop::Fixed);
  EXPECT_EQ(s.calls, (std::vector<size_t>{0, 1, 2, 2, 1, 0, 0, 1, 2, 2, 0}));
  EXPECT_EQ(res.samples[0].size(), 4u);
  EXPECT_EQ(res.samples[1].size(), 2u);
}

TEST(RunRounds, TheRuleLooksAfterEachBatchAndLetsAKernelBehindSitOut) {
  // 0 and 1 are 0.8% apart with +-1% rounds (undecided at first); 2 is far behind.
  Streams s({steady(5.0, 0.01, 21), steady(5.04, 0.01, 21), steady(9.0, 0.01, 21)});
  const RoundsRun res = run(s, auto_plan());
  EXPECT_EQ(res.samples[2].size(), 5u);  // sat out after the first batch
  EXPECT_EQ(res.rounds, 21);             // the pattern never separates the close pair
  EXPECT_EQ(res.stop, RoundStop::MaxRounds);
  EXPECT_EQ(res.samples[0].size(), 21u);
}

TEST(RunRounds, StopsAtTheFirstLookWhenDecided) {
  Streams s({steady(5.0, 0.001, 21), steady(6.0, 0.001, 21)});
  const RoundsRun res = run(s, auto_plan());
  EXPECT_EQ(res.rounds, 5);
  EXPECT_EQ(res.stop, RoundStop::Separated);
  EXPECT_EQ(s.calls.size(), 10u);
}

TEST(RunRounds, TheTimeCapEndsTheRoundsAfterTheFirstBatch) {
  // Undecided pair, one second a round, a 7 s cap: five rounds (the first batch always runs), then
  // rounds while the next one still ends within the cap.
  Streams s({steady(5.0, 0.01, 21), steady(5.04, 0.01, 21)});
  RoundPlan p = auto_plan();
  p.max_s = 7;
  const RoundsRun res = run(s, p, 1.0);
  EXPECT_EQ(res.stop, RoundStop::TimeCap);
  EXPECT_EQ(res.rounds, 7);
  p.max_s = 2;  // below the first batch: it still runs
  Streams again({steady(5.0, 0.01, 21), steady(5.04, 0.01, 21)});
  EXPECT_EQ(run(again, p, 1.0).rounds, 5);
}

TEST(RunRounds, AllFailedEndsTheRounds) {
  Streams s({{}, {}});
  const RoundsRun res = run(s, auto_plan());
  EXPECT_EQ(res.rounds, 1);
  EXPECT_EQ(res.stop, RoundStop::OneKernel);
}

TEST(RoundRuleProtocol, TheRequestAndTheAnswerRoundTrip) {
  TimeManyRequest req;
  req.id = 3;
  req.rounds = 21;
  req.until_decided = true;
  req.rule.tie_rel = 0.01;
  req.max_s = 4.5;
  req.rewarm_ms = 30;
  const TimeManyRequest back = time_many_request_from_json(to_json(req));
  EXPECT_TRUE(back.until_decided);
  EXPECT_EQ(back.rounds, 21);
  EXPECT_DOUBLE_EQ(back.rule.tie_rel, 0.01);
  EXPECT_EQ(back.rule.first_batch, 5);
  EXPECT_DOUBLE_EQ(back.max_s, 4.5);
  EXPECT_DOUBLE_EQ(back.rewarm_ms, 30);
  // A fixed-count request says nothing of the rule, and reads back without it.
  TimeManyRequest fixed;
  fixed.rounds = 7;
  EXPECT_FALSE(to_json(fixed).contains("rule"));
  EXPECT_FALSE(time_many_request_from_json(to_json(fixed)).until_decided);

  TimeManyResult res;
  res.id = 3;
  res.items.resize(2);
  res.rounds = 9;
  res.stop = RoundStop::Tie;
  res.round_us = {{1.0, 1.1}, {}};
  const TimeManyResult r = time_many_result_from_json(to_json(res));
  EXPECT_EQ(r.rounds, 9);
  EXPECT_EQ(r.stop, RoundStop::Tie);
  EXPECT_EQ(r.round_us, res.round_us);
  // An answer without them (an older worker) reads as "not said".
  const TimeManyResult old = time_many_result_from_json(nlohmann::json::parse(R"({"id":1,"items":[]})"));
  EXPECT_EQ(old.rounds, 0);
  EXPECT_EQ(old.stop, RoundStop::Continue);
  EXPECT_TRUE(old.round_us.empty());
  EXPECT_THROW(time_many_result_from_json(nlohmann::json::parse(R"({"id":1,"items":[],"round_us":[1]})")),
               std::invalid_argument);
}
