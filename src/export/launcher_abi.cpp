#include "export/launcher_abi.hpp"

namespace kf::exporter {

std::string c_types_decl() {
  return "#ifndef KFORGE_HALF_TYPES_DEFINED\n#define KFORGE_HALF_TYPES_DEFINED\n"
         "/* 16-bit floats: the CUDA types in C++, their bit patterns in C (same size and ABI). */\n"
         "#ifdef __cplusplus\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n"
         "typedef __half kforge_f16;\ntypedef __nv_bfloat16 kforge_bf16;\n"
         "#else\n#include <stdint.h>\ntypedef uint16_t kforge_f16;\ntypedef uint16_t kforge_bf16;\n"
         "#endif\n#endif\n";
}

std::string header_pointer_type(const std::string& ctype, bool is_const) {
  std::string t = ctype;
  if (ctype == "__half") t = "kforge_f16";
  if (ctype == "__nv_bfloat16") t = "kforge_bf16";
  return (is_const ? "const " : "") + t + "*";
}

std::string error_codes_comment() {
  return "/* Return codes (distinct, so a caller can tell what to fix):\n"
         " *   cudaSuccess                    launched\n"
         " *   cudaErrorInvalidValue          shape not supported; nothing launched\n"
         " *   cudaErrorInvalidDevicePointer  a buffer is NULL or not 16-byte aligned; nothing launched\n"
         " *   any other code                 the launch failed (cudaGetLastError); a launch error that\n"
         " *                                  would read as one of the two above is cudaErrorLaunchFailure */\n";
}

std::string pointer_checks(const KernelModel& m, const std::string& prefix) {
  // The gate ran the kernel only on cudaMalloc'd (256-byte aligned) buffers, and its vector
  // loads/stores and tensor maps need 16 bytes: a pointer that is not is refused, not launched.
  std::string o = "  // Buffers: non-NULL and " + std::to_string(kPointerAlignment) + "-byte aligned.\n";
  for (const auto& b : m.buffers)
    o += "  if (" + prefix + b.name + " == nullptr || (reinterpret_cast<uintptr_t>(" + prefix + b.name + ") & " +
         std::to_string(kPointerAlignment - 1) + "u) != 0) return cudaErrorInvalidDevicePointer;\n";
  return o;
}

std::string launch_result_code() {
  return "  err = cudaGetLastError();\n"
         "  if (err == cudaErrorInvalidValue || err == cudaErrorInvalidDevicePointer) return cudaErrorLaunchFailure;\n"
         "  return err;\n";
}

}  // namespace kf::exporter
