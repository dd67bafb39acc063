// Everything the generators need to know about one exported kernel, resolved once from the
// family, the winning evaluation and the target architecture.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "family/family.hpp"
#include "family/render.hpp"

namespace kf::exporter {

struct ExportBuffer {
  std::string name;
  std::string dtype;  // "f16" | "bf16" | "f32" | "f64" | "i32", for the exported shape
  std::string ctype;  // __half, __nv_bfloat16, float, double, int
  BufferRole role = BufferRole::Input;
  int64_t count = 0;  // elements, for the exported shape
  const BufferSpec* spec = nullptr;
  bool is_const() const { return role == BufferRole::Input; }
  std::string pointer_type() const { return (is_const() ? "const " : "") + ctype + "*"; }
};

struct KernelModel {
  const Family* family = nullptr;
  std::string name;   // C identifier: launcher name; the kernel entry is name + "_kernel"
  Config config;
  Shape shape;
  Variant variant;    // rendered, with the entry renamed
  std::string arch;   // full target, e.g. "sm_90" or "sm_90a"
  DeviceLimits limits;  // the export target's limits: used when the caller gives none
  std::vector<ExportBuffer> buffers;  // in spec order
  ResolvedLaunch launch;              // for the exported shape
  nlohmann::json args;                // resolved kernel arguments, in kernel order

  std::string entry() const { return name + "_kernel"; }
  // The buffer a kernel argument names; throws std::runtime_error for an unknown one.
  const ExportBuffer& buffer(const std::string& buffer_name) const;
  bool has_tensor_maps() const;
};

// C type of a buffer element; throws std::runtime_error for an unknown dtype.
std::string ctype_of(const std::string& dtype);

// "M4096_N4096_K4096_f16": int dims as name+value, enum dims as their value, spec order,
// restricted to [A-Za-z0-9_].
std::string short_shape(const Family& f, const Shape& s);
bool is_c_identifier(const std::string& s);
// s with every other character replaced by '_' (and a leading digit prefixed with 'k').
std::string c_identifier(const std::string& s);

// Renders, renames and resolves. `limits` describes the target device.
// `defines`: extra #defines rendered with the config (family/user_config.hpp).
KernelModel make_kernel_model(const Family& f, const Config& c, const Shape& s, const std::string& name,
                              const std::string& base_arch, const DeviceLimits& limits,
                              const Assignment& defines = {});

// Replaces whole-identifier occurrences of `from` by `to` (a token-level rename: `gemm_kernel`
// is renamed, `gemm_kernel_v2` and `my_gemm_kernel` are not).
std::string rename_identifier(const std::string& source, const std::string& from, const std::string& to);

}  // namespace kf::exporter
