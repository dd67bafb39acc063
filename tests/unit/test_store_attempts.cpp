// The results database: attempts and crash recovery, and the top / best queries. Every test uses its
// own temporary database. The PostgreSQL test binary
// (tests/pg) compiles this file again with KFORGE_STORE_TEST_PG: the STORE_TEST cases then run
// against fresh databases of the test cluster, the SQLite-file cases are left out.
#include "store_test_support.hpp"

// ---- attempts ----

STORE_TEST(AttemptThenFinish) {
  TempDb t;
  Store s(t.path());
  int64_t camp = s.create_campaign(campaign_record());
  int64_t a = s.begin_attempt(camp, "gemm", config(64), kShape, kH100);
  {
    Raw raw(t.path());
    EXPECT_EQ(raw.count("SELECT count(*) FROM attempts WHERE state = 'dispatched'"), 1);
  }
  auto e = ok_eval(config(64), 50);
  int64_t id = s.finish_attempt(a, e);
  auto all = s.evaluations("gemm");
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].id, id);
  EXPECT_EQ(all[0].campaign_id, camp);  // taken from the attempt
  Raw raw(t.path());
  EXPECT_EQ(raw.count("SELECT count(*) FROM attempts WHERE state = 'done' AND finished_at IS NOT NULL"), 1);
  EXPECT_EQ(raw.count("SELECT attempt_id FROM evaluations"), a);

  EXPECT_THROW(s.finish_attempt(a, e), StoreError);      // already done
  EXPECT_THROW(s.finish_attempt(a + 100, e), StoreError);  // unknown
  int64_t b = s.begin_attempt(camp, "gemm", config(64), kShape, kH100);
  EXPECT_THROW(s.finish_attempt(b, ok_eval(config(128), 50)), StoreError);  // other config
  EXPECT_THROW(s.finish_attempt(b, ok_eval(config(64), 50, kA100)), StoreError);  // other device
  // A failed finish changes nothing: the attempt is still open, no evaluation was added.
  EXPECT_EQ(raw.count("SELECT count(*) FROM attempts WHERE state = 'dispatched'"), 1);
  EXPECT_EQ(raw.count("SELECT count(*) FROM evaluations"), 1);
  EXPECT_EQ(s.status_counts(camp), (std::map<std::string, int>{{"ok", 1}}));
}

STORE_TEST(CrashLeavesInterruptedAttempts) {
  TempDb t;
  int64_t camp = 0;
  { Store s(t.path()); camp = s.create_campaign(campaign_record()); }
  // A child process records one result, dispatches a second config and is killed with
  // SIGKILL before it can finish: no destructor, no clean shutdown.
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    Store s(t.path());
    int64_t a = s.begin_attempt(camp, "gemm", config(64), kShape, kH100);
    auto e = ok_eval(config(64), 40);
    s.finish_attempt(a, e);
    s.add_evaluation(failed_eval(config(16), Status::Invalid));
    s.begin_attempt(camp, "gemm", config(128), kShape, kH100);
    std::raise(SIGKILL);
  }
  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(wstatus));

  Store s(t.path());
  // Everything committed before the kill is there.
  EXPECT_EQ(s.evaluations("gemm").size(), 2u);
  // The dispatched attempt is not "evaluated" (it must be retried)...
  EXPECT_EQ(s.evaluated_config_keys("gemm", kShape, kH100),
            (std::set<std::string>{"BLOCK_M=16,MMA=wmma", "BLOCK_M=64,MMA=wmma"}));
  auto closed = s.close_interrupted(camp);
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0].status, Status::Interrupted);
  EXPECT_EQ(closed[0].config, config(128));
  EXPECT_EQ(closed[0].shape, kShape);
  EXPECT_EQ(closed[0].family, "gemm");
  EXPECT_EQ(closed[0].device.name, kH100.name);
  EXPECT_EQ(closed[0].campaign_id, camp);
  EXPECT_FALSE(closed[0].timing);
  EXPECT_GT(closed[0].id, 0);
  // ... and still is not after closing, but now counts once as interrupted.
  EXPECT_EQ(s.evaluated_config_keys("gemm", kShape, kH100).count("BLOCK_M=128,MMA=wmma"), 0u);
  EXPECT_EQ(s.interrupted_counts("gemm", kShape, kH100),
            (std::map<std::string, int>{{"BLOCK_M=128,MMA=wmma", 1}}));
  EXPECT_EQ(s.status_counts(camp), (std::map<std::string, int>{{"interrupted", 1}, {"ok", 1}}));
  // Closing again finds nothing; the attempt is marked.
  EXPECT_TRUE(s.close_interrupted(camp).empty());
  Raw raw(t.path());
  EXPECT_EQ(raw.count("SELECT count(*) FROM attempts WHERE state = 'interrupted'"), 1);

  // The retry succeeds: now it is evaluated, and the interruption is still on record.
  int64_t a = s.begin_attempt(camp, "gemm", config(128), kShape, kH100);
  s.finish_attempt(a, ok_eval(config(128), 30));
  EXPECT_EQ(s.evaluated_config_keys("gemm", kShape, kH100).count("BLOCK_M=128,MMA=wmma"), 1u);
  EXPECT_EQ(s.interrupted_counts("gemm", kShape, kH100).at("BLOCK_M=128,MMA=wmma"), 1);
}

