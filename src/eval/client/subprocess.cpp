#include "eval/client/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace kf {

namespace {

constexpr size_t kTailLines = 8;                 // stderr lines kept for error messages
constexpr size_t kMaxLine = 64u << 20;           // a longer protocol "line" is returned as is
constexpr auto kStderrDrain = std::chrono::milliseconds(200);  // after exit, for the last words

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

// Milliseconds until deadline for poll(), rounded up so we never wake just before it.
int poll_ms(Subprocess::Clock::time_point deadline) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Subprocess::Clock::now()).count();
  if (left <= 0) return 0;
  return left > INT_MAX ? INT_MAX : static_cast<int>(left);
}

// Child side of the spawn, between fork and exec: only async-signal-safe calls here.
// The child's stdout joins its stderr (err_fd), and the protocol gets descriptor
// kProtocolFd of its own: whatever a kernel prints (device printf goes to stdout) can then
// never be mistaken for a reply.
[[noreturn]] void exec_child(char* const* argv, char* const* envp, int in_fd, int proto_fd, int err_fd,
                             int report_fd) {
  ::setpgid(0, 0);
  // Move every source above the targets first, so that no dup2 overwrites a source that a
  // later one still needs (possible when the parent had 0..3 closed). The copies are
  // close-on-exec; dup2 clears the flag on the targets.
  const int sources[4] = {in_fd, err_fd, err_fd, proto_fd};  // -> fd 0, 1, 2, kProtocolFd
  int high[4];
  for (int i = 0; i < 4; ++i) high[i] = ::fcntl(sources[i], F_DUPFD_CLOEXEC, 10);
  report_fd = ::fcntl(report_fd, F_DUPFD_CLOEXEC, 10);  // it might sit on kProtocolFd
  for (int target = 0; target < 4; ++target) ::dup2(high[target], target == 3 ? kProtocolFd : target);
  // An ignored signal stays ignored across exec; the worker should get default behaviour.
  ::signal(SIGPIPE, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execvpe(argv[0], argv, envp);
  int err = errno;
  [[maybe_unused]] auto n = ::write(report_fd, &err, sizeof err);
  ::_exit(127);
}

// Our environment plus the protocol descriptor's variable, built before fork (the child may
// not allocate).
std::vector<std::string> child_environment() {
  std::vector<std::string> env;
  const std::string key = std::string(kProtocolFdEnv) + "=";
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, key.c_str(), key.size()) != 0) env.emplace_back(*e);
  env.push_back(key + std::to_string(kProtocolFd));
  return env;
}

}  // namespace

Subprocess::Subprocess(const std::vector<std::string>& argv) {
  if (argv.empty()) throw std::runtime_error("empty worker command");
  std::vector<std::string> args = argv;  // execvp wants char*; keep the storage alive
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::vector<std::string> env = child_environment();
  std::vector<char*> cenv;
  for (auto& e : env) cenv.push_back(e.data());
  cenv.push_back(nullptr);

  // Every descriptor is close-on-exec, so a worker started from another thread at the same
  // time cannot inherit (and hold open) this worker's pipes.
  int in[2], out[2], err[2], report[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0)
    throw std::runtime_error(std::string("socketpair: ") + std::strerror(errno));
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0 || ::pipe2(report, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));

  pid_ = ::fork();
  if (pid_ == 0) exec_child(cargv.data(), cenv.data(), in[1], out[1], err[1], report[1]);
  int fork_errno = errno;
  ::close(in[1]);
  ::close(out[1]);
  ::close(err[1]);
  ::close(report[1]);
  in_fd_ = in[0];
  out_fd_ = out[0];
  err_fd_ = err[0];
  if (pid_ < 0) {
    ::close(report[0]);
    close_fd(in_fd_);
    close_fd(out_fd_);
    close_fd(err_fd_);
    throw std::runtime_error(std::string("fork: ") + std::strerror(fork_errno));
  }
  ::setpgid(pid_, pid_);  // also here, so the group exists before we might signal it

  // The report pipe closes at a successful exec; otherwise it carries exec's errno.
  int exec_errno = 0;
  ssize_t n;
  do n = ::read(report[0], &exec_errno, sizeof exec_errno);
  while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n == sizeof exec_errno) {
    kill_group();
    close_fd(in_fd_);
    close_fd(out_fd_);
    close_fd(err_fd_);
    throw std::runtime_error("cannot run '" + argv[0] + "': " + std::strerror(exec_errno));
  }
  set_nonblocking(in_fd_);
  set_nonblocking(out_fd_);
  set_nonblocking(err_fd_);
}

Subprocess::~Subprocess() {
  close_fd(in_fd_);
  kill_group();
  close_fd(out_fd_);
  close_fd(err_fd_);
}

bool Subprocess::pump(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd fds[2];
    nfds_t n = 0;
    if (fd >= 0) fds[n++] = {fd, events, 0};
    const nfds_t err_slot = n;
    if (err_fd_ >= 0) fds[n++] = {err_fd_, POLLIN, 0};
    int ms = poll_ms(deadline);
    int r = ::poll(n ? fds : nullptr, n, ms);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    }
    if (err_fd_ >= 0 && fds[err_slot].revents != 0 && read_stderr() == 0) close_fd(err_fd_);
    if (fd >= 0 && fds[0].revents != 0) return true;
    if (fd < 0 && err_fd_ < 0) return false;
    if (ms == 0) return false;
  }
}

