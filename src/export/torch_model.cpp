#include "export/torch_model.hpp"

#include <cctype>
#include <set>
#include <stdexcept>

#include "export/dispatch_gen.hpp"
#include "export/dtype_names.hpp"
#include "export/launcher_abi.hpp"

namespace kf::exporter {

namespace {

[[noreturn]] void refuse(const std::string& why) { throw std::runtime_error("export --torch: " + why); }

std::string trimmed(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

// "B * H * S * D" -> {B, H, S, D} when every factor is an int dim; nullopt otherwise.
std::optional<std::vector<std::string>> dims_product(const Family& f, const std::string& count) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t star = count.find('*', start);
    const std::string factor = trimmed(count.substr(start, star == std::string::npos ? std::string::npos : star - start));
    const DimSpec* d = f.dim(factor);
    if (!d || d->is_enum) return std::nullopt;
    out.push_back(factor);
    if (star == std::string::npos) return out;
    start = star + 1;
  }
}

// A buffer's axes where its spec gives them ("axes": the same list at every exported shape, the factors of its
// count in some order); nullopt without "axes".
std::optional<std::vector<std::string>> declared_axes(const std::vector<KernelModel>& ks, const BufferSpec& b) {
  if (b.axes.text().empty()) return std::nullopt;
  const Family& f = *ks.front().family;
  std::optional<std::string> text;
  for (const auto& k : ks) {
    const Shape s = full_shape(f, k.shape);
    const std::string t = b.axes.eval_string(Scope(s.begin(), s.end()));
    if (text && *text != t)
      refuse("buffer " + b.name + " has axes '" + *text + "' at one exported shape and '" + t +
             "' at another: export them as two ops");
    text = t;
  }
  std::string joined;
  for (char c : *text) joined += c == ',' ? '*' : c;
  auto axes = dims_product(f, joined);
  auto factors = dims_product(f, b.count.text());
  if (!axes) refuse("buffer " + b.name + "'s axes '" + *text + "' are not int dims separated by commas");
  if (!factors || std::multiset<std::string>(axes->begin(), axes->end()) !=
                      std::multiset<std::string>(factors->begin(), factors->end()))
    refuse("buffer " + b.name + "'s axes '" + *text + "' are not the factors of its count '" + b.count.text() + "'");
  return axes;
}

// 'f16' or "f16" -> f16; an enum dim's name -> that name with is_dim set.
std::string dtype_of(const Family& f, const BufferSpec& b, bool& is_dim) {
  const std::string t = trimmed(b.dtype.text());
  is_dim = false;
  if (t.size() >= 2 && (t.front() == '\'' || t.front() == '"') && t.back() == t.front()) {
    const std::string lit = t.substr(1, t.size() - 2);
    if (aten_scalar_type(lit).empty()) refuse("buffer " + b.name + " has dtype '" + lit + "', which torch has no type for");
    return lit;
  }
  const DimSpec* d = f.dim(t);
  if (!d || !d->is_enum)
    refuse("buffer " + b.name + "'s dtype '" + t + "' is neither a literal nor an enum dim: the op cannot tell its type");
  is_dim = true;
  return t;
}

std::string schema_default(const DimSpec& d, const Value& v, bool is_bool) {
  if (d.is_enum) return "\"" + to_string(v) + "\"";
  if (is_bool) return as_int(v) ? "True" : "False";
  return std::to_string(as_int(v));
}

std::string pointer_type_for(const std::vector<KernelModel>& ks, size_t i) {
  if (ks.size() > 1) return dispatch_pointer_type(ks, i);
  const ExportBuffer& b = ks.front().buffers[i];
  return header_pointer_type(b.ctype, b.is_const());
}

}  // namespace

std::string aten_scalar_type(const std::string& dtype) {
  const DtypeNames* n = dtype_names(dtype);
  return n ? n->aten : "";
}

std::string python_dtype(const std::string& dtype) {
  const DtypeNames* n = dtype_names(dtype);
  return n ? n->python : "";
}

const TorchTensor* TorchOpModel::first_input() const {
  for (const auto& t : buffers)
    if (t.role == BufferRole::Input) return &t;
  return nullptr;
}

