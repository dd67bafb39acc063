// The campaign's progress line in a log (stderr is no terminal under ctest): a line after the
// first evaluation, carrying the seconds since the campaign began, so a log shows how long a
// campaign took to get going; then one per 25 evaluations or 10 s.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "campaign/progress.hpp"
#include "util/progress_line.hpp"

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

// The progress line of check, replay and counting (util/progress_line): its label and unit come
// from files (a family's dtype, an imported cache's device name) and may be any length.
TEST(ProgressLine, ALabelOfAnyLengthIsPrintedWhole) {
  const std::string label(20000, 'x');
  testing::internal::CaptureStderr();
  {
    ProgressLine p(label, std::string(3000, 'u'), 10);
    p.finish(4);
  }
  const std::string out = testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find(label + ": 4/10 " + std::string(3000, 'u') + ", "), std::string::npos) << out.substr(0, 200);
}

TEST(ProgressLine, AnEtaBeyondAnyIntegerIsCapped) {
  // One done of SIZE_MAX within microseconds: ~1e13 s to go, more than an int holds.
  testing::internal::CaptureStderr();
  {
    ProgressLine p("count", "checks", SIZE_MAX);
    p.finish(1);
  }
  const std::string out = testing::internal::GetCapturedStderr();
  EXPECT_NE(out.find(", ETA >99h"), std::string::npos) << out;
  EXPECT_EQ(out.find("ETA -"), std::string::npos) << out;
}

TEST(ProgressLine, EtaFormats) {
  EXPECT_EQ(format_eta(0), "0m00s");
  EXPECT_EQ(format_eta(125.7), "2m05s");
  EXPECT_EQ(format_eta(3599), "59m59s");
  EXPECT_EQ(format_eta(3 * 3600 + 7 * 60 + 5), "3h07m");
  EXPECT_EQ(format_eta(99 * 3600), "99h00m");
  EXPECT_EQ(format_eta(99 * 3600 + 1), ">99h");
  EXPECT_EQ(format_eta(1e300), ">99h");
  EXPECT_EQ(format_eta(std::numeric_limits<double>::infinity()), ">99h");
  EXPECT_EQ(format_eta(std::nan("")), "?");
}
