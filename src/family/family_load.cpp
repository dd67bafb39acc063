// Loading a family spec (docs/family_spec.md): parse the JSON, check every field, and report
// the first problem as "<file>:<json pointer>: <problem>".
#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "family/checks.hpp"
#include "util/hash.hpp"

namespace kf {

namespace fs = std::filesystem;

namespace {

// Ordered, because the order of params (enumeration) and derived (evaluation) matters.
using Json = nlohmann::ordered_json;

const std::set<std::string> kDtypes = {"f16", "bf16", "f32", "i32"};

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; });
}

// Categorical values become part of #define names (KF_MMA_WMMA), so they must be name-like.
bool is_define_suffix(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; });
}

std::string child(const std::string& ptr, const std::string& key) {
  std::string escaped;
  for (char ch : key) {
    if (ch == '~') escaped += "~0";
    else if (ch == '/') escaped += "~1";
    else escaped += ch;
  }
  return ptr + "/" + escaped;
}
std::string child(const std::string& ptr, size_t index) { return ptr + "/" + std::to_string(index); }

std::string type_name(const Json& j) {
  if (j.is_number_integer()) return "an integer";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_boolean()) return "a boolean";
  if (j.is_null()) return "null";
  if (j.is_array()) return "a list";
  return "an object";
}

// The names an expression may read, in the order they become visible.
class Names {
 public:
  void add(const std::string& n) {
    if (set_.insert(n).second) order_.push_back(n);
  }
  bool has(const std::string& n) const { return set_.count(n) != 0; }
  std::string list() const { return order_.empty() ? "none" : detail::join(order_); }

 private:
  std::set<std::string> set_;
  std::vector<std::string> order_;
};

class Loader {
 public:
  explicit Loader(const fs::path& spec_path) : file_(spec_path.string()) {
    f_.spec_path = fs::absolute(spec_path).lexically_normal();
    dir_ = f_.spec_path.parent_path();
  }

  Family load() {
    const std::string bytes = read_file();
    f_.spec_hash = content_hash(bytes);
    Json root;
    try {
      root = Json::parse(bytes);
    } catch (const Json::parse_error& e) {
      std::string what = e.what();
      // Drop nlohmann's "[json.exception.parse_error.101] " prefix; keep line and column.
      if (auto close = what.find("] "); what.rfind("[json.exception", 0) == 0 && close != std::string::npos)
        what = what.substr(close + 2);
      throw SpecError(file_ + ": invalid JSON: " + cut_short(what));
    }
    if (!root.is_object()) fail("", "expected a JSON object at the top level, got " + type_name(root));
    check_keys(root, "",
               {"name", "description", "template", "entry", "include_dirs", "compile_options", "arch_suffix",
                "params", "priors", "defaults", "derived", "constraints", "dims", "specialize", "suites", "gate",
                "buffers", "args", "launch", "reference", "tolerance", "cost", "sanitize"});

    load_header(root);
    load_params(required(root, "", "params"));
    if (root.contains("priors")) load_priors(root["priors"]);
    load_dims(required(root, "", "dims"));
    if (root.contains("specialize")) load_specialize(root["specialize"]);
    if (root.contains("derived")) load_derived(root["derived"]);
    if (root.contains("constraints")) load_constraints(root["constraints"]);
    if (root.contains("arch_suffix")) load_arch_suffix(root["arch_suffix"]);
    if (root.contains("sanitize")) {
      if (!root["sanitize"].is_boolean()) fail("/sanitize", "expected true or false, got " + type_name(root["sanitize"]));
      f_.sanitize = root["sanitize"].get<bool>();
    }
    if (root.contains("defaults")) load_defaults(root["defaults"]);
    if (root.contains("suites")) load_suites(root["suites"]);
    if (root.contains("gate")) load_gate(root["gate"]);
    load_buffers(required(root, "", "buffers"));
    f_.kernel.template_path = template_path(root, "");
    f_.kernel.entry = entry_name(root, "");
    f_.kernel.args = load_args(required(root, "", "args"), "/args", all_names_);
    f_.kernel.launch = load_launch(required(root, "", "launch"), "/launch", all_names_);
    load_reference(required(root, "", "reference"));
    load_tolerance(required(root, "", "tolerance"));
    load_cost(required(root, "", "cost"));
    return std::move(f_);
  }

