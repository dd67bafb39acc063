// How a suite's shapes share the in-flight slots (campaign/suite_schedule): the floor first, then recent
// gain, exploration and the distance from a baseline; finished shapes hold nothing.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <numeric>
#include <thread>

#include "campaign/fair_lock.hpp"
#include "campaign/suite_schedule.hpp"

using namespace kf;

namespace {

size_t total_quota(const SuiteSchedule& s, size_t n) {
  size_t t = 0;
  for (size_t i = 0; i < n; ++i) t += s.quota(i);
  return t;
}

// Records `n` evaluations of shape i, the time falling by `step` each (0: flat at `start_us`).
void evaluate(SuiteSchedule& s, size_t i, size_t n, double start_us, double step) {
  for (size_t k = 0; k < n; ++k) s.record(i, start_us - step * static_cast<double>(k));
}

}  // namespace

TEST(SuiteSchedule, EveryShapeUnderTheFloorHoldsASlotWhenThereAreEnough) {
  SuiteSchedule s(std::vector<SuiteShapeStart>(3), 4);
  for (size_t i = 0; i < 3; ++i) EXPECT_GE(s.quota(i), 1u) << i;
  EXPECT_EQ(total_quota(s, 3), 4u);
}

TEST(SuiteSchedule, WithFewerSlotsThanShapesTheLeastEvaluatedGoFirst) {
  SuiteSchedule s(std::vector<SuiteShapeStart>(3), 2);
  evaluate(s, 0, 5, 10, 0);  // shape 0 is ahead: shapes 1 and 2 hold the two slots
  EXPECT_EQ(s.quota(0), 0u);
  EXPECT_EQ(s.quota(1), 1u);
  EXPECT_EQ(s.quota(2), 1u);
}

TEST(SuiteSchedule, AShapeUnderTheFloorOutranksOnePastIt) {
  SuiteScheduleOptions o;
  o.floor = 4;
  SuiteSchedule s(std::vector<SuiteShapeStart>(2), 3, o);
  evaluate(s, 0, 10, 100, 5);  // past the floor and improving fast
  evaluate(s, 1, 2, 100, 0);   // under it
  EXPECT_GE(s.quota(1), 2u);
}

TEST(SuiteSchedule, PastTheFloorAnImprovingShapeGetsMoreThanAFlatOne) {
  SuiteScheduleOptions o;
  o.floor = 4;
  SuiteSchedule s(std::vector<SuiteShapeStart>(2), 8, o);
  evaluate(s, 0, 20, 100, 0);  // flat
  evaluate(s, 1, 20, 100, 2);  // 2% better each evaluation
  EXPECT_GT(s.quota(1), s.quota(0));
  evaluate(s, 1, 10, 62, 0);  // shape 1 flattens: exploration gives the less evaluated shape its share back
  EXPECT_GE(s.quota(0), s.quota(1));
  EXPECT_GE(s.quota(0), 4u);
}

TEST(SuiteSchedule, AShapeFarFromItsBaselineGetsMoreThanOneAtIt) {
  SuiteScheduleOptions o;
  o.floor = 2;
  std::vector<SuiteShapeStart> starts(2);
  starts[0].baseline_us = 100;  // at its baseline
  starts[1].baseline_us = 50;   // twice as slow as its baseline
  SuiteSchedule s(starts, 6, o);
  evaluate(s, 0, 10, 100, 0);
  evaluate(s, 1, 10, 100, 0);
  EXPECT_GT(s.quota(1), s.quota(0));
}

TEST(SuiteSchedule, FinishedShapesHoldNothingAndTheirSlotsGoToTheRest) {
  SuiteSchedule s(std::vector<SuiteShapeStart>(3), 6);
  s.finished(0);
  EXPECT_EQ(s.quota(0), 0u);
  EXPECT_EQ(s.quota(1) + s.quota(2), 6u);
  s.finished(1);
  EXPECT_EQ(s.quota(2), 6u);
  s.finished(2);
  EXPECT_EQ(total_quota(s, 3), 0u);
}

TEST(SuiteSchedule, AResumeCountsTheCampaignsEarlierEvaluationsAgainstTheFloor) {
  std::vector<SuiteShapeStart> starts(2);
  starts[0].evaluated = 30;  // past the floor before this run
  SuiteSchedule s(starts, 2);
  EXPECT_EQ(s.quota(0), 0u);
  EXPECT_EQ(s.quota(1), 2u);
}

TEST(SuiteSchedule, AGrowingQuotaWakesTheShapeUntilItsWakeIsRemoved) {
  SuiteSchedule s(std::vector<SuiteShapeStart>(2), 2);
  int woken = 0;
  s.on_grow(1, [&] { ++woken; });
  s.finished(0);  // shape 1 takes shape 0's slot
  EXPECT_EQ(woken, 1);
  s.on_grow(1, {});
  SuiteSchedule t(std::vector<SuiteShapeStart>(2), 2);
  t.on_grow(1, [&] { ++woken; });
  t.on_grow(1, {});
  t.finished(0);
  EXPECT_EQ(woken, 1);
}

TEST(SuiteSchedule, TheQuotaConditionLeavesRoomForTheSlotsNotInFlight) {
  SuiteSchedule s(std::vector<SuiteShapeStart>(1), 3);
  SuiteQuota q(s, 0);
  LoopState st;
  EXPECT_EQ(q.dispatches_left(st), 3u);
  st.dispatched = 5;
  st.evaluated = 3;  // two in flight
  EXPECT_EQ(q.dispatches_left(st), 1u);
  st.dispatched = 6;
  EXPECT_EQ(q.dispatches_left(st), 0u);
  EXPECT_FALSE(q.reached(st));
}

TEST(SuiteSchedule, TheLineShowsEachShapesState) {
  SuiteSchedule s(std::vector<SuiteShapeStart>(2), 3);
  s.record(0, 12.5);
  s.finished(1);
  EXPECT_EQ(s.line(), "#1 1 ev 12.5 us x3 | #2 done 0 ev");
}

TEST(SuiteSchedule, NoShapeHoldsMoreThanItsCap) {
  SuiteScheduleOptions o;
  o.max_per_shape = 2;
  SuiteSchedule s(std::vector<SuiteShapeStart>(2), 10, o);
  EXPECT_EQ(s.quota(0), 2u);
  EXPECT_EQ(s.quota(1), 2u);
  s.finished(0);
  EXPECT_EQ(s.quota(1), 2u) << "the slots left over stay unused";
}

// A thread that releases the worker and asks again at once waits behind one that asked before it (with
// std::mutex it took it straight back, and one shape's jobs kept the GPU for minutes).
TEST(FairLock, AWaiterIsServedBeforeTheHolderRelocks) {
  FairLock lock;
  std::atomic<bool> waiter_had_it{false};
  lock.lock();
  std::thread waiter([&] {
    lock.lock();
    waiter_had_it = true;
    lock.unlock();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the waiter holds its ticket
  lock.unlock();
  lock.lock();
  EXPECT_TRUE(waiter_had_it.load());
  lock.unlock();
  waiter.join();
}
