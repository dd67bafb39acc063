// Capturing stream work into a CUDA graph and replaying it (many launches, one submission).
#pragma once
#include <functional>

#include <cuda_runtime_api.h>

#include "gpu/stream.hpp"

namespace kf::gpu {

class GraphExec {
 public:
  // Records what `body` enqueues on `s` and instantiates it. If body throws, the capture is
  // ended and discarded before the exception propagates. Throws CudaError.
  static GraphExec capture(const Stream& s, const std::function<void()>& body);
  ~GraphExec();
  GraphExec(GraphExec&& o) noexcept;
  GraphExec& operator=(GraphExec&&) = delete;
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;

  void launch(const Stream& s) const;  // throws CudaError

 private:
  GraphExec() = default;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace kf::gpu
