// Shared by the store's tests (test_store*.cpp): temporary databases (SQLite files, or with
// KFORGE_STORE_TEST_PG fresh databases of the PostgreSQL test cluster), records to write, and a raw
// connection for what the Store's API does not expose. STORE_TEST cases run against both back ends.
#pragma once
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <thread>

#include "store/schema.hpp"
#include "store/sql.hpp"
#include "store/store.hpp"
#ifdef KFORGE_STORE_TEST_PG
#include "pg_test.hpp"
#endif

namespace fs = std::filesystem;
using kf::Config;
using kf::DeviceKey;
using kf::EvaluationRecord;
using kf::Shape;
using kf::Status;
using kf::Store;
using kf::StoreError;

#ifdef KFORGE_STORE_TEST_PG
// (one class for every file's cases: outside the anonymous namespace, which gtest would see as one per file)
struct StorePg : ::testing::Test {
  void SetUp() override { KF_REQUIRE_POSTGRES(); }
};
#define STORE_TEST(name) TEST_F(StorePg, name)
#else
#define STORE_TEST(name) TEST(Store, name)
#endif

namespace {

// A temporary folder for database files, or with PostgreSQL, databases of their own.
class TempDb {
 public:
  TempDb() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("kforge_store_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~TempDb() { fs::remove_all(dir_); }
#ifdef KFORGE_STORE_TEST_PG
  // Threads of one test share its databases: the first path() of a name creates it.
  fs::path path(const std::string& name = "results.db") {
    std::lock_guard lock(mu_);
    auto& url = urls_[name];
    if (url.empty()) url = kf::pgtest::fresh_database(name);
    return url;
  }
#else
  fs::path path(const std::string& name = "results.db") const { return dir_ / name; }
#endif

 private:
  fs::path dir_;
  std::map<std::string, std::string> urls_;
  std::mutex mu_;
};

const DeviceKey kH100{"NVIDIA H100 80GB HBM3", 90, 132, "580.65"};
const DeviceKey kA100{"NVIDIA A100-SXM4-80GB", 80, 108, "580.65"};
const Shape kShape{{"M", int64_t{4096}}, {"N", int64_t{4096}}, {"dtype", std::string("f16")}};
const Shape kSmall{{"M", int64_t{257}}, {"N", int64_t{130}}, {"dtype", std::string("f16")}};

inline Config config(int64_t block, const std::string& mma = "wmma") {
  return {{"BLOCK_M", block}, {"MMA", mma}};
}

inline kf::TimingStats timing(double median) {
  kf::TimingStats t;
  t.median_us = median;
  t.p10_us = median * 0.9;
  t.p90_us = median * 1.1;
  t.ci_lo_us = median * 0.99;
  t.ci_hi_us = median * 1.01;
  t.reps = 20;
  t.launches_per_rep = 50;
  t.plain_median_us = median + 3;
  return t;
}

inline EvaluationRecord ok_eval(const Config& c, double median, const DeviceKey& d = kH100,
                         const Shape& s = kShape) {
  EvaluationRecord e;
  e.family = "gemm";
  e.config = c;
  e.shape = s;
  e.device = d;
  e.status = Status::Ok;
  e.max_abs = 1e-3;
  e.rel_l2 = 2e-4;
  e.timing = timing(median);
  e.flops = 2.0 * 4096 * 4096 * 4096;
  e.bytes = 3.0 * 2 * 4096 * 4096;
  return e;
}

inline EvaluationRecord failed_eval(const Config& c, Status st, const DeviceKey& d = kH100) {
  EvaluationRecord e;
  e.family = "gemm";
  e.config = c;
  e.shape = kShape;
  e.device = d;
  e.status = st;
  e.error = "ptxas: too many resources requested";
  return e;
}

// A cuBLAS baseline of the gemm shape on the H100 (extra: {"algo": algo}).
inline kf::BaselineRecord cublas_baseline(double median_us, int algo) {
  kf::BaselineRecord b;
  b.family = "gemm";
  b.shape = kShape;
  b.device = kH100;
  b.backend = "cublas";
  b.median_us = median_us;
  b.extra = {{"algo", algo}};
  return b;
}

inline kf::CampaignRecord campaign_record() {
  kf::CampaignRecord c;
  c.family = "gemm";
  c.strategy = "evolutionary";
  c.seed = 42;
  c.shapes = {kShape, kSmall};
  c.budget = {{"evals", 200}, {"time_s", 600}};
  c.options = {{"arch", "sm_90"}, {"timing", {{"max_reps", 100}}}};
  c.status = "running";
  return c;
}

// A plain connection, for what the Store's API does not expose (counting rows, holding a
// write lock, planting foreign files).
#ifdef KFORGE_STORE_TEST_PG
class Raw {
 public:
  explicit Raw(const fs::path& p) : db_(kf::sql::open_postgres(p.string(), kf::sql::Access::ReadWrite)) {}
  void exec(const std::string& sql) {
    try {
      db_->exec(sql);
    } catch (const StoreError& e) {
      throw std::runtime_error(e.what());
    }
  }
  int64_t count(const std::string& sql) {
    kf::sql::Stmt q(*db_, sql);
    if (!q.step()) return -1;
    const std::string v = q.text(0);
    return v == "t" ? 1 : v == "f" ? 0 : q.int64(0);  // PostgreSQL's booleans
  }

 private:
  std::unique_ptr<kf::sql::Db> db_;
};
#else
class Raw {
 public:
  explicit Raw(const fs::path& p) {
    if (sqlite3_open(p.c_str(), &db_) != SQLITE_OK) throw std::runtime_error("open");
    sqlite3_busy_timeout(db_, 5000);
  }
  ~Raw() { sqlite3_close(db_); }
  void exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string m = err ? err : "?";
      sqlite3_free(err);
      throw std::runtime_error(m);
    }
  }
  int64_t count(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK)
      throw std::runtime_error(sqlite3_errmsg(db_));
    int64_t n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
    sqlite3_finalize(s);
    return n;
  }

 private:
  sqlite3* db_ = nullptr;
};
#endif

inline std::string read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << bytes;
}

// The StoreError message of opening p, or "" if it opened.
inline std::string open_error(const fs::path& p) {
  try {
    Store s(p);
  } catch (const StoreError& e) {
    return e.what();
  }
  return "";
}

}  // namespace
