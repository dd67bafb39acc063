// The results database: round trips of every record kind and uniqueness. Every test uses its own
// temporary database. The PostgreSQL test binary
// (tests/pg) compiles this file again with KFORGE_STORE_TEST_PG: the STORE_TEST cases then run
// against fresh databases of the test cluster, the SQLite-file cases are left out.
#include "store_test_support.hpp"

// ---- round trips ----

STORE_TEST(CampaignRoundTrip) {
  TempDb t;
  Store s(t.path());
  auto rec = campaign_record();
  rec.seed = UINT64_MAX - 5;  // above INT64_MAX: stored as its bit pattern
  int64_t id = s.create_campaign(rec);
  auto c = s.campaign(id);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->id, id);
  EXPECT_EQ(c->family, "gemm");
  EXPECT_EQ(c->strategy, "evolutionary");
  EXPECT_EQ(c->seed, UINT64_MAX - 5);
  EXPECT_EQ(c->shapes, rec.shapes);
  EXPECT_EQ(c->budget, rec.budget);
  EXPECT_EQ(c->options, rec.options);
  EXPECT_EQ(c->status, "running");
  EXPECT_FALSE(c->device);
  EXPECT_EQ(c->created_at.size(), 24u);  // 2025-01-31T12:00:00.000Z
  EXPECT_EQ(c->created_at.back(), 'Z');
  EXPECT_EQ(c->updated_at, c->created_at);

  s.set_campaign_device(id, kH100);
  s.set_campaign_status(id, "done");
  c = s.campaign(id);
  ASSERT_TRUE(c->device);
  EXPECT_EQ(c->device->name, kH100.name);
  EXPECT_EQ(c->device->cc, 90);
  EXPECT_EQ(c->device->sm_count, 132);
  EXPECT_EQ(c->device->driver, "580.65");
  EXPECT_EQ(c->status, "done");
  EXPECT_GE(c->updated_at, c->created_at);

  int64_t id2 = s.create_campaign(campaign_record());
  auto all = s.campaigns();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].id, id);
  EXPECT_EQ(all[1].id, id2);
  EXPECT_FALSE(s.campaign(12345));
  EXPECT_THROW(s.set_campaign_status(12345, "done"), StoreError);
  EXPECT_THROW(s.set_campaign_device(12345, kH100), StoreError);
  // options are replaced whole (a campaign adds its finalists' ranking to them)
  auto opts = rec.options;
  opts["remeasured"] = {{"N=1", nlohmann::json::array()}};
  s.set_campaign_options(id, opts);
  EXPECT_EQ(s.campaign(id)->options, opts);
  EXPECT_EQ(s.campaign(id2)->options, rec.options);
  EXPECT_THROW(s.set_campaign_options(12345, opts), StoreError);
  // The campaign's shapes are known before anything ran.
  EXPECT_EQ(s.shapes("gemm"), (std::vector<Shape>{kShape, kSmall}));
}

// Each timed record keeps the timing method it was measured with; rows written before the store had the column
// (schema 3 and older) read as method 1, the one method there was.
STORE_TEST(TimingMethodRoundTripsAndOldRowsReadAsMethodOne) {
  TempDb t;
  {
    Store s(t.path());
    auto e = ok_eval(config(64), 10.0);
    e.timing->method = 7;
    s.add_evaluation(e);
    s.add_evaluation(ok_eval(config(32), 20.0));
  }
  {
    Raw raw(t.path());
    raw.exec("UPDATE evaluations SET timing_method = NULL WHERE median_us = 20");
  }
  Store s(t.path());
  auto all = s.evaluations("gemm");
  ASSERT_EQ(all.size(), 2u);
  std::map<double, int> method;
  for (const auto& r : all) {
    ASSERT_TRUE(r.timing);
    method[r.timing->median_us] = r.timing->method;
  }
  EXPECT_EQ(method.at(10.0), 7);
  EXPECT_EQ(method.at(20.0), 1);
}