 private:
  [[noreturn]] void fail(const std::string& ptr, const std::string& problem) const {
    throw SpecError(file_ + (ptr.empty() ? "" : ":" + ptr) + ": " + cut_short(problem));
  }
  // A problem quotes what the spec says, which may be a 40 KB string: the error stays readable.
  static std::string cut_short(const std::string& problem) {
    constexpr size_t kMax = 400;
    return problem.size() <= kMax ? problem : problem.substr(0, kMax) + "... (cut short)";
  }

  std::string read_file() {
    std::ifstream in(f_.spec_path, std::ios::binary);
    if (!in) throw SpecError(file_ + ": cannot read the spec file");
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // Unknown fields are typos more often than not. Keys starting with '_' or '$' are comments.
  void check_keys(const Json& obj, const std::string& ptr, std::initializer_list<const char*> known) const {
    for (const auto& [key, value] : obj.items()) {
      if (!key.empty() && (key[0] == '_' || key[0] == '$')) continue;
      if (std::none_of(known.begin(), known.end(), [&](const char* k) { return key == k; })) {
        std::vector<std::string> names(known.begin(), known.end());
        fail(child(ptr, key), "unknown field '" + key + "' (known: " + detail::join(names) + ")");
      }
    }
  }

  const Json& required(const Json& obj, const std::string& ptr, const char* key) const {
    if (!obj.contains(key)) fail(ptr.empty() ? "/" + std::string(key) : ptr, std::string("missing field '") + key + "'");
    return obj[key];
  }

  const Json& object(const Json& j, const std::string& ptr) const {
    if (!j.is_object()) fail(ptr, "expected an object, got " + type_name(j));
    return j;
  }
  const Json& list(const Json& j, const std::string& ptr, bool non_empty = false) const {
    if (!j.is_array() || (non_empty && j.empty()))
      fail(ptr, std::string("expected a ") + (non_empty ? "non-empty " : "") + "list, got " +
                    (j.is_array() ? "an empty list" : type_name(j)));
    return j;
  }
  std::string string(const Json& j, const std::string& ptr, bool non_empty = true) const {
    if (!j.is_string()) fail(ptr, "expected a string, got " + type_name(j));
    std::string s = j.get<std::string>();
    if (non_empty && s.empty()) fail(ptr, "expected a non-empty string");
    return s;
  }
  double number(const Json& j, const std::string& ptr) const {
    if (!j.is_number()) fail(ptr, "expected a number, got " + type_name(j));
    return j.get<double>();
  }
  int64_t integer(const Json& j, const std::string& ptr) const {
    if (!j.is_number_integer() || (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t{INT64_MAX}))
      fail(ptr, "expected an integer, got " + (j.is_number() ? j.dump() : type_name(j)));
    return j.get<int64_t>();
  }
  std::string identifier(const Json& j, const std::string& ptr, const char* what) const {
    std::string s = string(j, ptr);
    if (!is_identifier(s)) fail(ptr, std::string(what) + " '" + s + "' is not a valid name (letters, digits, '_')");
    return s;
  }

  // An expression: a string (or a plain number, for convenience) that parses and reads only
  // names in `known`.
  Expr expr(const Json& j, const std::string& ptr, const Names& known) const {
    std::string text;
    if (j.is_string()) text = j.get<std::string>();
    else if (j.is_number()) text = j.dump();
    else fail(ptr, "expected an expression (a string), got " + type_name(j));
    Expr e;
    try {
      e = Expr::parse(text);
    } catch (const ExprError& err) {
      fail(ptr, err.what());
    }
    for (const auto& name : e.identifiers())
      if (!known.has(name)) fail(ptr, "unknown name '" + name + "' in '" + text + "' (known: " + known.list() + ")");
    return e;
  }

  fs::path existing_file(const Json& j, const std::string& ptr) const {
    const std::string rel = string(j, ptr);
    const fs::path p = (dir_ / rel).lexically_normal();
    if (!fs::is_regular_file(p)) fail(ptr, "file not found: " + p.string());
    return p;
  }

  // ---- top-level fields ----------------------------------------------------------------------

  void load_header(const Json& root) {
    const std::string name = string(required(root, "", "name"), "/name");
    const std::string stem = fs::path(file_).stem().string();
    if (name != stem) fail("/name", "name '" + name + "' must equal the file name without .json ('" + stem + "')");
    f_.name = name;
    if (root.contains("description")) f_.description = string(root["description"], "/description", false);
    if (root.contains("include_dirs")) {
      const Json& dirs = list(root["include_dirs"], "/include_dirs");
      for (size_t i = 0; i < dirs.size(); ++i) {
        const fs::path p = (dir_ / string(dirs[i], child("/include_dirs", i))).lexically_normal();
        if (!fs::is_directory(p)) fail(child("/include_dirs", i), "directory not found: " + p.string());
        f_.include_dirs.push_back(p);
      }
    }
    if (root.contains("compile_options")) {
      const Json& opts = list(root["compile_options"], "/compile_options");
      for (size_t i = 0; i < opts.size(); ++i) f_.compile_options.push_back(string(opts[i], child("/compile_options", i)));
    }
    device_names_.clear();
    Scope device_scope;
    DeviceLimits{}.add_to(device_scope);
    for (const auto& [n, v] : device_scope) device_names_.push_back(n);
  }

  fs::path template_path(const Json& obj, const std::string& ptr) const {
    return existing_file(required(obj, ptr, "template"), ptr + "/template");
  }
  std::string entry_name(const Json& obj, const std::string& ptr) const {
    return identifier(required(obj, ptr, "entry"), ptr + "/entry", "entry");
  }

  void load_params(const Json& params) {
    object(params, "/params");
    if (params.empty()) fail("/params", "expected at least one parameter");
    for (const auto& [name, values] : params.items()) {
      const std::string ptr = child("/params", name);
      if (!is_identifier(name)) fail(ptr, "parameter name '" + name + "' is not a valid name (letters, digits, '_')");
      if (!values.is_array() || values.empty()) fail(ptr, "expected a non-empty list of ints or strings");
      ParamSpec p{name, {}};
      const bool strings = values[0].is_string();
      for (size_t i = 0; i < values.size(); ++i) {
        const Json& v = values[i];
        const std::string vptr = child(ptr, i);
        if (strings) {
          if (!v.is_string()) fail(vptr, "expected a string like the other values, got " + type_name(v));
          const std::string s = v.get<std::string>();
          if (!is_define_suffix(s)) fail(vptr, "value '" + s + "' must be letters, digits and '_' (it becomes a #define)");
          p.values.emplace_back(s);
        } else {
          if (!v.is_number_integer()) fail(vptr, "expected an int like the other values, got " + type_name(v));
          p.values.emplace_back(integer(v, vptr));
        }
        if (std::count(p.values.begin(), p.values.end(), p.values.back()) > 1)
          fail(vptr, "value " + to_string(p.values.back()) + " is listed twice");
      }
      f_.params.push_back(std::move(p));
      names_.add(name);
    }
  }

  // "priors": {"MMA": {"simt": 0, "wmma": 0.2}}: a weight per value (others 1); 0 means the
  // value is tried only after every other one (docs/family_spec.md).
  void load_priors(const Json& priors) {
    object(priors, "/priors");
    for (const auto& [name, weights] : priors.items()) {
      const std::string ptr = child("/priors", name);
      auto it = std::find_if(f_.params.begin(), f_.params.end(), [&](const ParamSpec& p) { return p.name == name; });
      if (it == f_.params.end()) fail(ptr, "unknown parameter '" + name + "'");
      object(weights, ptr);
      it->weights.assign(it->values.size(), 1.0);
      for (const auto& [value, weight] : weights.items()) {
        const std::string vptr = child(ptr, value);
        size_t k = 0;
        while (k < it->values.size() && to_string(it->values[k]) != value) ++k;
        if (k == it->values.size()) fail(vptr, "'" + value + "' is not a value of '" + name + "'");
        const double w = number(weight, vptr);
        if (!(w >= 0) || !std::isfinite(w)) fail(vptr, "a prior weight must be a finite number >= 0");
        it->weights[k] = w;
      }
      if (std::all_of(it->weights.begin(), it->weights.end(), [](double w) { return w == 0; }))
        fail(ptr, "every value of '" + name + "' has weight 0: at least one must be positive");
    }
  }

  void load_dims(const Json& dims) {
    object(dims, "/dims");
    if (dims.empty()) fail("/dims", "expected at least one dimension");
    for (const auto& [name, spec] : dims.items()) {
      const std::string ptr = child("/dims", name);
      if (!is_identifier(name)) fail(ptr, "dimension name '" + name + "' is not a valid name (letters, digits, '_')");
      if (f_.param(name)) fail(ptr, "dimension '" + name + "' has the name of a parameter");
      object(spec, ptr);
      check_keys(spec, ptr, {"type", "min", "max", "values", "doc"});
      DimSpec d;
      d.name = name;
      const std::string type = string(required(spec, ptr, "type"), ptr + "/type");
      if (spec.contains("doc")) d.doc = string(spec["doc"], ptr + "/doc", false);
      if (type == "int") {
        if (spec.contains("values")) fail(ptr + "/values", "an int dimension takes min and max, not values");
        if (spec.contains("min")) d.min = integer(spec["min"], ptr + "/min");
        if (spec.contains("max")) d.max = integer(spec["max"], ptr + "/max");
        if (d.min > d.max) fail(ptr, "min " + std::to_string(d.min) + " is greater than max " + std::to_string(d.max));
      } else if (type == "enum") {
        d.is_enum = true;
        for (const char* k : {"min", "max"})
          if (spec.contains(k)) fail(ptr + "/" + k, "an enum dimension takes values, not min and max");
        const Json& values = required(spec, ptr, "values");
        if (!values.is_array() || values.empty()) fail(ptr + "/values", "expected a non-empty list of strings");
        for (size_t i = 0; i < values.size(); ++i) {
          const std::string s = string(values[i], child(ptr + "/values", i));
          if (!is_define_suffix(s))
            fail(child(ptr + "/values", i), "value '" + s + "' must be letters, digits and '_' (it becomes a #define)");
          if (std::find(d.choices.begin(), d.choices.end(), s) != d.choices.end())
            fail(child(ptr + "/values", i), "value '" + s + "' is listed twice");
          d.choices.push_back(s);
        }
      } else {
        fail(ptr + "/type", "type must be \"int\" or \"enum\", got '" + type + "'");
      }
      f_.dims.push_back(std::move(d));
      names_.add(name);
      dim_names_.add(name);
    }
  }

  void load_specialize(const Json& spec) {
    list(spec, "/specialize");
    for (size_t i = 0; i < spec.size(); ++i) {
      const std::string ptr = child("/specialize", i);
      const std::string name = string(spec[i], ptr);
      if (!f_.dim(name)) fail(ptr, "unknown dimension '" + name + "' (dimensions: " + dim_names_.list() + ")");
      if (std::find(f_.specialize.begin(), f_.specialize.end(), name) != f_.specialize.end())
        fail(ptr, "dimension '" + name + "' is listed twice");
      f_.specialize.push_back(name);
    }
  }

  void load_derived(const Json& derived) {
    object(derived, "/derived");
    for (const auto& [name, text] : derived.items()) {
      const std::string ptr = child("/derived", name);
      if (!is_identifier(name)) fail(ptr, "derived name '" + name + "' is not a valid name (letters, digits, '_')");
      if (names_.has(name)) fail(ptr, "derived name '" + name + "' is already a parameter, dimension or derived name");
      // Visible: params, dims, device.* and the derived names above this one.
      Names known = names_;
      for (const auto& d : device_names_) known.add(d);
      f_.derived.push_back({name, expr(text, ptr, known)});
      names_.add(name);
    }
  }

  void load_constraints(const Json& constraints) {
    list(constraints, "/constraints");
    for (size_t i = 0; i < constraints.size(); ++i) {
      Expr e = expr(constraints[i], child("/constraints", i), known_all());
      f_.constraints.push_back({e.text(), e});
    }
  }

  void load_arch_suffix(const Json& j) {
    // Rendering knows the config and the shape but not the device: params and dims only.
    f_.arch_suffix = expr(j, "/arch_suffix", params_and_dims());
  }

  void load_defaults(const Json& defaults) {
    list(defaults, "/defaults");
    for (size_t i = 0; i < defaults.size(); ++i) {
      const std::string ptr = child("/defaults", i);
      const Config c = assignment(defaults[i], ptr);
      try {
        f_.defaults.push_back(detail::check_config(f_, c));
      } catch (const SpecError& e) {
        fail(ptr, e.what());
      }
    }
  }

  void load_suites(const Json& suites) {
    object(suites, "/suites");
    for (const auto& [name, shapes] : suites.items()) {
      const std::string ptr = child("/suites", name);
      list(shapes, ptr, true);
      std::vector<Shape> out;
      for (size_t i = 0; i < shapes.size(); ++i) {
        const Shape s = assignment(shapes[i], child(ptr, i));
        try {
          out.push_back(detail::check_shape(f_, s));
        } catch (const SpecError& e) {
          fail(child(ptr, i), e.what());
        }
      }
      f_.suites.emplace(name, std::move(out));
    }
  }

  void load_gate(const Json& gate) {
    list(gate, "/gate");
    for (size_t i = 0; i < gate.size(); ++i) {
      const std::string ptr = child("/gate", i);
      object(gate[i], ptr);
      check_keys(gate[i], ptr, {"name", "override", "input_scale"});
      GateCase g;
      g.name = identifier(required(gate[i], ptr, "name"), ptr + "/name", "gate case name");
      for (const auto& other : f_.gate)
        if (other.name == g.name) fail(ptr + "/name", "gate case '" + g.name + "' is defined twice");
      if (gate[i].contains("override")) {
        const Shape over = assignment(gate[i]["override"], ptr + "/override");
        for (const auto& [dim, value] : over) {
          const std::string dptr = child(ptr + "/override", dim);
          const DimSpec* d = f_.dim(dim);
          if (!d) fail(dptr, "unknown dimension '" + dim + "' (dimensions: " + dim_names_.list() + ")");
          if (std::find(f_.specialize.begin(), f_.specialize.end(), dim) != f_.specialize.end())
            fail(dptr, "a gate case may not override the specialized dimension '" + dim + "'");
          try {
            g.overrides[dim] = detail::check_dim_value(*d, value);
          } catch (const SpecError& e) {
            fail(dptr, e.what());
          }
        }
      }
      if (gate[i].contains("input_scale")) {
        g.input_scale = number(gate[i]["input_scale"], ptr + "/input_scale");
        if (!(g.input_scale > 0)) fail(ptr + "/input_scale", "input_scale must be positive");
      }
      f_.gate.push_back(std::move(g));
    }
  }

  void load_buffers(const Json& buffers) {
    list(buffers, "/buffers", true);
    bool has_output = false;
    for (size_t i = 0; i < buffers.size(); ++i) {
      const std::string ptr = child("/buffers", i);
      const Json& b = object(buffers[i], ptr);
      check_keys(b, ptr, {"name", "dtype", "count", "role", "init"});
      BufferSpec buf;
      buf.name = identifier(required(b, ptr, "name"), ptr + "/name", "buffer name");
      if (f_.buffer(buf.name)) fail(ptr + "/name", "buffer '" + buf.name + "' is defined twice");
      buf.dtype = expr(required(b, ptr, "dtype"), ptr + "/dtype", known_all());
      if (buf.dtype.identifiers().empty()) {  // a constant: check it now
        std::string dtype;
        try {
          dtype = buf.dtype.eval_string({});
        } catch (const ExprError& e) {
          fail(ptr + "/dtype", e.what());
        }
        if (!kDtypes.count(dtype))
          fail(ptr + "/dtype", "dtype '" + dtype + "' is not one of f16, bf16, f32, i32 (a string needs quotes: \"'f16'\")");
      }
      buf.count = expr(required(b, ptr, "count"), ptr + "/count", known_all());
      const std::string role = string(required(b, ptr, "role"), ptr + "/role");
      if (role == "input") buf.role = BufferRole::Input;
      else if (role == "output") buf.role = BufferRole::Output;
      else if (role == "scratch") buf.role = BufferRole::Scratch;
      else fail(ptr + "/role", "role must be \"input\", \"output\" or \"scratch\", got '" + role + "'");
      has_output = has_output || buf.role == BufferRole::Output;
      if (b.contains("init")) {
        if (buf.role != BufferRole::Input) fail(ptr + "/init", "only input buffers take an init range");
        const Json& init = object(b["init"], ptr + "/init");
        check_keys(init, ptr + "/init", {"lo", "hi"});
        if (init.contains("lo")) buf.init.lo = number(init["lo"], ptr + "/init/lo");
        if (init.contains("hi")) buf.init.hi = number(init["hi"], ptr + "/init/hi");
        if (!(buf.init.lo < buf.init.hi)) fail(ptr + "/init", "lo must be less than hi");
      }
      f_.buffers.push_back(std::move(buf));
    }
    if (!has_output) fail("/buffers", "no buffer has role \"output\": the gate would compare nothing");
  }

  // The name of a buffer the family defines.
  std::string buffer_name(const Json& j, const std::string& ptr) const {
    const std::string name = string(j, ptr);
    if (!f_.buffer(name)) {
      std::vector<std::string> names;
      for (const auto& b : f_.buffers) names.push_back(b.name);
      fail(ptr, "unknown buffer '" + name + "' (buffers: " + detail::join(names) + ")");
    }
    return name;
  }

  // {"tensor_map": BUFFER, "dims": [...], "box": [...], "swizzle": 0|32|64|128}. The limits that
  // need values (box sizes, alignment, the buffer's size) are checked when the map is encoded.
  ArgSpec load_tensor_map(const Json& a, const std::string& aptr, const Names& known) const {
    check_keys(a, aptr, {"tensor_map", "dims", "box", "swizzle"});
    ArgSpec arg;
    arg.kind = ArgSpec::Kind::TensorMap;
    arg.buffer = buffer_name(a["tensor_map"], aptr + "/tensor_map");
    const Json& dims = required(a, aptr, "dims");
    if (!dims.is_array() || dims.empty() || dims.size() > 5)
      fail(aptr + "/dims", "expected a list of 1 to 5 expressions (innermost dimension first)");
    for (size_t d = 0; d < dims.size(); ++d) arg.dims.push_back(expr(dims[d], child(aptr + "/dims", d), known));
    const Json& box = required(a, aptr, "box");
    if (!box.is_array() || box.size() != dims.size())
      fail(aptr + "/box", "expected a list of one expression per entry of dims (" + std::to_string(dims.size()) +
                              "), got " + (box.is_array() ? std::to_string(box.size()) : type_name(box)));
    for (size_t d = 0; d < box.size(); ++d) arg.box.push_back(expr(box[d], child(aptr + "/box", d), known));
    if (a.contains("swizzle")) {
      const int64_t s = integer(a["swizzle"], aptr + "/swizzle");
      if (s != 0 && s != 32 && s != 64 && s != 128)
        fail(aptr + "/swizzle", "swizzle must be 0, 32, 64 or 128 (bytes), got " + std::to_string(s));
      arg.swizzle = static_cast<int>(s);
    }
    return arg;
  }

  std::vector<ArgSpec> load_args(const Json& args, const std::string& ptr, const Names& known) const {
    list(args, ptr, true);
    std::vector<ArgSpec> out;
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string aptr = child(ptr, i);
      const Json& a = object(args[i], aptr);
      if (a.contains("tensor_map")) {
        out.push_back(load_tensor_map(a, aptr, known));
        continue;
      }
      if (a.size() != 1) fail(aptr, "expected exactly one of \"buffer\", \"i32\", \"i64\", \"f32\", \"tensor_map\"");
      check_keys(a, aptr, {"buffer", "i32", "i64", "f32", "tensor_map"});
      // Copies out of the iterator: items()'s proxy is a temporary, a reference into it would dangle.
      const std::string kind = a.begin().key();
      const Json& value = a.begin().value();
      ArgSpec arg;
      if (kind == "buffer") {
        arg.kind = ArgSpec::Kind::Buffer;
        arg.buffer = buffer_name(value, aptr + "/buffer");
      } else {
        arg.kind = kind == "i32" ? ArgSpec::Kind::I32 : kind == "i64" ? ArgSpec::Kind::I64 : ArgSpec::Kind::F32;
        arg.value = expr(value, child(aptr, kind), known);
      }
      out.push_back(std::move(arg));
    }
    return out;
  }

