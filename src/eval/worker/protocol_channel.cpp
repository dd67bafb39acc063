#include "eval/worker/protocol_channel.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "eval/protocol_fd.hpp"

namespace kf {

namespace {

int parse_fd(const char* text) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < 3 || v > 1 << 20)
    throw std::runtime_error(std::string(kProtocolFdEnv) + "='" + text + "' is not a descriptor number >= 3");
  return static_cast<int>(v);
}

}  // namespace

int take_protocol_channel() {
  if (const char* named = std::getenv(kProtocolFdEnv); named && *named) {
    const int fd = parse_fd(named);
    const int flags = ::fcntl(fd, F_GETFD);
    if (flags < 0)
      throw std::runtime_error(std::string(kProtocolFdEnv) + "=" + named + ": descriptor is not open");
    ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);  // nothing we start should hold the channel open
    return fd;
  }
  // Run by hand (or by an older orchestrator): answer on the original stdout, and send
  // everything else printed to stdout to stderr instead.
  const int fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (fd < 0) throw std::runtime_error(std::string("cannot duplicate stdout: ") + std::strerror(errno));
  if (::dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
    throw std::runtime_error(std::string("cannot point stdout at stderr: ") + std::strerror(errno));
  return fd;
}

FdOStream::FdOStream(int fd) : std::ostream(nullptr), buf_(fd) { rdbuf(&buf_); }

std::streamsize FdOStream::Buf::xsputn(const char* s, std::streamsize n) {
  std::streamsize done = 0;
  while (done < n) {
    const ssize_t w = ::write(fd_, s + done, static_cast<size_t>(n - done));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;  // the orchestrator is gone; the stream goes bad and the loop ends
    done += w;
  }
  return done;
}

FdOStream::Buf::int_type FdOStream::Buf::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  const char ch = traits_type::to_char_type(c);
  return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
}

}  // namespace kf
