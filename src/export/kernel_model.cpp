#include "export/kernel_model.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "compile/compiler.hpp"
#include "export/dtype_names.hpp"
#include "family/tensor_map.hpp"
#include "util/hash.hpp"

namespace kf::exporter {

std::string ctype_of(const std::string& dtype) {
  if (const DtypeNames* n = dtype_names(dtype)) return n->ctype;
  throw std::runtime_error("export: unknown buffer dtype '" + dtype + "' (known: f16, bf16, f32, f64, i32)");
}

bool is_c_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

std::string c_identifier(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "k" + out;
  return out;
}

std::string short_shape(const Family& f, const Shape& s) {
  std::string out;
  for (const DimSpec& d : f.dims) {
    auto it = s.find(d.name);
    if (it == s.end()) continue;
    if (!out.empty()) out += '_';
    out += d.is_enum ? to_string(it->second) : d.name + to_string(it->second);
  }
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  return out;  // may start with a digit: it follows "<family>_"
}

std::string rename_identifier(const std::string& source, const std::string& from, const std::string& to) {
  const auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  out.reserve(source.size());
  size_t i = 0;
  while (i < source.size()) {
    if (source.compare(i, from.size(), from) == 0 && (i == 0 || !ident(source[i - 1])) &&
        (i + from.size() == source.size() || !ident(source[i + from.size()]))) {
      out += to;
      i += from.size();
    } else {
      out += source[i++];
    }
  }
  return out;
}

namespace {

// A tensor_map argument for the exported shape, checked by kforge's own rules (an export whose
// map kforge could not encode fails here, with the reason).
nlohmann::json tensor_map_entry(const ArgSpec& a, size_t index, const std::vector<ExportBuffer>& buffers,
                                const Scope& scope) {
  const ExportBuffer* eb = nullptr;
  for (const auto& x : buffers)
    if (x.name == a.buffer) eb = &x;
  if (!eb) throw std::runtime_error("export: tensor map argument names unknown buffer '" + a.buffer + "'");
  std::vector<int64_t> dims, box;
  nlohmann::json dims_expr = nlohmann::json::array(), box_expr = nlohmann::json::array();
  for (const Expr& e : a.dims) {
    dims.push_back(e.eval_int(scope));
    dims_expr.push_back(e.text());
  }
  for (const Expr& e : a.box) {
    box.push_back(e.eval_int(scope));
    box_expr.push_back(e.text());
  }
  const TensorMapGeometry g = tensor_map_geometry(tensor_map_what(index, a.buffer), dtype_from_string(eb->dtype),
                                                  static_cast<uint64_t>(std::max<int64_t>(eb->count, 0)), dims, box,
                                                  a.swizzle);
  return {{"kind", "tensor_map"},
          {"name", eb->name},
          {"dtype", eb->dtype},
          {"dims", dims},
          {"box", box},
          {"swizzle", a.swizzle},
          {"strides", std::vector<uint64_t>(g.strides.begin(), g.strides.begin() + (g.rank - 1))},
          {"dims_expr", dims_expr},
          {"box_expr", box_expr}};
}

}  // namespace

const ExportBuffer& KernelModel::buffer(const std::string& buffer_name) const {
  for (const auto& b : buffers)
    if (b.name == buffer_name) return b;
  throw std::runtime_error("export: kernel argument names unknown buffer '" + buffer_name + "'");
}

bool KernelModel::has_tensor_maps() const {
  for (const ArgSpec& a : family->kernel.args)
    if (a.kind == ArgSpec::Kind::TensorMap) return true;
  return false;
}

KernelModel make_kernel_model(const Family& f, const Config& c, const Shape& s, const std::string& name,
                              const std::string& base_arch, const DeviceLimits& limits,
                              const Assignment& defines) {
  KernelModel m;
  m.family = &f;
  m.name = name;
  m.config = c;
  m.shape = s;
  m.limits = limits;
  m.variant = render_variant(f, c, s, defines);
  const std::string original_entry = m.variant.entry;
  // Exported sources stand alone: no #line pointing into this machine's template folders.
  m.variant.source = rename_identifier(strip_line_directives(m.variant.source), original_entry, m.entry());
  if (m.variant.source.find(m.entry()) == std::string::npos)
    throw std::runtime_error("export: kernel entry '" + original_entry + "' not found in the rendered source");
  m.variant.entry = m.entry();
  // A new name for the new source: the cubin scratch cache is keyed by this hash.
  std::string key = m.variant.source + '\0' + m.variant.arch_suffix;
  for (const auto& o : m.variant.options) key += '\0' + o;
  m.variant.hash = content_hash(key);
  m.arch = target_arch_for(base_arch, m.variant.arch_suffix);  // ("sm_90a" stays sm_90a)

  const Scope scope = make_scope(f, c, s, limits);
  for (const BufferSpec& b : f.buffers) {
    ExportBuffer eb;
    eb.name = b.name;
    eb.dtype = b.dtype.eval_string(scope);
    eb.ctype = ctype_of(eb.dtype);
    eb.role = b.role;
    eb.count = b.count.eval_int(scope);
    eb.spec = &b;
    m.buffers.push_back(eb);
  }
  m.launch = resolve_launch(f.kernel.launch, scope);
  m.args = nlohmann::json::array();
  for (const ArgSpec& a : f.kernel.args) {
    switch (a.kind) {
      case ArgSpec::Kind::Buffer: {
        const ExportBuffer* eb = nullptr;
        for (const auto& x : m.buffers)
          if (x.name == a.buffer) eb = &x;
        if (!eb) throw std::runtime_error("export: kernel argument names unknown buffer '" + a.buffer + "'");
        m.args.push_back({{"kind", "buffer"}, {"name", eb->name}, {"dtype", eb->dtype}, {"count", eb->count}});
        break;
      }
      case ArgSpec::Kind::I32:
        m.args.push_back({{"kind", "i32"}, {"value", a.value.eval_int(scope)}, {"expr", a.value.text()}});
        break;
      case ArgSpec::Kind::I64:
        m.args.push_back({{"kind", "i64"}, {"value", a.value.eval_int(scope)}, {"expr", a.value.text()}});
        break;
      case ArgSpec::Kind::F32:
        m.args.push_back({{"kind", "f32"},
                          {"value", static_cast<double>(static_cast<float>(a.value.eval_double(scope)))},
                          {"expr", a.value.text()}});
        break;
      case ArgSpec::Kind::TensorMap:
        m.args.push_back(tensor_map_entry(a, m.args.size(), m.buffers, scope));
        break;
    }
  }
  return m;
}

}  // namespace kf::exporter