ssize_t Subprocess::read_stderr() {
  char buf[65536];
  ssize_t n = ::read(err_fd_, buf, sizeof buf);
  if (n < 0) return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? -1 : 0;
  if (n == 0) return 0;
  // Pass through unchanged; our own stderr failing is no reason to disturb the worker.
  for (ssize_t done = 0; done < n;) {
    ssize_t w = ::write(STDERR_FILENO, buf + done, static_cast<size_t>(n - done));
    if (w <= 0) break;
    done += w;
  }
  for (ssize_t i = 0; i < n; ++i) {
    if (buf[i] != '\n') {
      err_partial_ += buf[i];
      continue;
    }
    if (!err_partial_.empty() && err_partial_.back() == '\r') err_partial_.pop_back();
    if (!err_partial_.empty()) err_tail_.push_back(std::move(err_partial_));
    if (err_tail_.size() > kTailLines) err_tail_.pop_front();
    err_partial_.clear();
  }
  return n;
}

void Subprocess::drain_available_stderr() {
  while (err_fd_ >= 0) {
    ssize_t n = read_stderr();
    if (n == 0) close_fd(err_fd_);
    if (n <= 0) return;
  }
}

void Subprocess::drain_stderr(Clock::time_point deadline) {
  if (err_fd_ >= 0) pump(-1, 0, deadline);
}

Subprocess::Io Subprocess::write_all(const std::string& data, Clock::time_point deadline) {
  size_t off = 0;
  while (off < data.size()) {
    if (in_fd_ < 0) return Io::Closed;
    // MSG_NOSIGNAL: a worker that died makes this fail with EPIPE instead of killing us.
    ssize_t n = ::send(in_fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += static_cast<size_t>(n);
    } else if (errno == EINTR) {
      continue;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!pump(in_fd_, POLLOUT, deadline)) return Io::Timeout;
    } else {
      return Io::Closed;
    }
  }
  return Io::Done;
}

Subprocess::Io Subprocess::read_line(std::string& line, Clock::time_point deadline) {
  size_t scanned = 0;
  for (;;) {
    size_t nl = out_buf_.find('\n', scanned);
    if (nl != std::string::npos || out_buf_.size() > kMaxLine) {
      if (nl == std::string::npos) nl = out_buf_.size();
      line.assign(out_buf_, 0, nl);
      out_buf_.erase(0, std::min(nl + 1, out_buf_.size()));
      if (!line.empty() && line.back() == '\r') line.pop_back();
      // What the worker logged before answering is in the pipe already: show it now, not
      // during the next request.
      drain_available_stderr();
      return Io::Done;
    }
    scanned = out_buf_.size();
    if (out_fd_ < 0) return Io::Closed;
    if (!pump(out_fd_, POLLIN, deadline)) return Io::Timeout;
    char buf[65536];
    ssize_t n = ::read(out_fd_, buf, sizeof buf);
    if (n > 0) {
      out_buf_.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      close_fd(out_fd_);
      return Io::Closed;
    }
  }
}

void Subprocess::close_stdin() { close_fd(in_fd_); }

bool Subprocess::observe_exit() {
  if (exited_) return true;
  // WNOWAIT: note the exit but leave the zombie, so its pid (= our group id) cannot be reused
  // before kill_group() has signalled the rest of the group.
  siginfo_t info{};
  int r;
  do r = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
  while (r < 0 && errno == EINTR);
  if (r < 0) {  // ECHILD: someone else reaped it (SIGCHLD ignored); its status is lost
    exited_ = reaped_ = true;
    return true;
  }
  if (info.si_pid == 0) return false;
  exited_ = true;
  if (info.si_code == CLD_EXITED) exit_code_ = info.si_status;
  else term_signal_ = info.si_status;
  return true;
}

bool Subprocess::running() { return !observe_exit(); }

bool Subprocess::wait_exit(Clock::time_point deadline) {
  while (!observe_exit()) {
    if (Clock::now() >= deadline) return false;
    // There is no portable way to poll for a child's exit; look again every 10 ms.
    auto tick = std::min(deadline, Clock::now() + std::chrono::milliseconds(10));
    if (err_fd_ >= 0) pump(-1, 0, tick);
    else ::poll(nullptr, 0, poll_ms(tick));
  }
  drain_stderr(std::min(deadline, Clock::now() + kStderrDrain));
  return true;
}

void Subprocess::kill_group() {
  if (reaped_ || pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);  // the leader may be a zombie already; the rest of the group is not
  int status = 0;
  pid_t r;
  do r = ::waitpid(pid_, &status, 0);
  while (r < 0 && errno == EINTR);
  reaped_ = true;
  if (!exited_ && r == pid_) {
    exited_ = true;
    if (WIFEXITED(status)) exit_code_ = WEXITSTATUS(status);
    else if (WIFSIGNALED(status)) term_signal_ = WTERMSIG(status);
  }
  // Everything holding the stderr pipe is gone now; collect its last words.
  drain_stderr(Clock::now() + kStderrDrain);
}

std::string Subprocess::exit_description() const {
  if (!exited_) return "running";
  if (term_signal_ != 0)
    return "signal " + std::to_string(term_signal_) + " (" + ::strsignal(term_signal_) + ")";
  if (exit_code_ >= 0) return "exit code " + std::to_string(exit_code_);
  return "exited, status unknown";
}

std::string Subprocess::last_stderr_line() const {
  if (!err_partial_.empty()) return err_partial_;  // an unterminated last line counts too
  return err_tail_.empty() ? std::string() : err_tail_.back();
}

}  // namespace kf
