// A child process speaking a line protocol: we write to its stdin and read its answers from
// descriptor kProtocolFd (named in its environment as KFORGE_PROTOCOL_FD), so that nothing
// else it prints can corrupt the conversation; its stdout and stderr go to one pipe that is
// passed through to our stderr (and whose last lines are kept for error messages). POSIX only.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <deque>
#include <string>
#include <vector>

#include "eval/protocol_fd.hpp"

namespace kf {


class Subprocess {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts argv[0] (searched in PATH) in a process group of its own, so that killing the
  // group also reaches anything it started. Throws std::runtime_error if it cannot be run.
  explicit Subprocess(const std::vector<std::string>& argv);
  // Kills the group if the child still runs, and reaps it.
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  enum class Io { Done, Closed, Timeout };
  // Writes all of data to the child's stdin. Closed: the child closed it (never SIGPIPE).
  Io write_all(const std::string& data, Clock::time_point deadline);
  // Reads one line from the child's protocol descriptor, without the newline. Closed: EOF first.
  Io read_line(std::string& line, Clock::time_point deadline);
  // Tells the child there will be no more requests.
  void close_stdin();

  // True while the child has not exited (reaps it if it has).
  bool running();
  // Waits for the child to exit by itself until deadline; true if it did.
  bool wait_exit(Clock::time_point deadline);
  // SIGKILL to the whole group, then reaps the child. Safe to call more than once.
  void kill_group();

  // "exit code 3" or "signal 11 (Segmentation fault)"; "running" before it has exited.
  std::string exit_description() const;
  // The child's last non-empty stderr line (up to the moment it exited), or "".
  std::string last_stderr_line() const;
  pid_t pid() const { return pid_; }

 private:
  // Waits for events on fd (if >= 0) until deadline, meanwhile copying the child's stderr
  // through. Returns true when fd is ready; false at the deadline, or, with fd < 0, as soon
  // as stderr reaches EOF.
  bool pump(int fd, short events, Clock::time_point deadline);
  void drain_stderr(Clock::time_point deadline);  // until EOF or deadline
  ssize_t read_stderr();            // one read: bytes, 0 at EOF, -1 when nothing is there
  void drain_available_stderr();    // what is in the pipe now, without waiting
  bool observe_exit();  // true once the child has exited (not reaped before kill_group)

  pid_t pid_ = -1;
  int in_fd_ = -1;   // our end of the child's stdin (a socket, so we can send without SIGPIPE)
  int out_fd_ = -1;  // the child's protocol descriptor
  int err_fd_ = -1;  // the child's stdout and stderr
  bool exited_ = false;  // it has exited (seen with WNOWAIT)
  bool reaped_ = false;  // and its zombie is gone
  int exit_code_ = -1;   // when it exited normally
  int term_signal_ = 0;  // when a signal ended it
  std::string out_buf_;            // protocol bytes read but not yet returned as a line
  std::string err_partial_;        // stderr bytes after the last newline
  std::deque<std::string> err_tail_;  // the last few complete stderr lines
};

}  // namespace kf