STORE_TEST(CloseInterruptedTouchesOnlyItsCampaign) {
  TempDb t;
  Store s(t.path());
  int64_t c1 = s.create_campaign(campaign_record());
  int64_t c2 = s.create_campaign(campaign_record());
  s.begin_attempt(c1, "gemm", config(32), kShape, kH100);
  s.begin_attempt(c2, "gemm", config(64), kShape, kH100);
  s.begin_attempt(c2, "gemm", config(128), kShape, kH100);
  auto closed = s.close_interrupted(c2);
  ASSERT_EQ(closed.size(), 2u);
  EXPECT_EQ(closed[0].config, config(64));
  EXPECT_EQ(closed[1].config, config(128));
  EXPECT_TRUE(s.status_counts(c1).empty());
  EXPECT_EQ(s.close_interrupted(c1).size(), 1u);
}

// ---- top / best ----

STORE_TEST(TopIsFastestOkPerConfigAndFiltersDevice) {
  TempDb t;
  Store s(t.path());
  s.add_evaluation(ok_eval(config(64), 50));
  s.add_evaluation(ok_eval(config(64), 45));  // a re-measurement: the faster one counts
  s.add_evaluation(ok_eval(config(128), 40));
  s.add_evaluation(ok_eval(config(32), 60));
  s.add_evaluation(ok_eval(config(16), 20, kA100));  // fastest, on another device
  auto wrong = ok_eval(config(256), 5);
  wrong.status = Status::WrongResult;  // fast and wrong never wins
  s.add_evaluation(wrong);
  s.add_evaluation(failed_eval(config(512), Status::CompileError));
  s.add_evaluation(ok_eval(config(8), 1, kH100, kSmall));  // another shape

  auto top = s.top("gemm", kShape, kH100, 10);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].config, config(128));
  EXPECT_EQ(top[1].config, config(64));
  EXPECT_DOUBLE_EQ(top[1].timing->median_us, 45);
  EXPECT_EQ(top[2].config, config(32));

  auto two = s.top("gemm", kShape, kH100, 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1].config, config(64));
  EXPECT_TRUE(s.top("gemm", kShape, kH100, 0).empty());

  auto any = s.top("gemm", kShape, std::nullopt, 10);
  ASSERT_EQ(any.size(), 4u);
  EXPECT_EQ(any[0].config, config(16));
  EXPECT_EQ(any[0].device.name, kA100.name);

  auto b = s.best("gemm", kShape, kH100);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->config, config(128));
  EXPECT_EQ(s.best("gemm", kShape, std::nullopt)->config, config(16));
  EXPECT_EQ(s.best("gemm", kSmall, std::nullopt)->config, config(8));
  EXPECT_FALSE(s.best("gemm", kSmall, kA100));
  EXPECT_FALSE(s.best("attention", kShape, std::nullopt));
  EXPECT_FALSE(s.best("gemm", kShape, DeviceKey{"RTX 4090", 89, 128, "1"}));

  // Evaluated keys include failures (they must not be re-run), per shape and device.
  EXPECT_EQ(s.evaluated_config_keys("gemm", kShape, kH100).size(), 5u);
  EXPECT_EQ(s.evaluated_config_keys("gemm", kShape, kA100).size(), 1u);
}

// Times of two timing methods do not compare: each config counts with its fastest time of the newest method it
// was timed with, and the configs timed with the newest method rank first. (Before, a config's old-method time,
// up to 12% faster on some kernels, kept the configs timed with the current method out of refresh's top k.)
STORE_TEST(TopRanksTheNewestTimingMethodFirst) {
  TempDb t;
  Store s(t.path());
  auto timed = [](int block, double us, int method) {
    auto e = ok_eval(config(block), us);
    e.timing->method = method;
    return e;
  };
  s.add_evaluation(timed(64, 10, 1));   // fast with the old method ...
  s.add_evaluation(timed(64, 30, 2));   // ... slower with the current one
  s.add_evaluation(timed(128, 20, 2));
  s.add_evaluation(timed(32, 5, 1));    // only ever timed with the old method
  auto top = s.top("gemm", kShape, kH100, 10);
  ASSERT_EQ(top.size(), 3u);
  EXPECT_EQ(top[0].config, config(128));
  EXPECT_EQ(top[1].config, config(64));
  EXPECT_DOUBLE_EQ(top[1].timing->median_us, 30);
  EXPECT_EQ(top[1].timing->method, 2);
  EXPECT_EQ(top[2].config, config(32));
  auto two = s.top("gemm", kShape, kH100, 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].config, config(128));
  EXPECT_EQ(two[1].config, config(64));
}
