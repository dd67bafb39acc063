// The campaign's progress line in a log (stderr is no terminal under ctest): a line after the
// first evaluation, carrying the seconds since the campaign began, so a log shows how long a
// campaign took to get going; then one per 25 evaluations or 10 s.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "campaign/progress.hpp"

using namespace kf;

TEST(Progress, ALogGetsALineAfterTheFirstEvaluationWithTheTimeSinceTheStart) {
  if (isatty(STDERR_FILENO)) GTEST_SKIP() << "stderr is a terminal: the line is redrawn in place there";
  const auto began = std::chrono::steady_clock::now() - std::chrono::seconds(7);
  testing::internal::CaptureStderr();
  {
    Progress p("[1/1 shape]", Progress::Total{40, false}, false, began);
    p.record("ok", 12.5, 100.0);
    p.record("ok", 11.0, 110.0);  // within 10 s of the last line: none
  }
  const std::string out = testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find("[1/1 shape]  1/40 evals  best 12.50 us"), std::string::npos) << out;
  EXPECT_NE(out.find("t+7."), std::string::npos) << out;
  EXPECT_EQ(out.find("2/40 evals"), std::string::npos) << out;
}

TEST(Progress, QuietPrintsNothing) {
  testing::internal::CaptureStderr();
  {
    Progress p("[1/1 shape]", 40, true);
    p.record("ok", 12.5, 100.0);
    p.finish();
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}
