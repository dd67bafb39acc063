#include "export/launcher_gen.hpp"

#include <sstream>
#include <stdexcept>

#include "eval/buffers.hpp"
#include "export/commands.hpp"
#include "export/cxx_expr.hpp"
#include "export/launcher_abi.hpp"
#include "export/tensor_map_gen.hpp"

namespace kf::exporter {

namespace {

const char* kInvalid = "return false;";

// Identifiers in the spec's expressions, spelled for the plan function: params become baked
// literals, dims the (prefixed) arguments, derived values locals, device.* the limits struct.
class PlanNames {
 public:
  explicit PlanNames(const KernelModel& m) : m_(m) {}
  void define_derived(const std::string& name, CxxType t) { derived_.push_back({name, t}); }

  std::optional<CxxExpr> operator()(const std::string& name) const {
    for (auto it = derived_.rbegin(); it != derived_.rend(); ++it)
      if (it->first == name) return CxxExpr{"v_" + name, it->second};
    if (auto c = m_.config.find(name); c != m_.config.end()) {
      const Value& v = c->second;
      if (is_string(v)) return CxxExpr{cxx_string_literal(std::get<std::string>(v)), CxxType::Str};
      if (is_int(v)) return CxxExpr{cxx_int_literal(std::get<int64_t>(v)), CxxType::Int};
      return CxxExpr{cxx_real_literal(std::get<double>(v)), CxxType::Real};
    }
    if (const DimSpec* d = m_.family->dim(name)) return CxxExpr{"d_" + name, d->is_enum ? CxxType::Str : CxxType::Int};
    if (name.rfind("device.", 0) == 0) {
      const std::string field = name.substr(7);
      for (const auto& f : device_fields())
        if (f == field) return CxxExpr{"dev." + field, CxxType::Int};
    }
    return std::nullopt;
  }