  LaunchSpec load_launch(const Json& launch, const std::string& ptr, const Names& known) const {
    object(launch, ptr);
    check_keys(launch, ptr, {"grid", "block", "smem"});
    LaunchSpec l;
    for (const char* key : {"grid", "block"}) {
      const std::string kptr = ptr + "/" + key;
      const Json& dims = required(launch, ptr, key);
      if (!dims.is_array() || dims.empty() || dims.size() > 3) fail(kptr, "expected a list of 1 to 3 expressions");
      auto& target = std::string(key) == "grid" ? l.grid : l.block;
      for (size_t i = 0; i < 3; ++i) target[i] = i < dims.size() ? expr(dims[i], child(kptr, i), known) : Expr::parse("1");
    }
    l.smem = launch.contains("smem") ? expr(launch["smem"], ptr + "/smem", known) : Expr::parse("0");
    return l;
  }

  void load_reference(const Json& ref) {
    object(ref, "/reference");
    check_keys(ref, "/reference", {"template", "entry", "args", "launch"});
    // The reference does not depend on the config: dims and device.* only.
    Names known = dim_names_;
    for (const auto& d : device_names_) known.add(d);
    f_.reference.template_path = template_path(ref, "/reference");
    f_.reference.entry = entry_name(ref, "/reference");
    f_.reference.args = load_args(required(ref, "/reference", "args"), "/reference/args", known);
    f_.reference.launch = load_launch(required(ref, "/reference", "launch"), "/reference/launch", known);
  }

