// The C ABI of exported launchers: header types that compile as C11 and as C++, the pointer
// checks every launcher makes, and the error codes it returns for each kind of refusal.
#pragma once
#include <string>

#include "export/kernel_model.hpp"

namespace kf::exporter {

// Error codes of a launcher (and of the dispatcher), kept distinct so a caller can tell
// what to fix:
//   cudaErrorInvalidValue          the shape is not supported (nothing launched; see _supports)
//   cudaErrorInvalidDevicePointer  a buffer pointer is NULL or not 16-byte aligned
//   any other code                 the launch itself failed (cudaGetLastError); a launch error
//                                  that would read as one of the two above is reported as
//                                  cudaErrorLaunchFailure
constexpr int kPointerAlignment = 16;

// Parameters of the extern "C" functions (launchers, dispatcher) are prefixed: the kernel source in the
// same file may define macros with short names.
inline const std::string kParamPrefix = "kf_";

// The guarded typedefs kforge_f16 / kforge_bf16: __half / __nv_bfloat16 in C++, their 16-bit
// patterns (uint16_t) in C, so a header's prototypes compile in both with the same ABI.
std::string c_types_decl();
// A buffer's pointer type as a header spells it ("const kforge_f16*", "float*").
std::string header_pointer_type(const std::string& ctype, bool is_const);
// The block comment that documents the codes above, for generated headers.
std::string error_codes_comment();
// Launcher code returning cudaErrorInvalidDevicePointer for a NULL or misaligned buffer.
std::string pointer_checks(const KernelModel& m, const std::string& prefix);
// Launcher code that returns the launch's error, never one of the two refusal codes.
std::string launch_result_code();

}  // namespace kf::exporter