 private:
  const KernelModel& m_;
  std::vector<std::pair<std::string, CxxType>> derived_;
};

std::string comment_text(const std::string& s) {
  std::string out = s;
  for (size_t p = out.find("*/"); p != std::string::npos; p = out.find("*/")) out.replace(p, 2, "* /");
  return out;
}

bool has_tensor_maps(const Family& f) {
  for (const ArgSpec& a : f.kernel.args)
    if (a.kind == ArgSpec::Kind::TensorMap) return true;
  return false;
}

const ExportBuffer& buffer_named(const KernelModel& m, const std::string& name) {
  for (const auto& b : m.buffers)
    if (b.name == name) return b;
  throw std::runtime_error("export: kernel argument names unknown buffer '" + name + "'");
}

std::string joined_texts(const std::vector<Expr>& exprs) {
  std::string out;
  for (const Expr& e : exprs) out += (out.empty() ? "" : ", ") + e.text();
  return out;
}

std::string buffer_parameters(const KernelModel& m, const std::string& prefix, bool c_header) {
  std::string out;
  for (const auto& b : m.buffers) {
    if (!is_c_identifier(b.name)) throw std::runtime_error("export: buffer name '" + b.name + "' is not a C identifier");
    out += (c_header ? header_pointer_type(b.ctype, b.is_const()) : b.pointer_type()) + " " + prefix + b.name + ", ";
  }
  return out;
}

// The body of the plan: returns false for any shape the kernel cannot run.
std::string plan_function(const KernelModel& m) {
  const Family& f = *m.family;
  std::ostringstream o;
  PlanNames names(m);
  const auto tr = [&](const Expr& e) { return translate_expr(e.text(), std::cref(names)); };

  o << "struct kfx_plan_t {\n  unsigned grid[3];\n  unsigned block[3];\n  unsigned smem;\n";
  for (size_t i = 0; i < f.kernel.args.size(); ++i) {
    const auto k = f.kernel.args[i].kind;
    if (k == ArgSpec::Kind::I32) o << "  int a" << i << ";\n";
    if (k == ArgSpec::Kind::I64) o << "  long long a" << i << ";\n";
    if (k == ArgSpec::Kind::F32) o << "  float a" << i << ";\n";
    if (k == ArgSpec::Kind::TensorMap) o << "  kfx_tensor_map_t t" << i << ";\n";
  }
  o << "};\n\n";

  o << "bool kfx_plan(";
  for (const DimSpec& d : f.dims) o << (d.is_enum ? "std::string_view d_" : "long long d_") << d.name << ", ";
  o << "const kforge_device_info& dev, kfx_plan_t& p) {\n";
  o << "  bool kfx_bad = false;\n  (void)dev;\n";
  o << "  // Dimensions within the family's ranges.\n";
  for (const DimSpec& d : f.dims) {
    if (d.is_enum) {
      o << "  if (!(";
      for (size_t i = 0; i < d.choices.size(); ++i)
        o << (i ? " || " : "") << "d_" << d.name << " == " << cxx_string_literal(d.choices[i]);
      if (d.choices.empty()) o << "false";
      o << ")) " << kInvalid << "\n";
    } else {
      o << "  if (d_" << d.name << " < " << cxx_int_literal(d.min) << " || d_" << d.name << " > "
        << cxx_int_literal(d.max) << ") " << kInvalid << "\n";
    }
  }
  if (!m.variant.specialization.empty()) {
    o << "  // Specialized dims: baked into the kernel source.\n";
    for (const auto& [dim, v] : m.variant.specialization) {
      const std::string lit = is_string(v) ? cxx_string_literal(std::get<std::string>(v)) : cxx_int_literal(as_int(v));
      o << "  if (d_" << dim << " != " << lit << ") " << kInvalid << "\n";
    }
  }
  if (!f.derived.empty()) o << "  // Derived values.\n";
  for (const NamedExpr& d : f.derived) {
    CxxExpr e = tr(d.expr);
    o << "  const " << cxx_type_name(e.type) << " v_" << d.name << " = " << e.code << ";  // "
      << d.expr.text() << "\n";
    o << "  (void)v_" << d.name << ";\n";
    names.define_derived(d.name, e.type);
  }
  if (!f.derived.empty()) o << "  if (kfx_bad) " << kInvalid << "\n";
  o << "  // Buffer element types this launcher's pointer types were fixed to.\n";
  for (const auto& b : m.buffers) {
    CxxExpr e = tr(b.spec->dtype);
    if (e.type != CxxType::Str) throw ExprError("in '" + b.spec->dtype.text() + "': a buffer dtype must be a string");
    o << "  if (" << e.code << " != " << cxx_string_literal(b.dtype) << ") " << kInvalid << "\n";
    CxxExpr n = tr(b.spec->count);
    o << "  if (" << cxx_as_int(n) << " < 0 || kfx_bad) " << kInvalid << "  // " << b.name << ": "
      << b.spec->count.text() << " elements\n";
  }
  if (!f.constraints.empty()) o << "  // Family constraints.\n";
  for (const Constraint& c : f.constraints) {
    CxxExpr e = tr(c.expr);
    o << "  if (!" << cxx_as_bool(e, c.text) << " || kfx_bad) " << kInvalid << "  // " << c.text << "\n";
  }
  o << "  // Launch geometry.\n";
  for (int i = 0; i < 3; ++i) {
    o << "  const long long g" << i << " = " << cxx_as_int(tr(f.kernel.launch.grid[i])) << ";\n";
    o << "  const long long b" << i << " = " << cxx_as_int(tr(f.kernel.launch.block[i])) << ";\n";
  }
  o << "  const long long smem = " << cxx_as_int(tr(f.kernel.launch.smem)) << ";\n";
  o << "  if (kfx_bad) " << kInvalid << "\n";
  o << "  if (g0 < 1 || g0 > 2147483647LL || g1 < 1 || g1 > 65535 || g2 < 1 || g2 > 65535) " << kInvalid << "\n";
  o << "  if (b0 < 1 || b0 > 1024 || b1 < 1 || b1 > 1024 || b2 < 1 || b2 > 64) " << kInvalid << "\n";
  o << "  if (b0 * b1 * b2 > dev.max_threads) " << kInvalid << "\n";
  o << "  if (smem < 0 || smem > (dev.smem_optin > 0 ? dev.smem_optin : 49152)) " << kInvalid << "\n";
  o << "  p.grid[0] = static_cast<unsigned>(g0);\n  p.grid[1] = static_cast<unsigned>(g1);\n"
       "  p.grid[2] = static_cast<unsigned>(g2);\n";
  o << "  p.block[0] = static_cast<unsigned>(b0);\n  p.block[1] = static_cast<unsigned>(b1);\n"
       "  p.block[2] = static_cast<unsigned>(b2);\n";
  o << "  p.smem = static_cast<unsigned>(smem);\n";
  bool scalar = false;
  for (size_t i = 0; i < f.kernel.args.size(); ++i) {
    const ArgSpec& a = f.kernel.args[i];
    if (a.kind == ArgSpec::Kind::Buffer || a.kind == ArgSpec::Kind::TensorMap) continue;
    if (!scalar) o << "  // Scalar kernel arguments.\n";
    scalar = true;
    CxxExpr e = tr(a.value);
    if (e.type == CxxType::Str) throw ExprError("in '" + a.value.text() + "': a kernel argument must be a number");
    if (a.kind == ArgSpec::Kind::F32) {
      o << "  p.a" << i << " = static_cast<float>(" << cxx_as_real(e) << ");  // " << a.value.text() << "\n";
    } else {
      o << "  const long long a" << i << " = " << cxx_as_int(e) << ";  // " << a.value.text() << "\n";
      if (a.kind == ArgSpec::Kind::I32) {
        o << "  if (a" << i << " < INT_MIN || a" << i << " > INT_MAX) " << kInvalid << "\n";
        o << "  p.a" << i << " = static_cast<int>(a" << i << ");\n";
      } else {
        o << "  p.a" << i << " = a" << i << ";\n";
      }
    }
  }
  bool map = false;
  for (size_t i = 0; i < f.kernel.args.size(); ++i) {
    const ArgSpec& a = f.kernel.args[i];
    if (a.kind != ArgSpec::Kind::TensorMap) continue;
    if (!map) o << "  // Tensor maps: each buffer viewed as a packed tensor, innermost dim first.\n";
    map = true;
    const ExportBuffer& b = buffer_named(m, a.buffer);
    const std::string t = "t" + std::to_string(i);
    const auto list = [&](const std::vector<Expr>& exprs) {
      std::string out;
      for (const Expr& e : exprs) {
        const CxxExpr c = tr(e);
        if (c.type == CxxType::Str) throw ExprError("in '" + e.text() + "': a tensor map extent must be a number");
        out += (out.empty() ? "" : ", ") + cxx_as_int(c);
      }
      return out;
    };
    o << "  // Argument " << i << ": " << b.name << " (" << b.dtype << "), dims {" << joined_texts(a.dims) << "}, box {"
      << joined_texts(a.box) << "}, swizzle " << a.swizzle << ".\n";
    o << "  const long long " << t << "_dims[" << a.dims.size() << "] = {" << list(a.dims) << "};\n";
    o << "  const long long " << t << "_box[" << a.box.size() << "] = {" << list(a.box) << "};\n";
    o << "  const long long " << t << "_elems = " << cxx_as_int(tr(b.spec->count)) << ";  // " << b.spec->count.text()
      << "\n";
    o << "  if (kfx_bad || !kfx_tensor_map_plan(" << a.dims.size() << ", " << t << "_dims, " << t << "_box, "
      << dtype_size(dtype_from_string(b.dtype)) << ", " << a.swizzle << ", " << t << "_elems, p." << t << ")) "
      << kInvalid << "\n";
  }
  o << "  return !kfx_bad;\n}\n";
  return o.str();
}

std::string target_limits(const KernelModel& m) {
  const DeviceLimits& d = m.limits;
  std::ostringstream o;
  o << "// Limits of the export target (" << d.name << ", " << m.arch << "): used by " << m.name
    << "_supports when it is given no device.\n";
  o << "const kforge_device_info kfx_target = {" << d.cc() << ", " << d.sm_count << ", " << d.smem_optin << ", "
    << d.smem_per_block << ", " << d.smem_per_sm << ", " << d.max_threads << ", " << d.regs_per_block << ", "
    << d.regs_per_sm << ", " << d.l2_bytes << "};\n";
  return o.str();
}

}  // namespace

const std::vector<std::string>& device_fields() {
  static const std::vector<std::string> fields = {"cc", "sm_count", "smem_optin", "smem_per_block", "smem_per_sm",
                                                  "max_threads", "regs_per_block", "regs_per_sm", "l2_bytes"};
  return fields;
}

std::string device_info_decl() {
  std::string o =
      "#ifndef KFORGE_DEVICE_INFO_DEFINED\n#define KFORGE_DEVICE_INFO_DEFINED\n"
      "/* Device limits a supported-shape rule may read (the spec's device.* names). */\n"
      "typedef struct kforge_device_info {\n";
  for (const auto& f : device_fields()) o += "  long long " + f + ";\n";
  return o + "} kforge_device_info;\n#endif\n";
}

std::string device_query_code() {
  return R"CXX(// The current device's limits, read once per device (a launch must stay cheap).
cudaError_t kfx_query(int d, kforge_device_info& i) {
  const cudaDeviceAttr attrs[] = {cudaDevAttrComputeCapabilityMajor, cudaDevAttrComputeCapabilityMinor,
                                  cudaDevAttrMultiProcessorCount, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                  cudaDevAttrMaxSharedMemoryPerBlock, cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                                  cudaDevAttrMaxThreadsPerBlock, cudaDevAttrMaxRegistersPerBlock,
                                  cudaDevAttrMaxRegistersPerMultiprocessor, cudaDevAttrL2CacheSize};
  int v[10] = {0};
  for (int k = 0; k < 10; ++k) {
    const cudaError_t e = cudaDeviceGetAttribute(&v[k], attrs[k], d);
    if (e != cudaSuccess) return e;
  }
  i.cc = v[0] * 10 + v[1];
  i.sm_count = v[2];
  i.smem_optin = v[3];
  i.smem_per_block = v[4];
  i.smem_per_sm = v[5];
  i.max_threads = v[6];
  i.regs_per_block = v[7];
  i.regs_per_sm = v[8];
  i.l2_bytes = v[9];
  return cudaSuccess;
}

constexpr int kfx_kDevices = 64;
std::mutex kfx_mutex;
kforge_device_info kfx_info[kfx_kDevices];
bool kfx_known[kfx_kDevices];
long long kfx_smem_allowed[kfx_kDevices];  // dynamic smem opted in so far, per device

cudaError_t kfx_current_device(int& d, kforge_device_info& i) {
  cudaError_t e = cudaGetDevice(&d);
  if (e != cudaSuccess) return e;
  if (d < 0 || d >= kfx_kDevices) return kfx_query(d, i);
  std::lock_guard<std::mutex> lock(kfx_mutex);
  if (!kfx_known[d]) {
    e = kfx_query(d, kfx_info[d]);
    if (e != cudaSuccess) return e;
    kfx_known[d] = true;
  }
  i = kfx_info[d];
  return cudaSuccess;
}

// More than 48 KiB of dynamic shared memory needs an opt-in per kernel and device.
template <typename Kernel>
cudaError_t kfx_allow_smem(Kernel kernel, int d, unsigned smem) {
  if (smem <= 48u * 1024u) return cudaSuccess;
  if (d >= 0 && d < kfx_kDevices) {
    std::lock_guard<std::mutex> lock(kfx_mutex);
    if (kfx_smem_allowed[d] >= static_cast<long long>(smem)) return cudaSuccess;
    const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
    if (e == cudaSuccess) kfx_smem_allowed[d] = smem;
    return e;
  }
  return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
}
)CXX";
}

