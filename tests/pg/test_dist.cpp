// Distributed campaigns against a real PostgreSQL (the test cluster): a coordinator and agents as
// separate kforge processes, the agents' GPUs played by tests/fakes/fake_worker.py. Every valid
// config is evaluated to completion exactly once: with two agents, when one is killed with
// SIGKILL mid-campaign, and with two coordinators on one database. A connection that the server
// drops is re-opened; one that cannot be re-opened ends the agent with one line.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "cli_run.hpp"
#include "family/family.hpp"
#include "pg_test.hpp"
#include "store/sql.hpp"
#include "store/store.hpp"
#include "test_dir.hpp"

namespace fs = std::filesystem;
using namespace kf;

namespace {

const std::string kShapeA = "N=4096,dtype=f16";
const std::string kShapeB = "N=1024,dtype=f32";

// A kforge process in the background; its output goes to files.
struct Proc {
  pid_t pid = -1;
  fs::path out, err;

  Proc(const std::vector<std::string>& args, const fs::path& dir, const std::string& name,
       const std::map<std::string, std::string>& env) {
    out = dir / (name + ".out");
    err = dir / (name + ".err");
    pid = ::fork();
    if (pid == 0) {
      for (const auto& [k, v] : env) ::setenv(k.c_str(), v.c_str(), 1);
      ::setpgid(0, 0);  // its fake workers die with it on kill(-pid)
      std::freopen(out.c_str(), "w", stdout);
      std::freopen(err.c_str(), "w", stderr);
      std::vector<char*> argv;
      const std::string bin = kforge_binary();
      argv.push_back(const_cast<char*>(bin.c_str()));
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(bin.c_str(), argv.data());
      ::_exit(127);
    }
  }
  // Exit code (128 + signal when killed), or -1 if it is still running after timeout_s (then killed).
  int wait(double timeout_s) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      if (std::chrono::steady_clock::now() > deadline) {
        kill9();
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  void kill9() {
    if (pid <= 0) return;
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    pid = -1;
  }
  ~Proc() { kill9(); }
  std::string stderr_text() const { return run_slurp(err); }
  static std::string run_slurp(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

struct Distributed : ::testing::Test {
  fs::path dir;
  std::string url;
  Family family;

  void SetUp() override {
    KF_REQUIRE_POSTGRES();
    dir = fresh_test_dir("kforge_dist");
    url = pgtest::fresh_database();
    family = load_family(fs::path(KFORGE_TEST_DIR) / "families/toy/toy.json");
  }
  void TearDown() override {
    if (!dir.empty()) fs::remove_all(dir);
  }

  std::vector<std::string> global() const {
    return {"--db", url, "--spec-dir", std::string(KFORGE_TEST_DIR) + "/families/toy", "--cache-dir",
            (dir / "cache").string(), "-q"};
  }
  std::map<std::string, std::string> env(double eval_s) const {
    return {{"KFORGE_WORKER", "python3 -S " + std::string(KFORGE_TEST_DIR) + "/fakes/fake_worker.py ok 1"},
            {"KFORGE_FAKE_EVAL_S", std::to_string(eval_s)}};
  }
  Proc coordinator(const std::string& shape, const std::string& name = "coordinator", double eval_s = 0.1,
                   int agents = 2) {
    auto args = global();
    for (const char* a : {"search", "--family", "toy", "--strategy", "exhaustive", "--distributed", "--shape"}) args.push_back(a);
    args.push_back(shape);
    args.push_back("--agents");
    args.push_back(std::to_string(agents));
    return Proc(args, dir, name, env(eval_s));
  }
  Proc agent(const std::string& name, double eval_s = 0.1, const std::vector<std::string>& extra = {}) {
    auto args = global();
    // One GPU each, standing for a node (the stand-in worker answers for any device number).
    for (const char* a : {"agent", "--gpus", "0", "--compile-jobs", "1", "--lease", "2s", "--wait", "60s"}) args.push_back(a);
    args.insert(args.end(), extra.begin(), extra.end());
    return Proc(args, dir, name, env(eval_s));
  }
  size_t valid_configs(const std::string& shape) const {
    return make_space(family, parse_shape(family, shape), DeviceLimits::for_arch("sm_90")).enumerate_valid().size();
  }
  // Completed (not interrupted) evaluations per config key of one shape.
  std::map<std::string, int> completed(Store& s, const std::string& shape) const {
    std::map<std::string, int> n;
    for (const auto& e : s.evaluations("toy", parse_shape(family, shape)))
      if (e.status != Status::Interrupted) ++n[to_string(e.config)];
    return n;
  }
  // Waits until the store holds at least n completed evaluations (or timeout_s passes).
  void wait_for_evaluations(size_t n, double timeout_s) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
      try {
        if (Store(url, Store::Access::ReadOnly).evaluations("toy").size() >= n) return;
      } catch (const StoreError&) {  // the coordinator has not created the schema yet
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
};

void expect_each_config_once(const std::map<std::string, int>& done, size_t valid) {
  EXPECT_EQ(done.size(), valid);
  for (const auto& [key, n] : done) EXPECT_EQ(n, 1) << key << " completed " << n << " times";
}

}  // namespace

TEST_F(Distributed, TwoAgentsShareTheWorkAndEachConfigRunsOnce) {
  Proc c = coordinator(kShapeA);
  Proc a = agent("a"), b = agent("b");
  ASSERT_EQ(c.wait(120), 0) << c.stderr_text();
  ASSERT_EQ(a.wait(60), 0) << a.stderr_text();
  ASSERT_EQ(b.wait(60), 0) << b.stderr_text();
  Store s(url);
  const auto campaigns = s.campaigns();
  ASSERT_EQ(campaigns.size(), 1u);
  EXPECT_EQ(campaigns[0].status, "done");
  expect_each_config_once(completed(s, kShapeA), valid_configs(kShapeA));
  // Both agents evaluated some of them (each says how many when it exits).
  for (Proc* p : {&a, &b}) {
    const std::string out = Proc::run_slurp(p->out);
    EXPECT_EQ(out.find(" 0 evaluation(s) recorded"), std::string::npos) << out;
  }
  // Results carry the device that measured them: the stand-in's.
  for (const auto& e : s.evaluations("toy")) EXPECT_EQ(e.device.name, "Fake GPU");
}

TEST_F(Distributed, KilledAgentLosesNothingAndDuplicatesNothing) {
  Proc c = coordinator(kShapeA, "coordinator", 0.4, 1);
  Proc victim = agent("victim", 0.4);
  wait_for_evaluations(2, 60);
  Proc survivor = agent("survivor", 0.4);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  victim.kill9();  // mid-campaign: it holds leased and dispatched items
  ASSERT_EQ(c.wait(120), 0) << c.stderr_text();
  ASSERT_EQ(survivor.wait(60), 0) << survivor.stderr_text();
  Store s(url);
  EXPECT_EQ(s.campaigns().at(0).status, "done");
  // Every config completed exactly once: the victim's open items were re-claimed after their
  // lease expired, its dispatched attempts closed as interrupted.
  expect_each_config_once(completed(s, kShapeA), valid_configs(kShapeA));
}

TEST_F(Distributed, TwoCoordinatorsOnOneDatabaseDoNotInterfere) {
  Proc c1 = coordinator(kShapeA, "c1");
  Proc c2 = coordinator(kShapeB, "c2");
  Proc a = agent("a"), b = agent("b");
  ASSERT_EQ(c1.wait(120), 0) << c1.stderr_text();
  ASSERT_EQ(c2.wait(120), 0) << c2.stderr_text();
  ASSERT_EQ(a.wait(60), 0) << a.stderr_text();
  ASSERT_EQ(b.wait(60), 0) << b.stderr_text();
  Store s(url);
  const auto campaigns = s.campaigns();
  ASSERT_EQ(campaigns.size(), 2u);
  for (const auto& camp : campaigns) {
    EXPECT_EQ(camp.status, "done");
    ASSERT_EQ(camp.shapes.size(), 1u);
    // Each campaign's evaluations are of its own shape only, each config once.
    for (const auto& e : s.evaluations("toy", std::nullopt, std::nullopt, camp.id)) EXPECT_EQ(e.shape, camp.shapes[0]);
    expect_each_config_once(completed(s, to_string(camp.shapes[0])), valid_configs(to_string(camp.shapes[0])));
  }
}

TEST_F(Distributed, LostConnectionIsRetriedThenFailsWithOneLine) {
  auto e = env(0.1);
  e["KFORGE_DB_RETRY_S"] = "3";
  auto args = global();
  for (const char* a : {"agent", "--gpus", "0", "--compile-jobs", "1", "--wait", "60s", "--lease", "1s"}) args.push_back(a);
  Proc a(args, dir, "agent", e);
  const std::string db = url.substr(url.rfind('/') + 1);
  auto admin = sql::open_postgres(url.substr(0, url.rfind('/') + 1) + "postgres", sql::Access::ReadWrite);
  const auto drop_connections = [&] {
    admin->exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + db + "'");
  };
  std::this_thread::sleep_for(std::chrono::seconds(3));  // registered, idle, heartbeating
  drop_connections();  // the server drops it: re-opened at the next statement
  std::this_thread::sleep_for(std::chrono::seconds(2));
  ASSERT_EQ(::waitpid(a.pid, nullptr, WNOHANG), 0) << "the agent did not survive a dropped connection: "
                                                   << a.stderr_text();
  EXPECT_NE(a.stderr_text().find("lost the connection to the database"), std::string::npos) << a.stderr_text();
  admin->exec("ALTER DATABASE " + db + " ALLOW_CONNECTIONS false");
  drop_connections();
  const int rc = a.wait(30);
  admin->exec("ALTER DATABASE " + db + " ALLOW_CONNECTIONS true");
  EXPECT_EQ(rc, 1) << a.stderr_text();
  const std::string err = a.stderr_text();
  const std::string last = err.substr(err.rfind("kforge: ") == std::string::npos ? 0 : err.rfind("kforge: "));
  EXPECT_NE(last.find("could not reconnect within 3 s"), std::string::npos) << err;
  EXPECT_EQ(last.find('\n'), last.size() - 1) << "not one line: " << last;
}

TEST_F(Distributed, DistributedSearchNeedsPostgres) {
  const auto r = run_kforge({"--db", (dir / "r.db").string(), "--spec-dir", std::string(KFORGE_TEST_DIR) + "/families/toy",
                             "search", "--family", "toy", "--distributed"},
                            dir);
  EXPECT_EQ(r.rc, 2);
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find("--distributed needs a shared PostgreSQL database"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "r.db"));
}
