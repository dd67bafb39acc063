// The worker's end of the protocol channel. Replies must not share a descriptor with anything
// else the process prints: a kernel's device printf lands on stdout, and a reply stream with
// such text in it is unreadable.
#pragma once
#include <ostream>
#include <streambuf>

namespace kf {

// Returns the descriptor to write protocol lines to. With KFORGE_PROTOCOL_FD set (the
// orchestrator starts workers that way, stdout already going elsewhere) that descriptor,
// checked to be open; otherwise a private copy of stdout, after which stdout (descriptor 1)
// is pointed at stderr. Throws std::runtime_error with a one-line reason.
int take_protocol_channel();

// An unbuffered std::ostream onto a descriptor (send_line flushes each line anyway).
class FdOStream : public std::ostream {
 public:
  explicit FdOStream(int fd);

 private:
  class Buf : public std::streambuf {
   public:
    explicit Buf(int fd) : fd_(fd) {}

   protected:
    int_type overflow(int_type c) override;
    std::streamsize xsputn(const char* s, std::streamsize n) override;

   private:
    int fd_;
  };
  Buf buf_;
};

}  // namespace kf