std::string dims_parameters(const Family& f, const std::string& prefix) {
  std::string out;
  for (const DimSpec& d : f.dims) {
    if (!is_c_identifier(d.name)) throw std::runtime_error("export: dim name '" + d.name + "' is not a C identifier");
    out += (out.empty() ? "" : ", ") + std::string(d.is_enum ? "const char* " : "long long ") + prefix + d.name;
  }
  return out;
}

std::string launcher_signature(const KernelModel& m, const std::string& prefix, bool c_header) {
  return "cudaError_t " + m.name + "(" + buffer_parameters(m, prefix, c_header) + dims_parameters(*m.family, prefix) +
         (m.family->dims.empty() ? "" : ", ") + "cudaStream_t " + prefix + "stream)";
}

std::string supports_signature(const KernelModel& m, const std::string& prefix) {
  return "int " + m.name + "_supports(" + dims_parameters(*m.family, prefix) +
         (m.family->dims.empty() ? "" : ", ") + "const kforge_device_info* " + prefix + "device)";
}

nlohmann::json supported_rule(const KernelModel& m) {
  const Family& f = *m.family;
  nlohmann::json dims = nlohmann::json::object();
  std::string words;
  const auto add = [&](const std::string& w) { words += (words.empty() ? "" : "; ") + w; };
  for (const auto& [dim, v] : m.variant.specialization) add(dim + " = " + to_string(v) + " (baked in)");
  for (const DimSpec& d : f.dims) {
    if (m.variant.specialization.count(d.name)) {
      dims[d.name] = to_json(m.variant.specialization.at(d.name));
      continue;
    }
    if (d.is_enum) {
      dims[d.name] = d.choices;
      std::string c;
      for (const auto& x : d.choices) c += (c.empty() ? "" : "|") + x;
      add(d.name + " in {" + c + "}");
    } else {
      dims[d.name] = {{"min", d.min}, {"max", d.max}};
      add(std::to_string(d.min) + " <= " + d.name + " <= " + std::to_string(d.max));
    }
  }
  nlohmann::json constraints = nlohmann::json::array();
  for (const Constraint& c : f.constraints) constraints.push_back(c.text);
  if (!f.constraints.empty()) {
    std::string cs;
    for (const Constraint& c : f.constraints) cs += (cs.empty() ? "" : ", ") + c.text;
    add("constraints hold with " + to_string(m.config) + ": " + cs);
  }
  add("launch grid, block and shared memory within the device's limits");
  if (has_tensor_maps(f)) add("tensor maps within cuTensorMapEncodeTiled's limits");
  return {{"specialized", to_json(m.variant.specialization)},
          {"dims", dims},
          {"constraints", constraints},
          {"params", to_json(m.config)},
          {"text", words}};
}