namespace {

// An enum dim that gives a tensor's dtype must name a dtype torch has with each of its values.
void check_dtype_choices(const DimSpec& d) {
  for (const auto& c : d.choices)
    if (aten_scalar_type(c).empty()) refuse("enum dim " + d.name + " gives a dtype but has value '" + c + "'");
}

// Buffer i of the kernels as the op sees it: its dtype, and the shape an input or output has.
TorchTensor torch_tensor(const std::vector<KernelModel>& ks, size_t i) {
  const Family& f = *ks.front().family;
  const BufferSpec& b = *ks.front().buffers[i].spec;
  TorchTensor t;
  t.name = b.name;
  t.role = b.role;
  t.pointer_type = pointer_type_for(ks, i);
  bool is_dim = false;
  const std::string dt = dtype_of(f, b, is_dim);
  (is_dim ? t.dtype_dim : t.dtype) = dt;
  if (b.role != BufferRole::Scratch) {
    auto dims = declared_axes(ks, b);
    if (!dims) dims = dims_product(f, b.count.text());
    if (!dims)
      refuse("buffer " + b.name + " has " + b.count.text() +
             " elements: the op needs each input and output shaped by a product of int dims (as 'B * H * S * D')");
    t.dims = *dims;
  }
  return t;
}

// Where the op gets dim d: an input's dtype or axis, else an argument (then one more name in
// `arguments`, which must stay unique).
TorchDim torch_dim(const DimSpec& d, const TorchOpModel& m, const Shape& exported, std::set<std::string>& arguments) {
  TorchDim td;
  td.spec = &d;
  for (const auto& t : m.buffers) {
    if (t.role != BufferRole::Input) continue;
    if (d.is_enum && t.dtype_dim == d.name) {
      check_dtype_choices(d);
      td.source = TorchDim::Source::InputDtype;
      td.tensor = t.name;
      break;
    }
    for (size_t a = 0; !d.is_enum && a < t.dims.size(); ++a)
      if (t.dims[a] == d.name) {
        td.source = TorchDim::Source::InputAxis;
        td.tensor = t.name;
        td.axis = static_cast<int>(a);
        break;
      }
    if (td.source != TorchDim::Source::Argument) break;
  }
  if (td.source == TorchDim::Source::Argument) {
    td.is_bool = !d.is_enum && d.min == 0 && d.max == 1;
    td.default_value = schema_default(d, exported.at(d.name), td.is_bool);
    if (!arguments.insert(d.name).second) refuse("dim " + d.name + " and a buffer would be two arguments of one name");
  }
  return td;
}

// "op(Tensor Q, ..., bool causal=False) -> Tensor": inputs, then the dims taken as arguments.
std::string op_schema(const TorchOpModel& m, const std::string& family) {
  std::string args, outs;
  int outputs = 0;
  for (const auto& t : m.buffers)
    if (t.role == BufferRole::Input) args += (args.empty() ? "" : ", ") + std::string("Tensor ") + t.name;
  for (const auto& d : m.dims) {
    if (d.source != TorchDim::Source::Argument) continue;
    const std::string type = d.spec->is_enum ? "str" : d.is_bool ? "bool" : "int";
    args += ", " + type + " " + d.spec->name + "=" + d.default_value;
  }
  for (const auto& t : m.buffers)
    if (t.role == BufferRole::Output) {
      outs += (outs.empty() ? "" : ", ") + std::string("Tensor");
      ++outputs;
    }
  if (outputs == 0) refuse("family " + family + " has no output buffer");
  return m.op + "(" + args + ") -> " + (outputs == 1 ? outs : "(" + outs + ")");
}

}  // namespace

TorchOpModel make_torch_op_model(const std::string& op, const std::string& launcher, const std::vector<KernelModel>& ks) {
  const KernelModel& k0 = ks.front();
  const Family& f = *k0.family;
  TorchOpModel m;
  m.op = op;
  m.launcher = launcher;
  for (size_t i = 0; i < k0.buffers.size(); ++i) {
    m.buffers.push_back(torch_tensor(ks, i));
    if (m.buffers.back().role == BufferRole::Scratch) ++m.scratch_count;
  }
  if (!m.first_input()) refuse("family " + f.name + " has no input buffer");

  std::set<std::string> arguments;  // the schema's names: inputs, then dims taken as arguments
  for (const auto& t : m.buffers)
    if (t.role == BufferRole::Input) arguments.insert(t.name);
  const Shape exported = full_shape(f, k0.shape);
  for (const DimSpec& d : f.dims) m.dims.push_back(torch_dim(d, m, exported, arguments));
  // An output typed by a dim the caller passes: every value the caller may pass must be a dtype.
  for (const auto& t : m.buffers)
    if (t.role == BufferRole::Output && !t.dtype_dim.empty())
      for (const auto& d : m.dims)
        if (d.spec->name == t.dtype_dim && d.source == TorchDim::Source::Argument) check_dtype_choices(*d.spec);
  m.schema = op_schema(m, f.name);
  return m;
}

}  // namespace kf::exporter
