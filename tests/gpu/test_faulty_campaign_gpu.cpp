// One campaign over the test-only faulty family (tests/families/faulty.json): every variant is
// classified with the right status and reason, the campaign completes, and what the store
// held before is still there. Skips with the reason where there is no GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <variant>

#include "campaign/campaign.hpp"
#include "gpu/device.hpp"
#include "space/space.hpp"

namespace fs = std::filesystem;
using namespace kf;

namespace {

struct Expected {
  Status status;
  std::string reason;  // a part of the recorded error ("" for ok)
};

// MODE -> what the gate must say about it.
const std::map<std::string, Expected> kExpected = {
    {"ok", {Status::Ok, ""}},
    {"fault", {Status::RuntimeFault, "illegal"}},
    {"hang", {Status::Timeout, "no answer after"}},
    {"wrong", {Status::WrongResult, "max_abs"}},
    {"nocompile", {Status::CompileError, "does not compile, on purpose"}},
    {"bigsmem", {Status::Invalid, "bytes of shared memory >"}},  // the pre-launch resource check
    {"unwritten", {Status::WrongResult, "NaN/Inf"}},
    {"oob", {Status::WrongResult, "out-of-bounds write: buffer y"}},
    {"print", {Status::Ok, ""}},
    {"corrupt", {Status::WrongResult, "input x was modified by the kernel"}},
    {"race", {Status::WrongResult, "output y"}},
    {"trap", {Status::RuntimeFault, ""}},
    {"nan", {Status::WrongResult, "NaN/Inf"}},
};

}  // namespace

TEST(FaultyCampaignGpu, EveryVariantClassifiedAndNothingLost) {
  if (auto why = gpu::device_unavailable(0)) GTEST_SKIP() << *why;
  const fs::path dir = fs::temp_directory_path() / ("kforge_faulty_gpu_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const Family family = load_family(fs::path(KFORGE_TEST_DIR) / "families" / "faulty.json");
  const Shape shape = parse_shape(family, "N=4096");
  Store store(dir / "r.db");

  // Something stored before the campaign, which it must not lose.
  EvaluationRecord earlier;
  earlier.family = "faulty";
  earlier.config = {{"MODE", std::string("ok")}, {"SIZE_MULT", int64_t{1}}};
  earlier.shape = parse_shape(family, "N=1024");
  earlier.device = DeviceKey{"earlier device", 90, 132, "x"};
  earlier.status = Status::Ok;
  earlier.timing = TimingStats{};
  earlier.timing->median_us = 1.5;
  const int64_t earlier_id = store.add_evaluation(earlier);

  CampaignOptions o;
  o.strategy = "exhaustive";
  o.cache_dir = dir / "cache";
  o.worker_argv = {KFORGE_BINARY, "worker"};
  o.eval_timeout_s = 8;  // the hang variant costs this, twice
  o.compile_threads = 2;
  o.gpus = {0};
  o.quiet = true;
  o.remeasure_top_k = 2;
  o.timing.warmup_ms = 2;
  o.timing.max_ms = 100;
  o.timing.max_reps = 20;
  const CampaignOutcome out = run_campaign(store, family, {shape}, o);
  EXPECT_EQ(out.status, "done");

  const DeviceLimits dev = gpu::open_device(0);
  const size_t valid = make_space(family, shape, dev).enumerate_valid().size();
  const auto evals = store.evaluations("faulty", shape, std::nullopt, out.campaign_id);
  EXPECT_EQ(evals.size(), valid);  // each valid config once: none lost, none repeated
  EXPECT_TRUE(store.close_interrupted(out.campaign_id).empty());  // no attempt left open
  std::map<std::string, int> seen;
  for (const EvaluationRecord& e : evals) {
    const std::string mode = std::get<std::string>(e.config.at("MODE"));
    ++seen[mode];
    const auto it = kExpected.find(mode);
    ASSERT_NE(it, kExpected.end()) << "unexpected MODE " << mode;
    EXPECT_EQ(to_string(e.status), to_string(it->second.status)) << mode << ": " << e.error;
    EXPECT_NE(e.error.find(it->second.reason), std::string::npos) << mode << ": " << e.error;
    if (mode != "nocompile") EXPECT_EQ(e.error.find('\n'), std::string::npos) << mode;  // a compile log may span lines
  }
  for (const auto& [mode, want] : kExpected) EXPECT_EQ(seen[mode], 2) << mode << " (SIZE_MULT 1 and 2)";

  const auto before = store.evaluations("faulty", earlier.shape);
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before[0].id, earlier_id);
  EXPECT_EQ(before[0].timing->median_us, 1.5);
  fs::remove_all(dir);
}
