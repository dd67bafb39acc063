// The workspace query evaluates the spec's buffer counts (and the derived values they read)
// with the same expression translation as the launcher, for the export target's limits.
#include "export/workspace_gen.hpp"

#include <sstream>

#include "export/cxx_expr.hpp"
#include "export/launcher_gen.hpp"
#include "export/plan_names.hpp"

namespace kf::exporter {

namespace {

bool has_scratch(const KernelModel& m) {
  for (const auto& b : m.buffers)
    if (b.role == BufferRole::Scratch) return true;
  return false;
}

}  // namespace

std::string workspace_signature(const KernelModel& m, const std::string& prefix) {
  const std::string dims = dims_parameters(*m.family, prefix);
  return "size_t " + m.name + "_workspace_size(" + (dims.empty() ? "void" : dims) + ")";
}

std::string workspace_layout_signature(const std::string& name, const Family& f, const std::string& prefix) {
  const std::string dims = dims_parameters(f, prefix);
  return "size_t " + name + "_workspace_layout(" + dims + (dims.empty() ? "" : ", ") + "size_t* " + prefix + "offsets)";
}

int scratch_count(const KernelModel& m) {
  int n = 0;
  for (const auto& b : m.buffers) n += b.role == BufferRole::Scratch ? 1 : 0;
  return n;
}

std::string generate_workspace_header(const KernelModel& m) {
  std::ostringstream o;
  o << "\n#include <stddef.h>\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
    << "/* Bytes of device scratch " << m.name << "'s scratch buffers need for this shape: each\n"
    << " * buffer's size rounded up to 256 bytes, summed in the launcher's parameter order (carve one\n"
    << " * allocation at those offsets, zero it once). 0 when the kernel has no scratch buffer;\n"
    << " * (size_t)-1 when the sizes cannot be computed for the shape (see " << m.name << "_supports).\n"
    << " * Host code only; needs no GPU. */\n"
    << workspace_signature(m) << ";\n"
    << "/* The same total; also, unless `offsets` is NULL, each scratch buffer's byte offset in that\n"
    << " * allocation (" << scratch_count(m) << " entries, parameter order). */\n"
    << workspace_layout_signature(m.name, *m.family) << ";\n"
    << "#ifdef __cplusplus\n}\n#endif\n";
  return o.str();
}

std::string generate_workspace_source(const KernelModel& m) {
  const Family& f = *m.family;
  // The plan's names, with device.* read from the export target's limits (kfx_target).
  PlanNames names(m);
  std::ostringstream o;
  o << "\n// ---- workspace query ----\nnamespace {\n\nsize_t kfx_workspace(";
  std::string params, args;
  for (const DimSpec& d : f.dims) {
    params += (d.is_enum ? "std::string_view d_" : "long long d_") + d.name + ", ";
    args += (d.is_enum ? "std::string_view(kf_" + d.name + ")" : "kf_" + d.name) + ", ";
  }
  o << params << "size_t* offsets) {\n";
  for (const DimSpec& d : f.dims) o << "  (void)d_" << d.name << ";\n";
  if (!has_scratch(m)) {
    o << "  (void)offsets;\n  return 0;  // no scratch buffer\n}\n\n}  // namespace\n\n";
  } else {
    o << "  bool kfx_bad = false;\n  const kforge_device_info& dev = kfx_target;\n  (void)dev;\n";
    o << derived_locals(f, names) << "  if (kfx_bad) return SIZE_MAX;\n  size_t total = 0;\n";
    int index = 0;
    for (const auto& b : m.buffers) {
      if (b.role != BufferRole::Scratch) continue;
      o << "  {  // " << b.name << ": " << b.spec->count.text() << " elements of " << b.ctype << "\n"
        << "    const long long n = " << cxx_as_int(names.translate(b.spec->count)) << ";\n"
        << "    if (kfx_bad || n < 0) return SIZE_MAX;\n"
        << "    if (offsets) offsets[" << index++ << "] = total;\n"
        << "    total += (static_cast<size_t>(n) * sizeof(" << b.ctype << ") + 255) / 256 * 256;\n  }\n";
    }
    o << "  return total;\n}\n\n}  // namespace\n\n";
  }
  std::string null_enum;
  for (const DimSpec& d : f.dims)
    if (d.is_enum) null_enum += "  if (kf_" + d.name + " == nullptr) return SIZE_MAX;\n";
  o << "extern \"C\" " << workspace_layout_signature(m.name, f, "kf_") << " {\n" << null_enum
    << "  return kfx_workspace(" << args << "kf_offsets);\n}\n\n";
  o << "extern \"C\" " << workspace_signature(m, "kf_") << " {\n" << null_enum
    << "  return kfx_workspace(" << args << "nullptr);\n}\n";
  return o.str();
}

}  // namespace kf::exporter
