// The worker's protocol descriptor: text printed on stdout (a kernel's device printf) must
// not reach the channel the orchestrator parses.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "eval/worker/protocol_channel.hpp"
#include "eval/worker/request_loop.hpp"

using namespace kf;

namespace {

std::string read_all(int fd) {
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  return text;
}

struct ChildOutput {
  std::string stdout_text, stderr_text;
  int status = -1;
};

// Runs body in a child whose stdout and stderr are pipes; returns what each received.
template <class F>
ChildOutput run_child(F&& body) {
  int out[2], err[2];
  EXPECT_EQ(::pipe(out), 0);
  EXPECT_EQ(::pipe(err), 0);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::close(out[0]);
    ::close(err[0]);
    ::close(out[1]);
    ::close(err[1]);
    body();
    std::fflush(nullptr);
    ::_exit(0);
  }
  ::close(out[1]);
  ::close(err[1]);
  ChildOutput r;
  r.stdout_text = read_all(out[0]);  // the child exits before we read stderr, pipes are large enough
  r.stderr_text = read_all(err[0]);
  ::close(out[0]);
  ::close(err[0]);
  ::waitpid(pid, &r.status, 0);
  return r;
}

}  // namespace

TEST(ProtocolChannel, StdoutGoesToStderrWhenRunByHand) {
  const ChildOutput r = run_child([] {
    ::unsetenv("KFORGE_PROTOCOL_FD");
    FdOStream proto(take_protocol_channel());
    std::printf("device printf: hello from block 0\n");  // what the CUDA runtime does for a kernel
    std::fflush(stdout);
    send_line(proto, {{"type", "hello"}});
  });
  EXPECT_EQ(r.stdout_text, "{\"type\":\"hello\"}\n");
  EXPECT_NE(r.stderr_text.find("device printf: hello from block 0"), std::string::npos) << r.stderr_text;
}

TEST(ProtocolChannel, NamedDescriptorCarriesTheReplies) {
  int proto[2];
  ASSERT_EQ(::pipe(proto), 0);
  const ChildOutput r = run_child([&] {
    ::close(proto[0]);
    ::setenv("KFORGE_PROTOCOL_FD", std::to_string(proto[1]).c_str(), 1);
    FdOStream out(take_protocol_channel());
    std::printf("noise\n");
    std::fflush(stdout);
    send_line(out, {{"type", "hello"}});
  });
  ::close(proto[1]);
  EXPECT_EQ(read_all(proto[0]), "{\"type\":\"hello\"}\n");
  ::close(proto[0]);
  EXPECT_EQ(r.stdout_text, "noise\n");
}

TEST(ProtocolChannel, BadDescriptorIsAOneLineError) {
  ::setenv("KFORGE_PROTOCOL_FD", "987", 1);
  try {
    take_protocol_channel();
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "KFORGE_PROTOCOL_FD=987: descriptor is not open");
  }
  ::setenv("KFORGE_PROTOCOL_FD", "1", 1);
  EXPECT_THROW(take_protocol_channel(), std::runtime_error);
  ::unsetenv("KFORGE_PROTOCOL_FD");
}
