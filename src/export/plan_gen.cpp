#include "export/plan_gen.hpp"

#include <sstream>

#include "export/plan_names.hpp"
#include "export/tensor_map_gen.hpp"
#include "family/buffers.hpp"

namespace kf::exporter {

namespace {

const char* kInvalid = "return false;";

std::string plan_struct(const Family& f) {
  std::ostringstream o;
  o << "struct kfx_plan_t {\n  unsigned grid[3];\n  unsigned block[3];\n  unsigned smem;\n";
  for (size_t i = 0; i < f.kernel.args.size(); ++i) {
    const auto k = f.kernel.args[i].kind;
    if (k == ArgSpec::Kind::I32) o << "  int a" << i << ";\n";
    if (k == ArgSpec::Kind::I64) o << "  long long a" << i << ";\n";
    if (k == ArgSpec::Kind::F32) o << "  float a" << i << ";\n";
    if (k == ArgSpec::Kind::TensorMap) o << "  kfx_tensor_map_t t" << i << ";\n";
  }
  o << "};\n\n";
  return o.str();
}

std::string dim_range_checks(const Family& f) {
  std::ostringstream o;
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
  return o.str();
}

std::string specialization_checks(const KernelModel& m) {
  if (m.variant.specialization.empty()) return "";
  std::ostringstream o;
  o << "  // Specialized dims: baked into the kernel source.\n";
  for (const auto& [dim, v] : m.variant.specialization) {
    const std::string lit = is_string(v) ? cxx_string_literal(std::get<std::string>(v)) : cxx_int_literal(as_int(v));
    o << "  if (d_" << dim << " != " << lit << ") " << kInvalid << "\n";
  }
  return o.str();
}

std::string buffer_checks(const KernelModel& m, const PlanNames& names) {
  std::ostringstream o;
  o << "  // Buffer element types this launcher's pointer types were fixed to.\n";
  for (const auto& b : m.buffers) {
    CxxExpr e = names.translate(b.spec->dtype);
    if (e.type != CxxType::Str) throw ExprError("in '" + b.spec->dtype.text() + "': a buffer dtype must be a string");
    o << "  if (" << e.code << " != " << cxx_string_literal(b.dtype) << ") " << kInvalid << "\n";
    CxxExpr n = names.translate(b.spec->count);
    o << "  if (" << cxx_as_int(n) << " < 0 || kfx_bad) " << kInvalid << "  // " << b.name << ": "
      << b.spec->count.text() << " elements\n";
  }
  return o.str();
}

std::string constraint_checks(const Family& f, const PlanNames& names) {
  std::ostringstream o;
  if (!f.shape_constraints.empty()) o << "  // Shape constraints.\n";
  for (const Constraint& c : f.shape_constraints) {
    CxxExpr e = names.translate(c.expr);
    o << "  if (!" << cxx_as_bool(e, c.text) << " || kfx_bad) " << kInvalid << "  // " << c.text << "\n";
  }
  if (!f.constraints.empty()) o << "  // Family constraints.\n";
  for (const Constraint& c : f.constraints) {
    CxxExpr e = names.translate(c.expr);
    o << "  if (!" << cxx_as_bool(e, c.text) << " || kfx_bad) " << kInvalid << "  // " << c.text << "\n";
  }
  return o.str();
}

// Grid, block and dynamic shared memory, checked against CUDA's and the device's limits.
std::string launch_geometry(const Family& f, const PlanNames& names) {
  const auto as_int = [&](const Expr& e) { return cxx_as_int(names.translate(e)); };
  std::ostringstream o;
  o << "  // Launch geometry.\n";
  for (int i = 0; i < 3; ++i) {
    o << "  const long long g" << i << " = " << as_int(f.kernel.launch.grid[i]) << ";\n";
    o << "  const long long b" << i << " = " << as_int(f.kernel.launch.block[i]) << ";\n";
  }
  o << "  const long long smem = " << as_int(f.kernel.launch.smem) << ";\n";
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
  return o.str();
}

// i32, i64 and f32 arguments into p.a<i>; an i32 out of range rejects the shape.
std::string scalar_arguments(const Family& f, const PlanNames& names) {
  std::ostringstream o;
  bool first = true;
  for (size_t i = 0; i < f.kernel.args.size(); ++i) {
    const ArgSpec& a = f.kernel.args[i];
    if (a.kind == ArgSpec::Kind::Buffer || a.kind == ArgSpec::Kind::TensorMap) continue;
    if (first) o << "  // Scalar kernel arguments.\n";
    first = false;
    CxxExpr e = names.translate(a.value);
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
  return o.str();
}

// "e0, e1, ...": the extents as checked integers; a string extent is an ExprError.
std::string extents(const std::vector<Expr>& exprs, const PlanNames& names) {
  std::string out;
  for (const Expr& e : exprs) {
    const CxxExpr c = names.translate(e);
    if (c.type == CxxType::Str) throw ExprError("in '" + e.text() + "': a tensor map extent must be a number");
    out += (out.empty() ? "" : ", ") + cxx_as_int(c);
  }
  return out;
}

// Each tensor map's geometry for the shape, checked by kfx_tensor_map_plan into p.t<i>.
std::string tensor_map_plans(const KernelModel& m, const PlanNames& names) {
  const Family& f = *m.family;
  std::ostringstream o;
  bool first = true;
  for (size_t i = 0; i < f.kernel.args.size(); ++i) {
    const ArgSpec& a = f.kernel.args[i];
    if (a.kind != ArgSpec::Kind::TensorMap) continue;
    if (first) o << "  // Tensor maps: each buffer viewed as a packed tensor, innermost dim first.\n";
    first = false;
    const ExportBuffer& b = m.buffer(a.buffer);
    const std::string t = "t" + std::to_string(i);
    o << "  // Argument " << i << ": " << b.name << " (" << b.dtype << "), " << tensor_map_geometry(a) << ".\n";
    o << "  const long long " << t << "_dims[" << a.dims.size() << "] = {" << extents(a.dims, names) << "};\n";
    o << "  const long long " << t << "_box[" << a.box.size() << "] = {" << extents(a.box, names) << "};\n";
    o << "  const long long " << t << "_elems = " << cxx_as_int(names.translate(b.spec->count)) << ";  // "
      << b.spec->count.text() << "\n";
    o << "  if (kfx_bad || !kfx_tensor_map_plan(" << a.dims.size() << ", " << t << "_dims, " << t << "_box, "
      << dtype_size(dtype_from_string(b.dtype)) << ", " << a.swizzle << ", " << t << "_elems, p." << t << ")) "
      << kInvalid << "\n";
  }
  return o.str();
}

}  // namespace

std::string plan_function(const KernelModel& m) {
  const Family& f = *m.family;
  PlanNames names(m);
  std::ostringstream o;
  o << plan_struct(f) << "bool kfx_plan(";
  for (const DimSpec& d : f.dims) o << (d.is_enum ? "std::string_view d_" : "long long d_") << d.name << ", ";
  o << "const kforge_device_info& dev, kfx_plan_t& p) {\n";
  o << "  bool kfx_bad = false;\n  (void)dev;\n";
  o << dim_range_checks(f) << specialization_checks(m);
  if (!f.derived.empty()) o << "  // Derived values.\n" << derived_locals(f, names) << "  if (kfx_bad) " << kInvalid << "\n";
  o << buffer_checks(m, names) << constraint_checks(f, names) << launch_geometry(f, names)
    << scalar_arguments(f, names) << tensor_map_plans(m, names);
  o << "  return !kfx_bad;\n}\n";
  return o.str();
}

}  // namespace kf::exporter