// A timed record keeps its power and energy a launch; one whose energy was not measured (no NVML) stores NULL,
// which reads back as 0, "not measured".
STORE_TEST(EnergyRoundTripsAndUnmeasuredReadsAsZero) {
  TempDb t;
  {
    Store s(t.path());
    auto e = ok_eval(config(64), 10.0);
    e.timing->power_w = 350;
    e.timing->energy_uj = 3500;
    s.add_evaluation(e);
    s.add_evaluation(ok_eval(config(32), 20.0));
  }
  Store s(t.path());
  std::map<double, std::pair<double, double>> energy;
  for (const auto& r : s.evaluations("gemm")) {
    ASSERT_TRUE(r.timing);
    energy[r.timing->median_us] = {r.timing->power_w, r.timing->energy_uj};
  }
  ASSERT_EQ(energy.size(), 2u);
  EXPECT_EQ(energy.at(10.0), std::make_pair(350.0, 3500.0));
  EXPECT_EQ(energy.at(20.0), std::make_pair(0.0, 0.0));
  EXPECT_EQ(Raw(t.path()).count("SELECT count(*) FROM evaluations WHERE power_w IS NULL AND energy_uj IS NULL"), 1);
}

STORE_TEST(EvaluationRoundTrip) {
  TempDb t;
  Store s(t.path());
  int64_t camp = s.create_campaign(campaign_record());
  auto e = ok_eval(config(64, "mma"), 123.5);
  e.config["SCALE"] = 0.5;  // a real survives with its type
  e.campaign_id = camp;
  kf::KernelRecord k;
  k.variant_hash = "0123456789abcdef0123456789abcdef";
  k.arch = "sm_90a";
  k.ok = true;
  k.registers = 168;
  k.smem_static = 1024;
  k.smem_dynamic = 65536;
  k.stack_frame = 16;
  k.spill_stores = 4;
  k.spill_loads = 8;
  k.compile_ms = 812.25;
  k.log = "ptxas info: Used 168 registers";
  e.kernel = k;
  int64_t id = s.add_evaluation(e);

  auto failed = failed_eval(config(128), Status::CompileError);
  int64_t id2 = s.add_evaluation(failed);  // no campaign, no timing, no kernel

  auto all = s.evaluations("gemm");
  ASSERT_EQ(all.size(), 2u);
  const auto& r = all[0];
  EXPECT_EQ(r.id, id);
  EXPECT_EQ(r.campaign_id, camp);
  EXPECT_EQ(r.family, "gemm");
  EXPECT_EQ(r.config, e.config);
  EXPECT_TRUE(std::holds_alternative<double>(r.config.at("SCALE")));
  EXPECT_TRUE(std::holds_alternative<int64_t>(r.config.at("BLOCK_M")));
  EXPECT_EQ(r.shape, kShape);
  EXPECT_EQ(r.device.name, kH100.name);
  EXPECT_EQ(r.device.cc, kH100.cc);
  EXPECT_EQ(r.status, Status::Ok);
  EXPECT_EQ(r.error, "");
  EXPECT_DOUBLE_EQ(r.max_abs, 1e-3);
  EXPECT_DOUBLE_EQ(r.rel_l2, 2e-4);
  ASSERT_TRUE(r.timing);
  EXPECT_DOUBLE_EQ(r.timing->median_us, 123.5);
  EXPECT_DOUBLE_EQ(r.timing->p10_us, e.timing->p10_us);
  EXPECT_DOUBLE_EQ(r.timing->p90_us, e.timing->p90_us);
  EXPECT_DOUBLE_EQ(r.timing->ci_lo_us, e.timing->ci_lo_us);
  EXPECT_DOUBLE_EQ(r.timing->ci_hi_us, e.timing->ci_hi_us);
  EXPECT_EQ(r.timing->reps, 20);
  EXPECT_EQ(r.timing->launches_per_rep, 50);
  EXPECT_DOUBLE_EQ(r.timing->plain_median_us, 126.5);
  EXPECT_DOUBLE_EQ(r.flops, e.flops);
  EXPECT_DOUBLE_EQ(r.bytes, e.bytes);
  EXPECT_FALSE(r.created_at.empty());
  ASSERT_TRUE(r.kernel);
  EXPECT_EQ(r.kernel->variant_hash, k.variant_hash);
  EXPECT_EQ(r.kernel->arch, "sm_90a");
  EXPECT_TRUE(r.kernel->ok);
  EXPECT_EQ(r.kernel->registers, 168);
  EXPECT_EQ(r.kernel->smem_static, 1024);
  EXPECT_EQ(r.kernel->smem_dynamic, 65536);
  EXPECT_EQ(r.kernel->stack_frame, 16);
  EXPECT_EQ(r.kernel->spill_stores, 4);
  EXPECT_EQ(r.kernel->spill_loads, 8);
  EXPECT_DOUBLE_EQ(r.kernel->compile_ms, 812.25);
  EXPECT_EQ(r.kernel->log, k.log);

  const auto& f = all[1];
  EXPECT_EQ(f.id, id2);
  EXPECT_EQ(f.campaign_id, 0);
  EXPECT_EQ(f.status, Status::CompileError);
  EXPECT_EQ(f.error, failed.error);
  EXPECT_FALSE(f.timing);
  EXPECT_FALSE(f.kernel);

  // Filters: by shape, device, campaign (0 = no campaign).
  EXPECT_EQ(s.evaluations("gemm", kShape, kH100).size(), 2u);
  EXPECT_TRUE(s.evaluations("gemm", kSmall).empty());
  EXPECT_TRUE(s.evaluations("gemm", std::nullopt, kA100).empty());
  EXPECT_EQ(s.evaluations("gemm", std::nullopt, std::nullopt, camp).size(), 1u);
  EXPECT_EQ(s.evaluations("gemm", std::nullopt, std::nullopt, 0).at(0).id, id2);
  EXPECT_TRUE(s.evaluations("attention").empty());

  // A created_at given by the caller (an import) is kept.
  auto imported = ok_eval(config(32), 300);
  imported.created_at = "2024-01-02T03:04:05.678Z";
  s.add_evaluation(imported);
  EXPECT_EQ(s.evaluations("gemm").back().created_at, "2024-01-02T03:04:05.678Z");
  EXPECT_THROW(
      {
        auto bad = ok_eval(config(32), 1);
        bad.campaign_id = 777;
        s.add_evaluation(bad);
      },
      StoreError);
}