  void load_tolerance(const Json& tol) {
    object(tol, "/tolerance");
    const DimSpec* dtype = f_.dim("dtype");
    const std::vector<std::string> dtypes = dtype && dtype->is_enum ? dtype->choices : std::vector<std::string>{};
    for (const auto& [key, value] : tol.items()) {
      const std::string ptr = child("/tolerance", key);
      if (key != "default" && std::find(dtypes.begin(), dtypes.end(), key) == dtypes.end())
        fail(ptr, "key '" + key + "' is neither \"default\" nor a value of the dimension dtype (" +
                      (dtypes.empty() ? std::string("none") : detail::join(dtypes)) + ")");
      object(value, ptr);
      check_keys(value, ptr, {"max_abs", "rel_l2"});
      Tolerance t;
      t.max_abs = number(required(value, ptr, "max_abs"), ptr + "/max_abs");
      t.rel_l2 = number(required(value, ptr, "rel_l2"), ptr + "/rel_l2");
      if (t.max_abs < 0) fail(ptr + "/max_abs", "must not be negative");
      if (t.rel_l2 < 0) fail(ptr + "/rel_l2", "must not be negative");
      f_.tolerance.emplace(key, t);
    }
    if (!f_.tolerance.count("default")) {
      if (dtypes.empty()) fail("/tolerance", "needs a \"default\" entry (the family has no enum dimension dtype)");
      for (const auto& d : dtypes)
        if (!f_.tolerance.count(d)) fail("/tolerance", "no entry for dtype '" + d + "' and no \"default\"");
    }
  }

