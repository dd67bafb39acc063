#include "gpu/check.hpp"

namespace kf::gpu {

bool is_sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
    case cudaErrorContained:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorContextIsDestroyed:
    case cudaErrorUnknown:  // unexplained: assume the worst and start afresh
      return true;
    default:
      return false;
  }
}

std::string error_text(cudaError_t e) {
  const char* name = cudaGetErrorName(e);
  const char* text = cudaGetErrorString(e);
  return std::string(name ? name : "cudaError?") + ": " + (text ? text : "unknown error");
}

CudaError::CudaError(cudaError_t code, const std::string& call)
    : std::runtime_error(call + ": " + error_text(code)), code_(code) {}

}  // namespace kf::gpu
