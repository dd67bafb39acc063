// Loading a family spec (docs/family_spec.md): parse the JSON, check every field, and report
// the first problem as "<file>:<json pointer>: <problem>". This file reads the space (params,
// dims, derived names, constraints, defaults, suites); family_loader.hpp says where the rest is.
#include <algorithm>
#include <set>

#include "family/family_loader.hpp"
#include "family/spec_limits.hpp"
#include "util/hash.hpp"
#include "util/json_text.hpp"

namespace kf {

namespace fs = std::filesystem;

namespace detail {

FamilyLoader::FamilyLoader(const fs::path& spec_path) : SpecReader(spec_path) {
  f_.spec_path = fs::absolute(spec_path).lexically_normal();
}

std::string FamilyLoader::read_file() const {
  try {
    return read_bounded(f_.spec_path, spec_limits::kMaxSpecBytes, "docs/family_spec.md, \"Limits\"", file_);
  } catch (const JsonFileError& e) {
    throw SpecError(e.what());
  }
}

Json FamilyLoader::parse(const std::string& bytes) const {
  // Where and why, with the field being read: nlohmann's exception for a number overflow (1e400)
  // says neither, and nesting too deep for the recursive walks over a tree is refused first.
  Json root;
  try {
    root = parse_json_file_text<Json>(bytes, file_);
  } catch (const JsonFileError& e) {
    throw SpecError(e.what());
  }
  if (!root.is_object()) fail("", "expected a JSON object at the top level, got " + type_name(root));
  check_keys(root, "",
             {"name", "description", "template", "entry", "include_dirs", "compile_options", "arch_suffix",
              "params", "priors", "defaults", "derived", "constraints", "dims", "shape_constraints", "specialize", "suites", "gate",
              "buffers", "args", "launch", "reference", "tolerance", "cost", "sanitize"});
  return root;
}

Family FamilyLoader::load() {
  const std::string bytes = read_file();
  f_.spec_hash = content_hash(bytes);
  Json root = parse(bytes);
  load_header(root);
  load_params(required(root, "", "params"));
  if (root.contains("priors")) load_priors(root["priors"]);
  load_dims(required(root, "", "dims"));
  if (root.contains("shape_constraints")) load_shape_constraints(root["shape_constraints"]);
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
  f_.kernel.args = load_args(required(root, "", "args"), "/args", known_all());
  f_.kernel.launch = load_launch(required(root, "", "launch"), "/launch", known_all());
  load_reference(required(root, "", "reference"));
  load_tolerance(required(root, "", "tolerance"));
  load_cost(required(root, "", "cost"));
  return std::move(f_);
}

void FamilyLoader::load_header(const Json& root) {
  const std::string name = string(required(root, "", "name"), "/name");
  const std::string stem = fs::path(file_).stem().string();
  if (name != stem) fail("/name", "name '" + name + "' must equal the file name without .json ('" + stem + "')");
  f_.name = name;
  if (root.contains("description")) f_.description = string(root["description"], "/description", false);
  if (root.contains("include_dirs")) {
    const Json& dirs = list(root["include_dirs"], "/include_dirs");
    for (size_t i = 0; i < dirs.size(); ++i) {
      const fs::path p = (dir_ / string(dirs[i], child("/include_dirs", i))).lexically_normal();
      std::error_code ec;  // a name too long for the file system is "not found" too, not an exception
      if (!fs::is_directory(p, ec)) fail(child("/include_dirs", i), "directory not found: " + p.string());
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

void FamilyLoader::load_params(const Json& params) {
  object(params, "/params");
  if (params.empty()) fail("/params", "expected at least one parameter");
  if (params.size() > spec_limits::kMaxParams)
    fail("/params", std::to_string(params.size()) + " parameters: at most " + std::to_string(spec_limits::kMaxParams));
  for (const auto& [name, values] : params.items()) {
    const std::string ptr = child("/params", name);
    if (!is_identifier(name)) fail(ptr, "parameter name '" + name + "' is not a valid name (letters, digits, '_')");
    if (!values.is_array() || values.empty()) fail(ptr, "expected a non-empty list of ints or strings");
    if (values.size() > spec_limits::kMaxValuesPerParam)
      fail(ptr, std::to_string(values.size()) + " values: a parameter has at most " +
                    std::to_string(spec_limits::kMaxValuesPerParam));
    ParamSpec p{name, {}};
    std::set<Value> seen;  // a search per value would make a long domain quadratic
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
      if (!seen.insert(p.values.back()).second) fail(vptr, "value " + to_string(p.values.back()) + " is listed twice");
    }
    f_.params.push_back(std::move(p));
    names_.add(name);
  }
}

void FamilyLoader::load_dims(const Json& dims) {
  object(dims, "/dims");
  if (dims.empty()) fail("/dims", "expected at least one dimension");
  if (dims.size() > spec_limits::kMaxDims)
    fail("/dims", std::to_string(dims.size()) + " dimensions: at most " + std::to_string(spec_limits::kMaxDims));
  for (const auto& [name, spec] : dims.items()) {
    f_.dims.push_back(load_dim(name, spec, child("/dims", name)));
    names_.add(name);
    dim_names_.add(name);
  }
}

DimSpec FamilyLoader::load_dim(const std::string& name, const Json& spec, const std::string& ptr) const {
  if (!is_identifier(name)) fail(ptr, "dimension name '" + name + "' is not a valid name (letters, digits, '_')");
  if (names_.has(name)) fail(ptr, "dimension '" + name + "' has the name of a parameter");
  object(spec, ptr);
  check_keys(spec, ptr, {"type", "min", "max", "values", "doc", "default"});
  DimSpec d;
  d.name = name;
  const std::string type = string(required(spec, ptr, "type"), ptr + "/type");
  if (spec.contains("doc")) d.doc = string(spec["doc"], ptr + "/doc", false);
  // (dim_names_ holds the dims declared before this one: a default reads only those)
  if (spec.contains("default")) d.default_value = expr(spec["default"], ptr + "/default", dim_names_);
  if (type == "int") {
    if (spec.contains("values")) fail(ptr + "/values", "an int dimension takes min and max, not values");
    if (spec.contains("min")) d.min = integer(spec["min"], ptr + "/min");
    if (spec.contains("max")) d.max = integer(spec["max"], ptr + "/max");
    if (d.min > d.max) fail(ptr, "min " + std::to_string(d.min) + " is greater than max " + std::to_string(d.max));
  } else if (type == "enum") {
    load_enum_choices(d, spec, ptr);
  } else {
    fail(ptr + "/type", "type must be \"int\" or \"enum\", got '" + type + "'");
  }
  return d;
}

void FamilyLoader::load_enum_choices(DimSpec& d, const Json& spec, const std::string& ptr) const {
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
}

void FamilyLoader::load_specialize(const Json& spec) {
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

void FamilyLoader::load_derived(const Json& derived) {
  object(derived, "/derived");
  if (derived.size() > spec_limits::kMaxDerived)
    fail("/derived", std::to_string(derived.size()) + " derived values: at most " +
                         std::to_string(spec_limits::kMaxDerived));
  // Visible: params, dims, device.* and the derived names above this one (grown as they are
  // defined, not copied per value: that was quadratic in a long chain).
  Names known = names_;
  for (const auto& d : device_names_) known.add(d);
  for (const auto& [name, text] : derived.items()) {
    const std::string ptr = child("/derived", name);
    if (!is_identifier(name)) fail(ptr, "derived name '" + name + "' is not a valid name (letters, digits, '_')");
    if (names_.has(name)) fail(ptr, "derived name '" + name + "' is already a parameter, dimension or derived name");
    f_.derived.push_back({name, expr(text, ptr, known)});
    names_.add(name);
    known.add(name);
  }
}

void FamilyLoader::load_shape_constraints(const Json& constraints) {
  load_constraint_list(constraints, "/shape_constraints", dim_names_, f_.shape_constraints);
}

void FamilyLoader::load_constraints(const Json& constraints) {
  load_constraint_list(constraints, "/constraints", known_all(), f_.constraints);
}

void FamilyLoader::load_constraint_list(const Json& constraints, const std::string& ptr, const Names& names,
                                        std::vector<Constraint>& out) {
  list(constraints, ptr);
  if (constraints.size() > spec_limits::kMaxConstraints)
    fail(ptr, std::to_string(constraints.size()) + " constraints: at most " +
                  std::to_string(spec_limits::kMaxConstraints));
  for (size_t i = 0; i < constraints.size(); ++i) {
    Expr e = expr(constraints[i], child(ptr, i), names);
    out.push_back({e.text(), e});
  }
}

void FamilyLoader::load_arch_suffix(const Json& j) {
  // Rendering knows the config and the shape but not the device: params and dims only.
  f_.arch_suffix = expr(j, "/arch_suffix", params_and_dims());
}

void FamilyLoader::load_defaults(const Json& defaults) {
  list(defaults, "/defaults");
  for (size_t i = 0; i < defaults.size(); ++i) {
    const std::string ptr = child("/defaults", i);
    const Config c = assignment(defaults[i], ptr);
    try {
      f_.defaults.push_back(check_config(f_, c));
    } catch (const SpecError& e) {
      fail(ptr, e.what());
    }
  }
}

void FamilyLoader::load_suites(const Json& suites) {
  object(suites, "/suites");
  for (const auto& [name, shapes] : suites.items()) {
    const std::string ptr = child("/suites", name);
    list(shapes, ptr, true);
    std::vector<Shape> out;
    for (size_t i = 0; i < shapes.size(); ++i) {
      const Shape s = assignment(shapes[i], child(ptr, i));
      try {
        out.push_back(check_shape(f_, s));
      } catch (const SpecError& e) {
        fail(child(ptr, i), e.what());
      }
    }
    f_.suites.emplace(name, std::move(out));
  }
}

const Names& FamilyLoader::known_all() {
  if (!all_names_ready_) {
    all_names_ = names_;
    for (const auto& d : device_names_) all_names_.add(d);
    all_names_ready_ = true;
  }
  return all_names_;
}

Names FamilyLoader::params_and_dims() const {
  Names n;
  for (const auto& p : f_.params) n.add(p.name);
  for (const auto& d : f_.dims) n.add(d.name);
  return n;
}

}  // namespace detail

Family load_family(const fs::path& spec_path) { return detail::FamilyLoader(spec_path).load(); }

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