STORE_TEST(BaselinesRoundTripNewestFirst) {
  TempDb t;
  Store s(t.path());
  kf::BaselineRecord b = cublas_baseline(100, 7);
  b.created_at = "2025-01-01T00:00:00.000Z";
  s.add_baseline(b);
  b.median_us = 98;
  b.created_at = "2025-02-01T00:00:00.000Z";
  s.add_baseline(b);
  b.backend = "torch.matmul";
  b.median_us = 110;
  b.extra = nullptr;
  b.created_at = "";
  s.add_baseline(b);
  b.device = kA100;
  b.backend = "cublas";
  s.add_baseline(b);

  auto h = s.baselines("gemm", kShape, kH100);
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].backend, "cublas");
  EXPECT_DOUBLE_EQ(h[0].median_us, 98);  // newest cublas first
  EXPECT_EQ(h[0].extra, (nlohmann::json{{"algo", 7}}));
  EXPECT_EQ(h[0].shape, kShape);
  EXPECT_EQ(h[0].family, "gemm");
  EXPECT_EQ(h[1].created_at, "2025-01-01T00:00:00.000Z");
  EXPECT_EQ(h[2].backend, "torch.matmul");
  EXPECT_TRUE(h[2].extra.is_null());
  EXPECT_FALSE(h[2].created_at.empty());
  EXPECT_EQ(s.baselines("gemm", kShape, std::nullopt).size(), 4u);
  EXPECT_TRUE(s.baselines("gemm", kSmall, std::nullopt).empty());
}

