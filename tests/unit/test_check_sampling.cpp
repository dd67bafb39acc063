// `kforge check --sample N` draws its sample without listing the space: on the test family
// `wide` (1.2e12 configs) it finishes in seconds and in bounded memory, and it prints its
// progress line. Runs the real binary (NVRTC compiles, no GPU) and measures it with wait4.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test_dir.hpp"

namespace {

struct ProcessRun {
  int exit_code = -1;
  double wall_s = 0;
  long max_rss_kb = 0;
  std::string err;
};

ProcessRun run_kforge(const std::vector<std::string>& args, const std::filesystem::path& dir) {
  const auto err_path = dir / "stderr.txt";
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDERR_FILENO);
    const int null_fd = ::open("/dev/null", O_WRONLY);
    dup2(null_fd, STDOUT_FILENO);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(KFORGE_BINARY));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(KFORGE_BINARY, argv.data());
    _exit(127);
  }
  ProcessRun r;
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.max_rss_kb = usage.ru_maxrss;
  std::ifstream in(err_path);
  std::stringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  return r;
}

}  // namespace

TEST(CheckSampling, SamplesATrillionConfigSpaceQuicklyInBoundedMemory) {
  const auto dir = fresh_test_dir("kf_check_wide");
  const ProcessRun r = run_kforge({"--spec-dir", std::string(KFORGE_TEST_DIR) + "/families", "--cache-dir",
                            (dir / "cache").string(), "check", "--family", "wide", "--arch", "sm_90",
                            "--sample", "2", "--no-cache"},
                           dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LE(r.wall_s, 10.0) << r.err;
  EXPECT_LE(r.max_rss_kb, 500L * 1024) << "peak RSS " << r.max_rss_kb << " kB";
  // The progress line names what it checks and how far it got.
  EXPECT_NE(r.err.find("check wide sm_90"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("2/2 compiled"), std::string::npos) << r.err;
}