  void load_cost(const Json& cost) {
    object(cost, "/cost");
    check_keys(cost, "/cost", {"flops", "bytes"});
    f_.flops = expr(required(cost, "/cost", "flops"), "/cost/flops", known_all());
    f_.bytes = expr(required(cost, "/cost", "bytes"), "/cost/bytes", known_all());
  }

  // ---- helpers over the family built so far ---------------------------------------------------

  // Everything the kernel's expressions may read; set once the derived names are known.
  const Names& known_all() {
    if (!all_names_ready_) {
      all_names_ = names_;
      for (const auto& d : device_names_) all_names_.add(d);
      all_names_ready_ = true;
    }
    return all_names_;
  }

  Names params_and_dims() const {
    Names n;
    for (const auto& p : f_.params) n.add(p.name);
    for (const auto& d : f_.dims) n.add(d.name);
    return n;
  }

  Assignment assignment(const Json& j, const std::string& ptr) const {
    object(j, ptr);
    Assignment a;
    for (const auto& [name, value] : j.items()) {
      const std::string vptr = child(ptr, name);
      if (value.is_string()) a[name] = value.get<std::string>();
      else if (value.is_number_integer()) a[name] = integer(value, vptr);
      else fail(vptr, "expected an int or a string, got " + type_name(value));
    }
    return a;
  }

