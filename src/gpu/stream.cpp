#include "gpu/stream.hpp"

#include "gpu/check.hpp"

namespace kf::gpu {

Stream::Stream() { check(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "cudaStreamCreate"); }

// Destructors ignore errors: after a sticky error every call fails, and the process is
// about to exit anyway.
Stream::~Stream() {
  if (s_) cudaStreamDestroy(s_);
}

void Stream::synchronize() const { check(cudaStreamSynchronize(s_), "cudaStreamSynchronize"); }

Event::Event() { check(cudaEventCreate(&e_), "cudaEventCreate"); }

Event::~Event() {
  if (e_) cudaEventDestroy(e_);
}

void Event::record(const Stream& s) { check(cudaEventRecord(e_, s.get()), "cudaEventRecord"); }

void Event::synchronize() const { check(cudaEventSynchronize(e_), "cudaEventSynchronize"); }

float elapsed_ms(const Event& start, const Event& stop) {
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start.get(), stop.get()), "cudaEventElapsedTime");
  return ms;
}

}  // namespace kf::gpu
