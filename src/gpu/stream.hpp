// RAII streams and events.
#pragma once
#include <cuda_runtime_api.h>

namespace kf::gpu {

// A non-blocking stream (graph capture needs one other than the legacy default stream).
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  void synchronize() const;  // throws CudaError (sticky errors of earlier work surface here)

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& o) noexcept : e_(o.e_) { o.e_ = nullptr; }
  void record(const Stream& s);
  void synchronize() const;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

// Milliseconds between two recorded and completed events.
float elapsed_ms(const Event& start, const Event& stop);

}  // namespace kf::gpu