std::string generate_header(const KernelModel& m) {
  const Family& f = *m.family;
  std::ostringstream o;
  o << "/* " << m.name << ".h: generated by kforge " << KFORGE_VERSION << ".\n"
    << " * Family " << f.name << ", config " << to_string(m.config) << ",\n"
    << " * tuned for shape " << to_string(m.shape) << ", target " << m.arch << ".\n"
    << " * Supported shapes: " << comment_text(supported_rule(m)["text"].get<std::string>()) << ".\n */\n";
  o << "#pragma once\n#include <cuda_runtime.h>\n\n" << c_types_decl() << "\n" << device_info_decl()
    << "\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  o << "/* Launches " << m.entry() << " on `stream`. Buffers (device memory):\n";
  for (const auto& b : m.buffers) {
    const char* role = b.role == BufferRole::Input ? "input" : b.role == BufferRole::Output ? "output" : "scratch, zero-filled once by the caller";
    o << " *   " << b.name << ": " << b.dtype << ", " << comment_text(b.spec->count.text()) << " elements (" << role << ")\n";
  }
  if (has_tensor_maps(f)) {
    o << " * Tensor maps the launcher encodes over these buffers (each needs a 16-byte aligned address):\n";
    for (const ArgSpec& a : f.kernel.args)
      if (a.kind == ArgSpec::Kind::TensorMap)
        o << " *   " << a.buffer << ": dims {" << comment_text(joined_texts(a.dims)) << "}, box {"
          << comment_text(joined_texts(a.box)) << "}, swizzle " << a.swizzle << "\n";
  }
  o << " * Every buffer must be non-NULL and " << kPointerAlignment << "-byte aligned (cudaMalloc's are).\n"
    << " * Returns cudaErrorInvalidValue, launching nothing, for a shape this kernel does not\n"
    << (has_tensor_maps(f) ? " * support, or for a buffer a tensor map cannot address; cudaErrorInvalidDevicePointer\n"
                           : " * support; cudaErrorInvalidDevicePointer\n")
    << " * for a NULL or misaligned buffer; otherwise the launch's error (below). */\n"
    << error_codes_comment();
  o << launcher_signature(m, "", true) << ";\n\n";
  o << "/* 1 if " << m.name << " supports the shape on a device with these limits (NULL: the\n"
       " * export target's), else 0. Host code only; needs no GPU. */\n";
  o << supports_signature(m, "") << ";\n\n";
  o << "#ifdef __cplusplus\n}\n#endif\n";
  return o.str();
}

