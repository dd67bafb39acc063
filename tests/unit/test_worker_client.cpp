// WorkerClient against tests/fakes/fake_worker.py, which misbehaves on request N in a chosen
// way. Every failure must become the right status, and the next request must succeed on a
// fresh worker (whose count starts again at 1, so recovery tests use N = 2).
//
// Timeouts that are not under test are generous: the hello is subject to the same limit, and
// Python takes most of a second to start on a loaded machine.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "eval/client/worker_client.hpp"

using namespace kf;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> fake(const std::string& mode, int nth = 1) {
  return {"python3", "-S", KFORGE_TEST_DIR "/fakes/fake_worker.py", mode, std::to_string(nth)};
}

EvalRequest request(int64_t id, int64_t block_m = 64) {
  EvalRequest r;
  r.id = id;
  r.spec_path = "gemm.json";
  r.config = {{"BLOCK_M", block_m}};
  r.shape = {{"M", int64_t{128}}};
  r.cubin_path = "a.cubin";
  r.ref_cubin_path = "ref.cubin";
  return r;
}

TimeManyRequest time_many_request(int64_t id) {
  TimeManyRequest r;
  r.id = id;
  r.items = {request(100, 32), request(101, 128)};
  r.rounds = 2;
  return r;
}

void expect_ok(const EvalResult& r, int64_t id) {
  EXPECT_EQ(r.status, Status::Ok) << r.error;
  EXPECT_EQ(r.id, id);
  EXPECT_TRUE(r.error.empty()) << r.error;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Sends our own stderr (fd 2, which the workers' stderr is copied to) to a file for a while.
class StderrCapture {
 public:
  StderrCapture() : file_(std::tmpfile()), saved_(::dup(2)) {
    std::fflush(stderr);
    ::dup2(::fileno(file_), 2);
  }
  ~StderrCapture() { restore(); }
  std::string finish() {
    restore();
    std::string text;
    std::rewind(file_);
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, file_)) > 0;) text.append(buf, n);
    return text;
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
    saved_ = -1;
  }
  std::FILE* file_;
  int saved_;
};

