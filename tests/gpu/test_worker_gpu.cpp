// The worker end to end, as the orchestrator sees it: a child process speaking JSON lines.
// Tests that need a GPU skip with the reason when there is none. The child is this very
// binary, started with KFORGE_TEST_AS_WORKER set (a sticky fault must not poison the tests'
// own CUDA context).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>

#include <nlohmann/json.hpp>

#include "compile/compiler.hpp"
#include "eval/protocol.hpp"
#include "eval/worker/worker.hpp"
#include "family/family.hpp"
#include "family/render.hpp"
#include "gpu/device.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using namespace kf;

namespace {

// Worker mode (KFORGE_TEST_AS_WORKER set): this binary serves the protocol instead of running
// tests. It must not start during static initialisation (other files' statics, such as the
// family loader's tables, may not exist yet), so it starts from a global test environment,
// inside main. gtest's own chatter goes to /dev/null; the protocol to a copy of the real stdout.
class WorkerModeEnvironment : public ::testing::Environment {
 public:
  WorkerModeEnvironment(int device, int out_fd) : device_(device), out_fd_(out_fd) {}
  void SetUp() override {
    std::ofstream out("/proc/self/fd/" + std::to_string(out_fd_));
    std::exit(run_worker(device_, std::cin, out));
  }

 private:
  int device_, out_fd_;
};

const bool kIsWorker = [] {
  const char* dev = std::getenv("KFORGE_TEST_AS_WORKER");
  if (!dev) return false;
  const int out_fd = dup(1);
  const int null_fd = open("/dev/null", O_WRONLY);
  dup2(null_fd, 1);
  close(null_fd);
  ::testing::AddGlobalTestEnvironment(new WorkerModeEnvironment(std::atoi(dev), out_fd));
  return true;
}();

struct WorkerRun {
  std::vector<json> lines;
  int exit_code = -1;
  std::string raw;
};

// Starts a worker, sends all requests, closes its input and collects every reply line.
WorkerRun run_worker_process(const std::vector<json>& requests, const std::map<std::string, std::string>& env = {},
                             const std::vector<std::string>& raw_lines = {}) {
  // The child's environment is built here: between fork and exec only async-signal-safe
  // calls are allowed (CUDA and NVRTC may have threads holding the allocator's lock).
  std::map<std::string, std::string> vars;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const size_t eq = kv.find('=');
    if (eq != std::string::npos) vars[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  vars["KFORGE_TEST_AS_WORKER"] = "0";
  for (const auto& [k, v] : env) vars[k] = v;
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : vars) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  char self[] = "/proc/self/exe";
  char* argv[] = {self, nullptr};

  int in_pipe[2], out_pipe[2];
  if (pipe(in_pipe) != 0 || pipe(out_pipe) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    close(in_pipe[0]);
    close(in_pipe[1]);
    close(out_pipe[0]);
    close(out_pipe[1]);
    execve(self, argv, envp.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  std::string input;
  for (const std::string& l : raw_lines) input += l + "\n";
  for (const json& r : requests) input += r.dump() + "\n";
  // Requests are small: they fit in the pipe before the worker answers anything.
  signal(SIGPIPE, SIG_IGN);
  for (size_t off = 0; off < input.size();) {
    const ssize_t n = write(in_pipe[1], input.data() + off, input.size() - off);
    if (n <= 0) break;  // the worker exited early (e.g. after a sticky fault)
    off += static_cast<size_t>(n);
  }
  close(in_pipe[1]);

  WorkerRun run;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(240);
  char buf[4096];
  for (;;) {
    pollfd p{out_pipe[0], POLLIN, 0};
    const int left = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
    if (left <= 0 || poll(&p, 1, left) <= 0) {
      kill(pid, SIGKILL);
      ADD_FAILURE() << "worker timed out; output so far:\n" << run.raw;
      break;
    }
    const ssize_t n = read(out_pipe[0], buf, sizeof buf);
    if (n <= 0) break;
    run.raw.append(buf, static_cast<size_t>(n));
  }
  close(out_pipe[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  size_t start = 0;
  for (size_t nl; (nl = run.raw.find('\n', start)) != std::string::npos; start = nl + 1)
    run.lines.push_back(json::parse(run.raw.substr(start, nl - start)));
  return run;
}

const fs::path kSpec = fs::path(KFORGE_TEST_DIR) / "families" / "vecadd" / "vecadd.json";

Shape shape_of(int64_t n, const std::string& dtype = "f32") { return Shape{{"N", n}, {"dtype", dtype}}; }

Config config_of(int64_t block, int64_t vec, const std::string& bug = "none", int64_t smem_kb = 0) {
  return Config{{"BLOCK", block}, {"VEC", vec}, {"BUG", bug}, {"SMEM_KB", smem_kb}};
}

// The device, the family and compiled kernels, shared by the tests of one process.
class WorkerGpu : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (auto why = gpu::device_unavailable(0)) {
      skip_reason_ = *why;
      return;
    }
    dev_ = gpu::open_device(0);
    family_ = std::make_unique<Family>(load_family(kSpec));
    // Shared between test processes (ctest runs them in parallel); entries are written atomically.
    cache_ = std::make_unique<CubinCache>(fs::temp_directory_path() /
                                          ("kforge-gpu-test-cubins-" + std::to_string(getuid())));
  }
  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
  }

  // Compiles (or finds) candidate and reference and returns the request for them.
  static EvalRequest request(int64_t id, const Config& c, const Shape& s, bool time = true) {
    const CompiledKernel cand = compile_variant(render_variant(*family_, c, s), dev_.arch(), cache_.get());
    const CompiledKernel ref = compile_variant(render_reference(*family_, s), dev_.arch(), cache_.get());
    EXPECT_TRUE(cand.ok) << cand.log;
    EXPECT_TRUE(ref.ok) << ref.log;
    EvalRequest r;
    r.id = id;
    r.spec_path = kSpec.string();
    r.config = c;
    r.shape = s;
    r.cubin_path = cand.cubin_path.string();
    r.ref_cubin_path = ref.cubin_path.string();
    r.seed = 42;
    r.time = time;
    r.timing.warmup_ms = 5;
    r.timing.max_ms = 300;
    r.timing.min_reps = 10;
    r.timing.max_reps = 60;
    r.timing.graph_ms = 1.0;
    return r;
  }

  static EvalResult result_line(const WorkerRun& run, size_t i) {
    EXPECT_GT(run.lines.size(), i) << run.raw;
    if (run.lines.size() <= i) return {};
    EXPECT_EQ(run.lines[i].value("type", ""), "result") << run.lines[i].dump();
    return eval_result_from_json(run.lines[i]);
  }

  // max_reps: 60 per measurement (see request()), times the rounds of a time_many.
  static void expect_sane_timing(const EvalResult& r, int max_reps = 60) {
    ASSERT_TRUE(r.timing) << to_json(r).dump();
    const TimingStats& t = *r.timing;
    EXPECT_GT(t.median_us, 0);
    EXPECT_LT(t.median_us, 10000);  // a 1M-element add takes microseconds
    EXPECT_LE(t.p10_us, t.median_us);
    EXPECT_LE(t.median_us, t.p90_us);
    EXPECT_LE(t.ci_lo_us, t.median_us);
    EXPECT_LE(t.median_us, t.ci_hi_us);
    EXPECT_GE(t.reps, 3);
    EXPECT_LE(t.reps, max_reps);
    EXPECT_GE(t.launches_per_rep, 1);
    EXPECT_GT(t.plain_median_us, 0);
  }

  static inline std::string skip_reason_;
  static inline DeviceLimits dev_;
  static inline std::unique_ptr<Family> family_;
  static inline std::unique_ptr<CubinCache> cache_;
};

}  // namespace

// Runs everywhere: hiding every device must give the reason and exit code 3.
TEST(WorkerNoDevice, HelloSaysWhyAndExits3) {
  const WorkerRun run = run_worker_process({}, {{"CUDA_VISIBLE_DEVICES", ""}});
  ASSERT_EQ(run.lines.size(), 1u) << run.raw;
  EXPECT_EQ(run.lines[0].value("type", ""), "hello");
  ASSERT_TRUE(run.lines[0].contains("error")) << run.raw;
  EXPECT_NE(run.lines[0]["error"].get<std::string>().find("no CUDA device"), std::string::npos) << run.raw;
  EXPECT_EQ(run.exit_code, 3);
}

TEST_F(WorkerGpu, HelloReportsTheDevice) {
  const WorkerRun run = run_worker_process({});
  ASSERT_GE(run.lines.size(), 1u);
  EXPECT_EQ(run.exit_code, 0) << run.raw;
  const json& hello = run.lines[0];
  EXPECT_EQ(hello.value("type", ""), "hello");
  ASSERT_TRUE(hello.contains("device")) << hello.dump();
  const DeviceLimits d = device_limits_from_json(hello["device"]);
  EXPECT_EQ(d.name, dev_.name);
  EXPECT_EQ(d.cc(), dev_.cc());
  EXPECT_GT(d.sm_count, 0);
  EXPECT_GT(d.l2_bytes, 0);
  EXPECT_GE(d.smem_optin, d.smem_per_block);
  EXPECT_FALSE(d.driver.empty());
  std::cout << "device: " << hello["device"].dump() << "\n";
}

TEST_F(WorkerGpu, CorrectVariantsPassWithSaneTiming) {
  const Shape s = shape_of(1 << 20);
  std::vector<json> reqs = {
      to_json(request(1, config_of(128, 1), s)),
      to_json(request(2, config_of(256, 4), s)),               // VEC=4: odd shapes not claimed
      to_json(request(3, config_of(64, 2, "none", 64), s)),    // 64 KiB dynamic smem: opt-in
      to_json(request(4, config_of(128, 1), shape_of(1 << 20, "f16"))),
      to_json(request(5, config_of(128, 2), shape_of(4096, "bf16"))),
  };
  EvalRequest cold = request(6, config_of(128, 1), s);
  cold.timing.cold_l2 = true;
  reqs.push_back(to_json(cold));
  const WorkerRun run = run_worker_process(reqs);
  EXPECT_EQ(run.exit_code, 0) << run.raw;
  ASSERT_EQ(run.lines.size(), 1 + reqs.size()) << run.raw;
  for (size_t i = 1; i < run.lines.size(); ++i) {
    const EvalResult r = result_line(run, i);
    SCOPED_TRACE(run.lines[i].dump());
    EXPECT_EQ(r.id, static_cast<int64_t>(i));
    EXPECT_EQ(r.status, Status::Ok) << r.error;
    EXPECT_TRUE(r.error.empty());
    EXPECT_EQ(r.max_abs, 0.0);  // same arithmetic as the reference
    expect_sane_timing(r);
    std::cout << "timing " << i << ": " << run.lines[i]["timing"].dump() << "\n";
  }
  // campaign + odd + one + large_inputs for VEC=1; VEC=2/4 skip the odd sizes.
  EXPECT_EQ(result_line(run, 1).gate_shapes, 4);
  EXPECT_EQ(result_line(run, 2).gate_shapes, 2);
  EXPECT_EQ(result_line(run, 3).gate_shapes, 2);
}

TEST_F(WorkerGpu, BrokenVariantsAreRejected) {
  const Shape s = shape_of(1 << 20);
  const std::vector<json> reqs = {
      to_json(request(1, config_of(128, 1, "wrong"), s)),
      to_json(request(2, config_of(128, 1, "unwritten"), s)),
      to_json(request(3, config_of(128, 1, "wrong"), shape_of(1 << 20, "f16"))),
      to_json(request(4, config_of(128, 1, "none", 512), s)),  // beyond any device's shared memory
      to_json(request(5, config_of(128, 1, "stateful"), s, false)),  // right once: passes the gate
      to_json(request(6, config_of(128, 1, "stateful"), s, true)),   // wrong on repetition
      to_json(request(7, config_of(128, 4), shape_of(1001), false)),  // N % VEC != 0
      to_json(request(8, config_of(128, 1), s)),  // the worker is still healthy
  };
  const WorkerRun run = run_worker_process(reqs);
  EXPECT_EQ(run.exit_code, 0) << run.raw;
  ASSERT_EQ(run.lines.size(), 1 + reqs.size()) << run.raw;

  EvalResult r = result_line(run, 1);
  EXPECT_EQ(r.status, Status::WrongResult) << r.error;
  EXPECT_NE(r.error.find("output C"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("max_abs"), std::string::npos) << r.error;
  EXPECT_NEAR(r.max_abs, 0.5, 1e-3);
  EXPECT_FALSE(r.timing);

  r = result_line(run, 2);
  EXPECT_EQ(r.status, Status::WrongResult) << r.error;
  EXPECT_NE(r.error.find("NaN"), std::string::npos) << r.error;

  r = result_line(run, 3);
  EXPECT_EQ(r.status, Status::WrongResult) << r.error;

  r = result_line(run, 4);
  EXPECT_EQ(r.status, Status::LaunchError) << r.error;
  EXPECT_EQ(r.error.find('\n'), std::string::npos);

  r = result_line(run, 5);
  EXPECT_EQ(r.status, Status::Ok) << r.error;

  r = result_line(run, 6);
  EXPECT_EQ(r.status, Status::WrongResult) << r.error;
  EXPECT_NE(r.error.find("after timing"), std::string::npos) << r.error;

  r = result_line(run, 7);
  EXPECT_EQ(r.status, Status::Invalid) << r.error;
  EXPECT_NE(r.error.find("N % VEC"), std::string::npos) << r.error;

  r = result_line(run, 8);
  EXPECT_EQ(r.status, Status::Ok) << r.error;
  for (size_t i = 1; i < run.lines.size(); ++i) std::cout << run.lines[i].dump() << "\n";
}

TEST_F(WorkerGpu, IllegalAddressIsARuntimeFaultAndTheWorkerExits) {
  const Shape s = shape_of(1 << 20);
  const std::vector<json> reqs = {
      to_json(request(1, config_of(128, 1), s, false)),
      to_json(request(2, config_of(128, 1, "oob"), s)),
      to_json(request(3, config_of(128, 1), s, false)),  // never answered
  };
  const WorkerRun run = run_worker_process(reqs);
  ASSERT_EQ(run.lines.size(), 3u) << run.raw;
  EXPECT_EQ(result_line(run, 1).status, Status::Ok);
  const EvalResult r = result_line(run, 2);
  EXPECT_EQ(r.id, 2);
  EXPECT_EQ(r.status, Status::RuntimeFault) << r.error;
  EXPECT_NE(r.error.find("cudaErrorIllegalAddress"), std::string::npos) << r.error;
  EXPECT_EQ(run.exit_code, 4);
  std::cout << run.lines[2].dump() << "\n";
}

TEST_F(WorkerGpu, ProtocolErrorsAreAnsweredAndSurvived) {
  const Shape s = shape_of(4096);
  json missing = to_json(request(9, config_of(128, 1), s, false));
  missing.erase("cubin_path");
  const WorkerRun run = run_worker_process({json{{"type", "frobnicate"}, {"id", 7}}, missing,
                                            to_json(request(10, config_of(128, 1), s, false))},
                                           {}, {"{not json", ""});
  EXPECT_EQ(run.exit_code, 0) << run.raw;
  ASSERT_EQ(run.lines.size(), 5u) << run.raw;  // hello + 4 answers; the blank line is skipped
  EvalResult r = result_line(run, 1);
  EXPECT_EQ(r.status, Status::RuntimeFault);
  EXPECT_EQ(r.error.rfind("protocol:", 0), 0u) << r.error;
  r = result_line(run, 2);
  EXPECT_EQ(r.id, 7);
  EXPECT_NE(r.error.find("frobnicate"), std::string::npos) << r.error;
  r = result_line(run, 3);
  EXPECT_EQ(r.id, 9);
  EXPECT_EQ(r.status, Status::RuntimeFault);
  EXPECT_NE(r.error.find("cubin_path"), std::string::npos) << r.error;
  r = result_line(run, 4);
  EXPECT_EQ(r.id, 10);
  EXPECT_EQ(r.status, Status::Ok) << r.error;
}

TEST_F(WorkerGpu, TimeManyInterleavesRounds) {
  const Shape s = shape_of(1 << 20);
  TimeManyRequest tm;
  tm.id = 77;
  tm.rounds = 3;
  tm.items = {request(1, config_of(128, 1), s), request(2, config_of(256, 2), s),
              request(3, config_of(128, 1, "wrong"), s)};
  json j = to_json(tm);
  const WorkerRun run = run_worker_process({j});
  EXPECT_EQ(run.exit_code, 0) << run.raw;
  ASSERT_EQ(run.lines.size(), 2u) << run.raw;
  EXPECT_EQ(run.lines[1].value("type", ""), "times");
  const TimeManyResult res = time_many_result_from_json(run.lines[1]);
  EXPECT_EQ(res.id, 77);
  ASSERT_EQ(res.items.size(), 3u);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(res.items[i].status, Status::Ok) << res.items[i].error;
    expect_sane_timing(res.items[i], 60 * tm.rounds);
  }
  EXPECT_EQ(res.items[2].status, Status::WrongResult);
  EXPECT_FALSE(res.items[2].timing);
  EXPECT_EQ(res.rounds, 3);
  EXPECT_EQ(res.stop, RoundStop::Fixed);
  ASSERT_EQ(res.round_us.size(), 3u);
  EXPECT_EQ(res.round_us[0].size(), 3u);
  EXPECT_TRUE(res.round_us[2].empty());
  std::cout << run.lines[1].dump() << "\n";
}

// With the rule on, the rounds come in batches and stop once it knows the answer; each item says how
// many rounds it was timed in.
TEST_F(WorkerGpu, TimeManyStopsWhenTheRuleKnowsTheAnswer) {
  const Shape s = shape_of(1 << 20);
  TimeManyRequest tm;
  tm.id = 78;
  tm.rounds = kMaxAutoRounds;
  tm.until_decided = true;
  tm.items = {request(1, config_of(128, 1), s), request(2, config_of(256, 2), s),
              request(3, config_of(128, 1, "wrong"), s)};
  const WorkerRun run = run_worker_process({to_json(tm)});
  EXPECT_EQ(run.exit_code, 0) << run.raw;
  ASSERT_EQ(run.lines.size(), 2u) << run.raw;
  const TimeManyResult res = time_many_result_from_json(run.lines[1]);
  EXPECT_GE(res.rounds, 5);
  EXPECT_LE(res.rounds, kMaxAutoRounds);
  EXPECT_TRUE(res.stop == RoundStop::Separated || res.stop == RoundStop::Tie || res.stop == RoundStop::MaxRounds)
      << to_string(res.stop);
  ASSERT_EQ(res.round_us.size(), 3u);
  for (int i = 0; i < 2; ++i) {
    expect_sane_timing(res.items[i], 60 * kMaxAutoRounds);
    EXPECT_GE(res.round_us[i].size(), 5u);
    EXPECT_LE(res.round_us[i].size(), static_cast<size_t>(res.rounds));
  }
  EXPECT_TRUE(res.round_us[2].empty());
  std::cout << "rounds " << res.rounds << ", stopped: " << to_string(res.stop) << "\n";
}