STORE_TEST(TypicalBaselineIsTheMedianPerBackendAndDevice) {
  auto rec = [](const std::string& backend, const kf::DeviceKey& d, double us, const std::string& at) {
    kf::BaselineRecord b;
    b.backend = backend;
    b.device = d;
    b.median_us = us;
    b.created_at = at;
    return b;
  };
  const auto t = kf::typical_baselines({rec("cudnn", kH100, 7.6, "2026-01-03"),
                                        rec("cudnn", kH100, 9.4, "2026-01-02"),  // one noisy run
                                        rec("cudnn", kH100, 7.5, "2026-01-01"),
                                        rec("cudnn", kA100, 20.0, "2026-01-01"),
                                        rec("flash", kH100, 8.0, "2026-01-01"),
                                        rec("flash", kH100, 9.0, "2026-01-02")});
  ASSERT_EQ(t.size(), 3u);
  EXPECT_DOUBLE_EQ(t[0].median_us, 7.6);
  EXPECT_EQ(t[0].created_at, "2026-01-03");
  EXPECT_DOUBLE_EQ(t[1].median_us, 20.0);
  EXPECT_EQ(t[2].backend, "flash");
  EXPECT_DOUBLE_EQ(t[2].median_us, 8.5);
}

STORE_TEST(DevicesShapesAndSpecHash) {
  TempDb t;
  Store s(t.path());
  EXPECT_FALSE(s.family_spec_hash("gemm"));
  s.add_evaluation(ok_eval(config(64), 10, kH100, kShape));
  s.add_evaluation(ok_eval(config(64), 10, kA100, kSmall));
  s.add_evaluation(ok_eval(config(32), 10, kH100, kSmall));
  auto devs = s.devices();
  ASSERT_EQ(devs.size(), 2u);
  EXPECT_EQ(devs[0].name, kH100.name);
  EXPECT_EQ(devs[1].name, kA100.name);
  EXPECT_EQ(devs[1].cc, 80);
  EXPECT_EQ(s.shapes("gemm"), (std::vector<Shape>{kShape, kSmall}));
  EXPECT_TRUE(s.shapes("attention").empty());
  EXPECT_EQ(s.family_spec_hash("gemm"), "");
  s.set_family_spec_hash("gemm", "abc");
  s.set_family_spec_hash("gemm", "def");
  EXPECT_EQ(s.family_spec_hash("gemm"), "def");
  EXPECT_EQ(kf::device_key([] {
              kf::DeviceLimits d;
              d.name = "X";
              d.cc_major = 8;
              d.cc_minor = 9;
              d.sm_count = 76;
              d.driver = "1.2";
              return d;
            }())
                .cc,
            89);
}

// ---- uniqueness ----

STORE_TEST(ConfigsShapesDevicesAndKernelsAreUnique) {
  TempDb t;
  {
    Store s(t.path());
    auto e = ok_eval(config(64), 10);
    kf::KernelRecord k;
    k.variant_hash = "h";
    k.arch = "sm_90";
    k.registers = 100;
    e.kernel = k;
    s.add_evaluation(e);
    e.kernel->registers = 96;  // recompiled: newest numbers win, the row is reused
    s.add_evaluation(e);
    e.kernel->arch = "sm_80";  // another arch is another kernel
    s.add_evaluation(e);
    for (const auto& r : s.evaluations("gemm")) {
      ASSERT_TRUE(r.kernel);
      if (r.kernel->arch == "sm_90") {
        EXPECT_EQ(r.kernel->registers, 96);
      }
    }
    // The same config under another family is another row.
    auto other = ok_eval(config(64), 10);
    other.family = "gemm_splitk";
    s.add_evaluation(other);
  }
  Raw raw(t.path());
  EXPECT_EQ(raw.count("SELECT count(*) FROM evaluations"), 4);
  EXPECT_EQ(raw.count("SELECT count(*) FROM configs"), 2);
  EXPECT_EQ(raw.count("SELECT count(*) FROM shapes"), 2);
  EXPECT_EQ(raw.count("SELECT count(*) FROM families"), 2);
  EXPECT_EQ(raw.count("SELECT count(*) FROM devices"), 1);
  EXPECT_EQ(raw.count("SELECT count(*) FROM kernels"), 2);
  EXPECT_EQ(raw.count("SELECT key = 'BLOCK_M=64,MMA=wmma' FROM configs LIMIT 1"), 1);
  // The schema itself refuses duplicates, whoever writes.
  EXPECT_THROW(raw.exec("INSERT INTO devices (name, cc, sm_count, driver) "
                        "SELECT name, cc, sm_count, driver FROM devices"),
               std::runtime_error);
}