// True once no live process has this pid (gone, or a zombie nobody has reaped yet).
bool process_gone(pid_t pid) {
  for (int i = 0; i < 100; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return true;
    auto close_paren = line.rfind(')');
    if (close_paren != std::string::npos && line.substr(close_paren + 2, 1) == "Z") return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

}  // namespace

TEST(WorkerClient, AnswersAndReportsDevice) {
  WorkerClient client(fake("ok"), 5);
  DeviceLimits d = client.device();
  EXPECT_EQ(d.name, "Fake GPU");
  EXPECT_EQ(d.cc(), 90);
  EXPECT_EQ(d.sm_count, 132);
  EXPECT_EQ(d.smem_optin, 232448);
  for (int64_t id = 1; id <= 3; ++id) {
    EvalResult r = client.evaluate(request(id, 16 * id));
    expect_ok(r, id);
    ASSERT_TRUE(r.timing);
    EXPECT_EQ(r.timing->median_us, 16.0 * static_cast<double>(id));  // the request got through
    EXPECT_EQ(r.gate_shapes, 2);
  }
  EXPECT_EQ(client.restarts(), 0);
}

// The stand-in claims the timing method `kforge worker` uses now (its TIMING_METHOD): the campaign, refresh and
// sanitize tests take its results as current, which they are only while the two agree.
TEST(WorkerClient, FakeWorkerTimesWithTheWorkersMethod) {
  WorkerClient client(fake("ok"), 5);
  const EvalResult r = client.evaluate(request(1));
  expect_ok(r, 1);
  ASSERT_TRUE(r.timing);
  EXPECT_EQ(r.timing->method, kTimingMethod)
      << "set TIMING_METHOD in tests/fakes/fake_worker.py to kTimingMethod (src/core/vocabulary.hpp)";
}

TEST(WorkerClient, EvaluateStartsTheWorkerByItself) {
  WorkerClient client(fake("ok"), 5);
  expect_ok(client.evaluate(request(1)), 1);
  EXPECT_EQ(client.device().sm_count, 132);
  EXPECT_EQ(client.restarts(), 0);
}

TEST(WorkerClient, SegfaultIsRuntimeFaultAndRecovers) {
  WorkerClient client(fake("segv", 2), 5);
  expect_ok(client.evaluate(request(1)), 1);
  EvalResult r = client.evaluate(request(2));
  EXPECT_EQ(r.status, Status::RuntimeFault);
  EXPECT_EQ(r.id, 2);
  EXPECT_TRUE(contains(r.error, "worker died: signal 11")) << r.error;
  EXPECT_TRUE(contains(r.error, "segfault on request 2")) << r.error;  // its last stderr line
  EXPECT_EQ(r.error.find('\n'), std::string::npos);
  EXPECT_EQ(client.restarts(), 0);  // the fresh worker starts with the next request
  expect_ok(client.evaluate(request(3)), 3);
  EXPECT_EQ(client.restarts(), 1);
  EXPECT_EQ(client.evaluate(request(4)).status, Status::RuntimeFault);  // its own request 2
  expect_ok(client.evaluate(request(5)), 5);
  EXPECT_EQ(client.restarts(), 2);
}

TEST(WorkerClient, ExitCodeIsReported) {
  WorkerClient client(fake("exit3"), 5);
  EvalResult r = client.evaluate(request(1));
  EXPECT_EQ(r.status, Status::RuntimeFault);
  EXPECT_TRUE(contains(r.error, "worker died: exit code 3; stderr: fake worker: giving up")) << r.error;
  EvalResult again = client.evaluate(request(2));
  EXPECT_EQ(again.status, Status::RuntimeFault);  // N=1 again on the fresh worker
  EXPECT_EQ(client.restarts(), 1);
}

TEST(WorkerClient, AbortIsRuntimeFault) {
  WorkerClient client(fake("abort", 2), 5);
  expect_ok(client.evaluate(request(1)), 1);
  EvalResult r = client.evaluate(request(2));
  EXPECT_EQ(r.status, Status::RuntimeFault);
  EXPECT_TRUE(contains(r.error, "signal 6")) << r.error;
  expect_ok(client.evaluate(request(3)), 3);
  EXPECT_EQ(client.restarts(), 1);
}

TEST(WorkerClient, HangIsTimeoutAndRecovers) {
  WorkerClient client(fake("hang", 2), 2);
  expect_ok(client.evaluate(request(1)), 1);
  auto t0 = std::chrono::steady_clock::now();
  EvalResult r = client.evaluate(request(2));
  double took = seconds_since(t0);
  EXPECT_EQ(r.status, Status::Timeout);
  EXPECT_EQ(r.id, 2);
  EXPECT_EQ(r.error, "no answer after 2 s");
  EXPECT_GE(took, 1.99);
  EXPECT_LT(took, 3.5);
  expect_ok(client.evaluate(request(3)), 3);
  EXPECT_EQ(client.restarts(), 1);
}

TEST(WorkerClient, SlowAnswerWithinTimeoutIsAccepted) {
  WorkerClient client(fake("slow"), 3);
  expect_ok(client.evaluate(request(1)), 1);
  EXPECT_EQ(client.restarts(), 0);
}

TEST(WorkerClient, TimeoutKillsTheWholeProcessGroup) {
  WorkerClient client(fake("hang_child"), 2);
  StderrCapture capture;
  EvalResult r = client.evaluate(request(1));
  std::string err = capture.finish();
  EXPECT_EQ(r.status, Status::Timeout);
  auto at = err.find("child pid ");
  ASSERT_NE(at, std::string::npos) << err;
  pid_t grandchild = static_cast<pid_t>(std::stol(err.substr(at + 10)));
  EXPECT_TRUE(process_gone(grandchild)) << "grandchild " << grandchild << " survived";
}

TEST(WorkerClient, GarbageIsProtocolFault) {
  WorkerClient client(fake("garbage", 2), 5);
  expect_ok(client.evaluate(request(1)), 1);
  EvalResult r = client.evaluate(request(2));
  EXPECT_EQ(r.status, Status::RuntimeFault);
  EXPECT_EQ(r.error, "protocol: reply is not JSON: this is not json");
  expect_ok(client.evaluate(request(3)), 3);
  EXPECT_EQ(client.restarts(), 1);
}

// A kernel that prints (device printf goes to the worker's stdout) must not break the
// protocol: the reply comes on its own descriptor and the text ends up on our stderr.
TEST(WorkerClient, StdoutTextIsNotTakenForAReply) {
  StderrCapture capture;
  {
    WorkerClient client(fake("stdout_noise", 1), 5);
    expect_ok(client.evaluate(request(1)), 1);
    expect_ok(client.evaluate(request(2)), 2);
    EXPECT_EQ(client.restarts(), 0);
  }  // the worker has exited and its last output is drained
  EXPECT_TRUE(contains(capture.finish(), "device printf: block 0 thread 0"));
}

TEST(WorkerClient, WrongIdIsProtocolFault) {
  WorkerClient client(fake("wrong_id", 2), 5);
  expect_ok(client.evaluate(request(6)), 6);
  EvalResult r = client.evaluate(request(7));
  EXPECT_EQ(r.status, Status::RuntimeFault);
  EXPECT_EQ(r.id, 7);
  EXPECT_EQ(r.error, "protocol: reply for id 8, expected 7");
  expect_ok(client.evaluate(request(8)), 8);
  EXPECT_EQ(client.restarts(), 1);
}

TEST(WorkerClient, WrongTypeIsProtocolFault) {
  WorkerClient client(fake("wrong_type"), 5);
  EvalResult r = client.evaluate(request(1));
  EXPECT_EQ(r.status, Status::RuntimeFault);
  EXPECT_EQ(r.error, "protocol: expected a \"result\" reply, got type \"times\"");
}

TEST(WorkerClient, MalformedResultIsProtocolFault) {
  WorkerClient client(fake("bad_result", 2), 5);
  expect_ok(client.evaluate(request(1)), 1);
  EvalResult r = client.evaluate(request(2));
  EXPECT_EQ(r.status, Status::RuntimeFault);
  EXPECT_EQ(r.error, "protocol: missing field 'status'");
  expect_ok(client.evaluate(request(3)), 3);
  EXPECT_EQ(client.restarts(), 1);
}

TEST(WorkerClient, StickyErrorRestartsTheWorker) {
  WorkerClient client(fake("sticky", 2), 5);
  expect_ok(client.evaluate(request(1)), 1);
  EvalResult r = client.evaluate(request(2));
  EXPECT_EQ(r.status, Status::RuntimeFault);
  EXPECT_EQ(r.error, "CUDA error: an illegal memory access was encountered");  // the worker's own
  // The next request must not go to the retiring worker (it would be blamed for its exit).
  expect_ok(client.evaluate(request(3)), 3);
  EXPECT_EQ(client.restarts(), 1);
}

TEST(WorkerClient, HelloErrorThrowsFromDevice) {
  WorkerClient client(fake("hello_error"), 5);
  try {
    client.device();
    FAIL() << "device() did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "no CUDA device available");
  }
  EvalResult r = client.evaluate(request(1));  // never throws
  EXPECT_EQ(r.status, Status::RuntimeFault);
  EXPECT_EQ(r.error, "worker failed to start: no CUDA device available");
}

TEST(WorkerClient, ExitBeforeHello) {
  WorkerClient client(fake("no_hello"), 5);
  try {
    client.device();
    FAIL() << "device() did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "worker exited before hello: exit code 2; stderr: fake worker: cannot start");
  }
}

TEST(WorkerClient, SilentWorkerTimesOutAtHello) {
  WorkerClient client(fake("silent"), 1);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_THROW(client.device(), std::runtime_error);
  EXPECT_LT(seconds_since(t0), 2.5);
  EvalResult r = client.evaluate(request(1));
  EXPECT_EQ(r.status, Status::RuntimeFault);
  EXPECT_EQ(r.error, "worker failed to start: worker sent no hello after 1 s");
}

TEST(WorkerClient, MissingExecutable) {
  WorkerClient client({"/nonexistent/kforge", "worker"}, 5);
  try {
    client.device();
    FAIL() << "device() did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_TRUE(contains(e.what(), "cannot run '/nonexistent/kforge'")) << e.what();
  }
  EXPECT_EQ(client.evaluate(request(1)).status, Status::RuntimeFault);
}

TEST(WorkerClient, WritingToADeadWorkerDoesNotKillUs) {
  // The worker exits right after hello; a request too large for the socket buffer makes our
  // write fail with EPIPE (SIGPIPE would end this test process).
  WorkerClient client(fake("exit_after_hello"), 5);
  EvalRequest big = request(1);
  big.spec_path = std::string(4 << 20, 'x');
  EvalResult r = client.evaluate(big);
  EXPECT_EQ(r.status, Status::RuntimeFault);
  EXPECT_TRUE(contains(r.error, "worker died: exit code 0")) << r.error;
}

TEST(WorkerClient, WorkerThatDiedWhileIdleIsReplacedFirst) {
  WorkerClient client(fake("exit_after_hello"), 5);
  client.device();
  std::this_thread::sleep_for(300ms);  // it has exited by now, before any request
  EvalResult r = client.evaluate(request(1));
  EXPECT_EQ(client.restarts(), 1);  // replaced instead of blamed...
  EXPECT_EQ(r.status, Status::RuntimeFault);  // ...though the replacement exits too
}

TEST(WorkerClient, StderrIsPassedThroughWithoutBlocking) {
  // 256 KiB of stderr is more than a pipe holds: the worker would block if we did not read it.
  WorkerClient client(fake("chatty"), 5);
  StderrCapture capture;
  EvalResult r = client.evaluate(request(1));
  std::string err = capture.finish();
  expect_ok(r, 1);
  EXPECT_TRUE(contains(err, "chatty line 0000 ")) << err.substr(0, 200);
  EXPECT_TRUE(contains(err, "chatty line 4095 "));
}

TEST(WorkerClient, TimeManyAnswers) {
  WorkerClient client(fake("ok"), 5);
  TimeManyResult res = client.time_many(time_many_request(9));
  EXPECT_EQ(res.id, 9);
  ASSERT_EQ(res.items.size(), 2u);
  expect_ok(res.items[0], 100);
  expect_ok(res.items[1], 101);
  ASSERT_TRUE(res.items[1].timing);
  EXPECT_EQ(res.items[1].timing->median_us, 128.0);
}

TEST(WorkerClient, TimeManyCrashFailsEveryItemAndRecovers) {
  WorkerClient client(fake("segv", 2), 5);
  expect_ok(client.evaluate(request(1)), 1);
  TimeManyResult res = client.time_many(time_many_request(9));
  EXPECT_EQ(res.id, 9);
  ASSERT_EQ(res.items.size(), 2u);
  for (const auto& item : res.items) {
    EXPECT_EQ(item.status, Status::RuntimeFault);
    EXPECT_TRUE(contains(item.error, "signal 11")) << item.error;
  }
  EXPECT_EQ(res.items[1].id, 101);
  expect_ok(client.evaluate(request(2)), 2);
  EXPECT_EQ(client.restarts(), 1);
}

TEST(WorkerClient, TimeManyHangIsTimeout) {
  WorkerClient client(fake("hang"), 1.5);
  client.device();
  auto t0 = std::chrono::steady_clock::now();
  TimeManyResult res = client.time_many(time_many_request(9));
  EXPECT_GE(seconds_since(t0), 2.99);  // 2 items: twice the per-request limit
  ASSERT_EQ(res.items.size(), 2u);
  EXPECT_EQ(res.items[0].status, Status::Timeout);
  EXPECT_EQ(res.items[0].error, "no answer after 3 s");
  EXPECT_EQ(res.items[1].status, Status::Timeout);
}

TEST(WorkerClient, TimeManyWrongTypeIsProtocolFault) {
  WorkerClient client(fake("wrong_type"), 5);
  TimeManyResult res = client.time_many(time_many_request(9));
  ASSERT_EQ(res.items.size(), 2u);
  EXPECT_EQ(res.items[0].status, Status::RuntimeFault);
  EXPECT_EQ(res.items[0].error, "protocol: expected a \"times\" reply, got type \"result\"");
}

TEST(WorkerClient, DestructorReapsEveryWorker) {
  auto t0 = std::chrono::steady_clock::now();
  {
    WorkerClient a(fake("ok"), 5);
    expect_ok(a.evaluate(request(1)), 1);
    WorkerClient b(fake("segv"), 5);
    b.evaluate(request(1));
    b.evaluate(request(2));
  }
  EXPECT_LT(seconds_since(t0), 5.0);
  int status = 0;
  EXPECT_EQ(::waitpid(-1, &status, WNOHANG), -1);  // no child left, not even a zombie
  EXPECT_EQ(errno, ECHILD);
}

TEST(WorkerClient, RejectsBadArguments) {
  EXPECT_THROW(WorkerClient({}, 5), std::invalid_argument);
  EXPECT_THROW(WorkerClient(fake("ok"), 0), std::invalid_argument);
}
