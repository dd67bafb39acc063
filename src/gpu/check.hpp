// Error checking for the CUDA runtime: every call goes through check(), which throws a
// CudaError with a one-line message. is_sticky() tells errors that corrupt the context (the
// process must exit) from those that only reject one launch.
#pragma once
#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

namespace kf::gpu {

// True for errors after which the context is unusable: every later call fails the same way
// and only a new process recovers (illegal/misaligned address, launch failure, trap/assert,
// ECC, hardware stack error, ...).
bool is_sticky(cudaError_t e);

// "cudaErrorIllegalAddress: an illegal memory access was encountered"
std::string error_text(cudaError_t e);

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& call);
  cudaError_t code() const { return code_; }
  bool sticky() const { return is_sticky(code_); }

 private:
  cudaError_t code_;
};

// Throws CudaError("<call>: <error_text>") unless e is cudaSuccess.
inline void check(cudaError_t e, const char* call) {
  if (e != cudaSuccess) throw CudaError(e, call);
}

}  // namespace kf::gpu