std::string generate_source(const KernelModel& m) {
  const Family& f = *m.family;
  std::ostringstream o;
  o << "// " << m.name << ".cu: generated by kforge " << KFORGE_VERSION << ". Self-contained: build with\n"
    << "//   nvcc " << nvcc_arch_flag(m.arch) << " -c " << m.name << ".cu\n"
    << "// Family " << f.name << " (" << f.spec_path.filename().string() << "), config " << to_string(m.config)
    << ",\n// tuned for shape " << to_string(m.shape) << ". Variant " << m.variant.hash << ".\n\n"
    << "#include <cstdint>\n#include <cuda_runtime.h>\n" << (has_tensor_maps(f) ? tensor_map_includes() : "")
    << "\n// ---- kernel: the rendered variant, entry renamed to " << m.entry() << " ----\n"
    << m.variant.source << "\n"
    << "// ---- host launcher ----\n"
    << "#include <climits>\n#include <cmath>\n#include <mutex>\n#include <string_view>\n\n"
    << device_info_decl() << "\n"
    << cxx_expr_helpers() << "\nnamespace {\n\n"
    << (has_tensor_maps(f) ? tensor_map_helpers() + "\n" : "") << plan_function(m) << "\n" << target_limits(m)
    << "\n" << device_query_code() << "\n}  // namespace\n\n";

  // Parameters are prefixed here: the kernel source above may define macros with short names.
  const std::string P = "kf_";
  // _supports: enum dims arrive as C strings.
  o << "extern \"C\" " << supports_signature(m, P) << " {\n";
  std::string plan_args;
  for (const DimSpec& d : f.dims) {
    if (d.is_enum) {
      o << "  if (" << P << d.name << " == nullptr) return 0;\n";
      plan_args += "std::string_view(" + P + d.name + "), ";
    } else {
      plan_args += P + d.name + ", ";
    }
  }
  o << "  kfx_plan_t p;\n  return kfx_plan(" << plan_args << P << "device ? *" << P
    << "device : kfx_target, p) ? 1 : 0;\n}\n\n";

  // The launcher.
  o << "extern \"C\" " << launcher_signature(m, P) << " {\n";
  for (const DimSpec& d : f.dims)
    if (d.is_enum) o << "  if (" << P << d.name << " == nullptr) return cudaErrorInvalidValue;\n";
  o << "  int device = 0;\n  kforge_device_info limits;\n"
       "  cudaError_t err = kfx_current_device(device, limits);\n  if (err != cudaSuccess) return err;\n"
       "  kfx_plan_t p;\n"
    << "  if (!kfx_plan(" << plan_args << "limits, p)) return cudaErrorInvalidValue;\n"
    << pointer_checks(m, P) << "  err = kfx_allow_smem(" << m.entry() << ", device, p.smem);\n  if (err != cudaSuccess) return err;\n";
  for (size_t i = 0; i < f.kernel.args.size(); ++i) {
    const ArgSpec& a = f.kernel.args[i];
    if (a.kind != ArgSpec::Kind::TensorMap) continue;
    const std::string n = std::to_string(i);
    o << "  CUtensorMap m" << n << ";  // over " << a.buffer << "\n"
      << "  err = kfx_encode_tensor_map(m" << n << ", " << P << a.buffer << ", "
      << cu_tensor_map_data_type(buffer_named(m, a.buffer).dtype) << ", " << cu_tensor_map_swizzle(a.swizzle)
      << ", p.t" << n << ");\n  if (err != cudaSuccess) return err;\n";
  }
  o << "  " << m.entry()
    << "<<<dim3(p.grid[0], p.grid[1], p.grid[2]), dim3(p.block[0], p.block[1], p.block[2]), p.smem, "
    << P << "stream>>>(";
  for (size_t i = 0; i < f.kernel.args.size(); ++i) {
    const ArgSpec& a = f.kernel.args[i];
    const std::string n = std::to_string(i);
    o << (i ? ", " : "");
    if (a.kind == ArgSpec::Kind::Buffer) o << P + a.buffer;
    else if (a.kind == ArgSpec::Kind::TensorMap) o << "kfx_map_arg{m" << n << "}";
    else o << "p.a" << n;
  }
  o << ");\n" << launch_result_code() << "}\n";
  return o.str();
}

}  // namespace kf::exporter
