// `kforge db migrate`: a SQLite results file copied into PostgreSQL and back reads the same
// through the Store (ids, reals bit for bit, infinities, NULL timings, kernels, baselines,
// sanitizer runs), and new rows in the copy get fresh ids.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "cli_run.hpp"
#include "pg_test.hpp"
#include "store/store.hpp"
#include "store/store_copy.hpp"
#include "test_dir.hpp"

namespace fs = std::filesystem;
using namespace kf;

namespace {

const DeviceKey kH100{"NVIDIA H100 80GB HBM3", 90, 132, "580.65"};
const Shape kShape{{"M", int64_t{4096}}, {"dtype", std::string("f16")}};

void fill(Store& s) {
  CampaignRecord c;
  c.family = "gemm";
  c.strategy = "evo";
  c.seed = UINT64_MAX - 3;
  c.shapes = {kShape};
  c.budget = {{"evals", 10}};
  c.options = {{"timing", {{"max_reps", 7}}}};
  c.device = kH100;
  const int64_t camp = s.create_campaign(c);
  for (int i = 0; i < 5; ++i) {
    EvaluationRecord e;
    e.campaign_id = camp;
    e.family = "gemm";
    e.config = {{"BLOCK", int64_t{16 << i}}, {"SCALE", 0.1 * (i + 1)}};
    e.shape = kShape;
    e.device = kH100;
    e.status = i == 4 ? Status::WrongResult : Status::Ok;
    e.max_abs = i == 4 ? HUGE_VAL : 1.0 / 3.0;
    e.flops = 1e12 / 7.0;
    if (i < 4) {
      TimingStats t;
      t.median_us = 10.0 / (i + 1) + 1e-9;
      t.reps = 9;
      e.timing = t;
    }
    KernelRecord k;
    k.variant_hash = "hash" + std::to_string(i);
    k.arch = "sm_90a";
    k.ok = true;
    k.compile_ms = 12.25;
    k.log = "ptxas info: ok";
    e.kernel = k;
    const int64_t a = s.begin_attempt(camp, "gemm", e.config, kShape, kH100);
    s.finish_attempt(a, e);
  }
  s.begin_attempt(camp, "gemm", {{"BLOCK", int64_t{512}}}, kShape, kH100);  // left in flight
  BaselineRecord b;
  b.family = "gemm";
  b.shape = kShape;
  b.device = kH100;
  b.backend = "cublas";
  b.median_us = 3.5;
  b.extra = {{"note", "x"}};
  s.add_baseline(b);
  SanitizerRecord r;
  r.family = "gemm";
  r.variant_hash = "hash0";
  r.arch = "sm_90a";
  r.shape = kShape;
  r.device = kH100;
  r.campaign_id = camp;
  r.tool = "memcheck";
  r.passed = true;
  r.summary = "0 errors";
  s.add_sanitizer_run(r);
}

void expect_same(Store& a, Store& b) {
  ASSERT_EQ(a.campaigns().size(), b.campaigns().size());
  for (size_t i = 0; i < a.campaigns().size(); ++i) {
    const auto x = a.campaigns()[i], y = b.campaigns()[i];
    EXPECT_EQ(x.id, y.id);
    EXPECT_EQ(x.seed, y.seed);
    EXPECT_EQ(x.options, y.options);
    EXPECT_EQ(x.created_at, y.created_at);
    EXPECT_EQ(a.status_counts(x.id), b.status_counts(y.id));
  }
  const auto ea = a.evaluations("gemm"), eb = b.evaluations("gemm");
  ASSERT_EQ(ea.size(), eb.size());
  for (size_t i = 0; i < ea.size(); ++i) {
    EXPECT_EQ(ea[i].id, eb[i].id);
    EXPECT_EQ(ea[i].config, eb[i].config);
    EXPECT_EQ(ea[i].status, eb[i].status);
    EXPECT_EQ(ea[i].max_abs, eb[i].max_abs);  // bit for bit, infinity included
    EXPECT_EQ(ea[i].flops, eb[i].flops);
    ASSERT_EQ(ea[i].timing.has_value(), eb[i].timing.has_value());
    if (ea[i].timing) EXPECT_EQ(ea[i].timing->median_us, eb[i].timing->median_us);
    ASSERT_TRUE(eb[i].kernel);
    EXPECT_EQ(ea[i].kernel->log, eb[i].kernel->log);
  }
  EXPECT_EQ(a.baselines("gemm", kShape, kH100).size(), 1u);
  EXPECT_EQ(b.baselines("gemm", kShape, kH100).at(0).extra, a.baselines("gemm", kShape, kH100).at(0).extra);
  EXPECT_EQ(b.sanitizer_runs("gemm", "hash0").size(), 1u);
  EXPECT_EQ(b.best("gemm", kShape, kH100)->id, a.best("gemm", kShape, kH100)->id);
}

}  // namespace

TEST(DbMigrate, SqliteToPostgresAndBack) {
  KF_REQUIRE_POSTGRES();
  const fs::path dir = fresh_test_dir("kforge_migrate");
  const fs::path file = dir / "results.db", back = dir / "back.db";
  { Store s(file); fill(s); }
  const std::string url = pgtest::fresh_database();
  const auto r = run_kforge({"db", "migrate", "--from", file.string(), "--to", url}, dir);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("evaluations 5"), std::string::npos) << r.out;
  copy_store(url, back.string());
  {
    Store a(file, Store::Access::ReadOnly), pg(url), b(back, Store::Access::ReadOnly);
    expect_same(a, pg);
    expect_same(a, b);
    // The in-flight attempt came along: closing it in the copy works as in the original.
    EXPECT_EQ(pg.close_interrupted(1).size(), 1u);
    // The copy's sequences continue after the copied ids.
    const int64_t next = pg.create_campaign(pg.campaign(1).value());
    EXPECT_EQ(next, 2);
  }
  // A destination that holds results is refused, in one line, and left as it was.
  const auto again = run_kforge({"db", "migrate", "--from", file.string(), "--to", url}, dir);
  EXPECT_EQ(again.rc, 1);
  ASSERT_EQ(again.err_lines().size(), 1u) << again.err;
  EXPECT_NE(again.err.find("already holds results"), std::string::npos) << again.err;
  EXPECT_EQ(Store(url).campaigns().size(), 2u);
  fs::remove_all(dir);
}
