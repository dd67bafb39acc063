// best's ratios to baseline backends: side by side where a baseline record timed the winner in the same run.
#include <gtest/gtest.h>

#include "winner/baseline_ratio.hpp"

namespace {

kf::BaselineRecord record(const std::string& backend, double us, const std::string& created,
                          const nlohmann::json& side_by_side = nullptr) {
  kf::BaselineRecord b;
  b.family = "sdpa_fwd";
  b.device = {"NVIDIA H200", 90, 132, "580"};
  b.backend = backend;
  b.median_us = us;
  b.extra = {{"backend", backend}};
  if (!side_by_side.is_null()) b.extra["side_by_side"] = side_by_side;
  b.created_at = created;
  return b;
}

const nlohmann::json kWinner = {{"BLOCK_M", 128}, {"STAGES", 2}, {"MMA", "wgmma"}};

TEST(BaselineRatio, StoredTimesWithoutASideBySideRecord) {
  const auto r = kf::baseline_ratios({record("torch.cudnn", 110, "1"), record("torch.cudnn", 130, "2")}, kWinner, 100);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].backend, "torch.cudnn");
  EXPECT_DOUBLE_EQ(r[0].median_us, 120);  // the records' median
  EXPECT_DOUBLE_EQ(r[0].speedup, 1.2);
  EXPECT_FALSE(r[0].side_by_side);
}

TEST(BaselineRatio, TheRunThatTimedThisWinnerBesideTheBackendGivesTheRatio) {
  // the stored median (100 us) came from the worker; compare_torch timed the same config at 90 us beside
  // cuDNN's 99 us: the ratio is 1.10, not 0.99
  const auto r = kf::baseline_ratios(
      {record("torch.cudnn", 99, "1", {{"config", {{"MMA", "wgmma"}, {"STAGES", 2}, {"BLOCK_M", 128}}}, {"kforge_us", 90}}),
       record("torch.flash", 200, "1", {{"config", kWinner}, {"kforge_us", 100}})},
      kWinner, 100);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_NEAR(r[0].speedup, 1.1, 1e-12);
  EXPECT_TRUE(r[0].side_by_side);
  EXPECT_NEAR(r[1].speedup, 2.0, 1e-12);
}

TEST(BaselineRatio, AnotherConfigsRunIsNoPairing) {
  // timed beside a config that is no longer the winner (STAGES 3), or with a kforge time that is no time
  const auto r = kf::baseline_ratios(
      {record("torch.cudnn", 99, "1", {{"config", {{"BLOCK_M", 128}, {"STAGES", 3}, {"MMA", "wgmma"}}}, {"kforge_us", 90}}),
       record("torch.cudnn", 99, "2", {{"config", kWinner}, {"kforge_us", -1}}),
       record("torch.cudnn", 99, "3", {{"config", kWinner}})},
      kWinner, 110);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].side_by_side);
  EXPECT_NEAR(r[0].speedup, 0.9, 1e-12);
}

TEST(BaselineRatio, SeveralSideBySideRunsGiveTheirMedianRatio) {
  const auto r = kf::baseline_ratios({record("torch.cudnn", 100, "1", {{"config", kWinner}, {"kforge_us", 100}}),
                                      record("torch.cudnn", 120, "2", {{"config", kWinner}, {"kforge_us", 100}}),
                                      record("torch.cudnn", 99, "3", {{"config", kWinner}, {"kforge_us", 90}}),
                                      record("torch.cudnn", 500, "4")},  // an unpaired outlier counts for nothing
                                     kWinner, 100);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].side_by_side);
  EXPECT_NEAR(r[0].speedup, 1.1, 1e-12);  // median of 1.0, 1.2, 1.1
}

}  // namespace