  std::string file_;  // as given by the caller: what the user recognises in messages
  fs::path dir_;      // the spec's folder, absolute
  Family f_;
  std::vector<std::string> device_names_;  // device.* as DeviceLimits::add_to defines them
  Names names_;       // params, dims, then derived names as they are defined
  Names dim_names_;
  Names all_names_;
  bool all_names_ready_ = false;
};

}  // namespace

Family load_family(const fs::path& spec_path) { return Loader(spec_path).load(); }

std::vector<fs::path> find_family_specs(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw SpecError(dir.string() + ": not a directory");
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".json") out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

Family load_family_named(const std::string& name_or_path, const fs::path& dir) {
  if (name_or_path.size() > 5 && name_or_path.ends_with(".json")) return load_family(name_or_path);
  const fs::path candidate = dir / (name_or_path + ".json");
  if (fs::is_regular_file(candidate)) return load_family(candidate);
  std::vector<std::string> names;
  std::error_code ec;
  if (fs::is_directory(dir, ec))
    for (const auto& p : find_family_specs(dir)) names.push_back(p.stem().string());
  throw SpecError("unknown family '" + name_or_path + "' in " + dir.string() +
                  " (known: " + (names.empty() ? std::string("none") : detail::join(names)) + ")");
}

}  // namespace kf
