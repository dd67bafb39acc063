// The kernel's interface in a family spec: gate cases, buffers, arguments (tensor maps too),
// launch geometry, the reference kernel, tolerances and the cost model.
#include <algorithm>

#include "family/family_loader.hpp"
#include "family/template_roots.hpp"

namespace kf::detail {

namespace {

const std::set<std::string> kDtypes = {"f16", "bf16", "f32", "i32"};

}  // namespace

void FamilyLoader::load_gate(const Json& gate) {
  list(gate, "/gate");
  for (size_t i = 0; i < gate.size(); ++i) {
    const std::string ptr = child("/gate", i);
    object(gate[i], ptr);
    check_keys(gate[i], ptr, {"name", "override", "input_scale"});
    GateCase g;
    g.name = identifier(required(gate[i], ptr, "name"), ptr + "/name", "gate case name");
    for (const auto& other : f_.gate)
      if (other.name == g.name) fail(ptr + "/name", "gate case '" + g.name + "' is defined twice");
    if (gate[i].contains("override")) g.overrides = load_gate_overrides(gate[i]["override"], ptr + "/override");
    if (gate[i].contains("input_scale")) {
      g.input_scale = number(gate[i]["input_scale"], ptr + "/input_scale");
      if (!(g.input_scale > 0)) fail(ptr + "/input_scale", "input_scale must be positive");
    }
    f_.gate.push_back(std::move(g));
  }
}

Shape FamilyLoader::load_gate_overrides(const Json& over, const std::string& ptr) const {
  Shape overrides;
  for (const auto& [dim, value] : assignment(over, ptr)) {
    const std::string dptr = child(ptr, dim);
    const DimSpec* d = f_.dim(dim);
    if (!d) fail(dptr, "unknown dimension '" + dim + "' (dimensions: " + dim_names_.list() + ")");
    if (std::find(f_.specialize.begin(), f_.specialize.end(), dim) != f_.specialize.end())
      fail(dptr, "a gate case may not override the specialized dimension '" + dim + "'");
    try {
      overrides[dim] = check_dim_value(*d, value);
    } catch (const SpecError& e) {
      fail(dptr, e.what());
    }
  }
  return overrides;
}

void FamilyLoader::load_buffers(const Json& buffers) {
  list(buffers, "/buffers", true);
  bool has_output = false;
  for (size_t i = 0; i < buffers.size(); ++i) {
    BufferSpec buf = load_buffer(buffers[i], child("/buffers", i));
    has_output = has_output || buf.role == BufferRole::Output;
    f_.buffers.push_back(std::move(buf));
  }
  if (!has_output) fail("/buffers", "no buffer has role \"output\": the gate would compare nothing");
}

BufferSpec FamilyLoader::load_buffer(const Json& b, const std::string& ptr) {
  object(b, ptr);
  check_keys(b, ptr, {"name", "dtype", "count", "axes", "role", "init", "expected", "compare"});
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
  if (b.contains("axes")) buf.axes = expr(b["axes"], ptr + "/axes", known_all());
  const std::string role = string(required(b, ptr, "role"), ptr + "/role");
  if (role == "input") buf.role = BufferRole::Input;
  else if (role == "output") buf.role = BufferRole::Output;
  else if (role == "scratch") buf.role = BufferRole::Scratch;
  else fail(ptr + "/role", "role must be \"input\", \"output\" or \"scratch\", got '" + role + "'");
  if (b.contains("init")) {
    const Json& init = object(b["init"], ptr + "/init");
    check_keys(init, ptr + "/init", {"lo", "hi", "file"});
    if (init.contains("file")) {
      if (init.contains("lo") || init.contains("hi")) fail(ptr + "/init", "either a file or a range (lo, hi), not both");
      if (buf.role == BufferRole::Scratch) fail(ptr + "/init", "scratch buffers are zero-filled; they take no init");
      buf.init.file = data_path(init, ptr + "/init", "file");
    } else {
      if (buf.role != BufferRole::Input) fail(ptr + "/init", "only input buffers take an init range");
      if (init.contains("lo")) buf.init.lo = number(init["lo"], ptr + "/init/lo");
      if (init.contains("hi")) buf.init.hi = number(init["hi"], ptr + "/init/hi");
      if (!(buf.init.lo < buf.init.hi)) fail(ptr + "/init", "lo must be less than hi");
    }
  }
  if (b.contains("expected") || b.contains("compare")) {
    if (buf.role != BufferRole::Output)
      fail(ptr + (b.contains("expected") ? "/expected" : "/compare"), "only output buffers take \"expected\" or \"compare\"");
    if (b.contains("compare")) {
      if (!b["compare"].is_boolean()) fail(ptr + "/compare", "expected true or false");
      buf.compare = b["compare"].get<bool>();
    }
    if (b.contains("expected")) {
      if (!buf.compare) fail(ptr + "/expected", "an output with \"compare\": false has nothing to compare with");
      buf.expected = data_path(b, ptr, "expected");
    }
  }
  return buf;
}

std::string FamilyLoader::buffer_name(const Json& j, const std::string& ptr) const {
  const std::string name = string(j, ptr);
  if (!f_.buffer(name)) {
    std::vector<std::string> names;
    for (const auto& b : f_.buffers) names.push_back(b.name);
    fail(ptr, "unknown buffer '" + name + "' (buffers: " + join(names) + ")");
  }
  return name;
}

// {"tensor_map": BUFFER, "dims": [...], "box": [...], "swizzle": 0|32|64|128}. The limits that
// need values (box sizes, alignment, the buffer's size) are checked when the map is encoded.
ArgSpec FamilyLoader::load_tensor_map(const Json& a, const std::string& aptr, const Names& known) const {
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

std::vector<ArgSpec> FamilyLoader::load_args(const Json& args, const std::string& ptr, const Names& known) const {
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

LaunchSpec FamilyLoader::load_launch(const Json& launch, const std::string& ptr, const Names& known) const {
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

// A template lies in the spec's folder, the kernel_templates tree beside it or an include dir
// (family/template_roots.hpp): a spec cannot name any other file to be read and compiled. The
// include dirs are checked here, where they start to matter, so that a spec's other mistakes
// are reported first, in the order of the file.
std::filesystem::path FamilyLoader::template_path(const Json& obj, const std::string& ptr) const {
  const std::filesystem::path p = existing_file(required(obj, ptr, "template"), ptr + "/template");
  std::vector<std::filesystem::path> roots = template_roots(f_.spec_path);
  for (size_t i = 0; i < f_.include_dirs.size(); ++i)  // templates may be read from them
    if (!inside_roots(f_.include_dirs[i], roots))
      fail(child("/include_dirs", i), "directory " + outside_roots_text(f_.include_dirs[i], roots));
  for (const auto& dir : f_.include_dirs) roots.push_back(real_path(dir));
  if (!inside_roots(p, roots))
    fail(ptr + "/template", "template " + outside_roots_text(p, roots));
  return p;
}

// A raw data file (init.file, expected) lies where templates may lie: the spec cannot make the
// gate read any other file.
std::filesystem::path FamilyLoader::data_path(const Json& obj, const std::string& ptr, const char* key) const {
  const std::filesystem::path p = existing_file(obj[key], ptr + "/" + key);
  const std::vector<std::filesystem::path> roots = template_roots(f_.spec_path);
  if (!inside_roots(p, roots)) fail(ptr + "/" + key, "data file " + outside_roots_text(p, roots));
  return p;
}

std::string FamilyLoader::entry_name(const Json& obj, const std::string& ptr) const {
  return identifier(required(obj, ptr, "entry"), ptr + "/entry", "entry");
}

void FamilyLoader::load_reference(const Json& ref) {
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

void FamilyLoader::load_tolerance(const Json& tol) {
  object(tol, "/tolerance");
  const DimSpec* dtype = f_.dim("dtype");
  const std::vector<std::string> dtypes = dtype && dtype->is_enum ? dtype->choices : std::vector<std::string>{};
  for (const auto& [key, value] : tol.items()) {
    const std::string ptr = child("/tolerance", key);
    if (key != "default" && std::find(dtypes.begin(), dtypes.end(), key) == dtypes.end())
      fail(ptr, "key '" + key + "' is neither \"default\" nor a value of the dimension dtype (" +
                    (dtypes.empty() ? std::string("none") : join(dtypes)) + ")");
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

void FamilyLoader::load_cost(const Json& cost) {
  object(cost, "/cost");
  check_keys(cost, "/cost", {"flops", "bytes"});
  f_.flops = expr(required(cost, "/cost", "flops"), "/cost/flops", known_all());
  f_.bytes = expr(required(cost, "/cost", "bytes"), "/cost/bytes", known_all());
}

}  // namespace kf::detail
