// Rendering: a config (and the shape's specialized dims) become #defines in front of the
// template, whose quoted #includes are inlined so the source is self-contained. #line
// directives map the rendered text back to the template files for compiler messages.
#include "family/render.hpp"

#include <fstream>
#include <set>
#include <sstream>

#include "family/template_roots.hpp"
#include "util/hash.hpp"

namespace kf {

namespace fs = std::filesystem;

namespace {

std::string define_name(const std::string& s) {
  std::string out;
  for (char ch : s)
    out += std::isalnum(static_cast<unsigned char>(ch)) ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch))) : '_';
  return out;
}

void add_defines(std::string& out, const Assignment& a) {
  for (const auto& [name, value] : a) {
    if (is_string(value))
      out += "#define KF_" + define_name(name) + "_" + define_name(std::get<std::string>(value)) + " 1\n";
    else
      out += "#define KF_" + define_name(name) + " " + to_string(value) + "\n";
  }
}

bool read_text(const fs::path& p, std::string& out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

// `#include "name"` -> name; anything else (including <...>) -> nullopt.
std::optional<std::string> quoted_include(const std::string& line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos || line[i] != '#') return std::nullopt;
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string::npos || line.compare(i, 7, "include") != 0) return std::nullopt;
  i = line.find_first_not_of(" \t", i + 7);
  if (i == std::string::npos || line[i] != '"') return std::nullopt;
  const size_t end = line.find('"', i + 1);
  if (end == std::string::npos) return std::nullopt;
  return line.substr(i + 1, end - i - 1);
}

bool is_pragma_once(const std::string& line) {
  std::istringstream in(line);
  std::string hash, pragma, once;
  in >> hash;
  if (hash == "#") in >> pragma;
  else if (hash == "#pragma") pragma = "pragma";
  else return false;
  in >> once;
  return pragma == "pragma" && once == "once";
}

// A #line directive naming path, so compiler messages point at the template file and line.
std::string line_directive(int line, const fs::path& path) {
  std::string quoted;
  for (char ch : path.string()) {
    if (ch == '\\' || ch == '"') quoted += '\\';
    quoted += ch;
  }
  return "#line " + std::to_string(line) + " \"" + quoted + "\"\n";
}

class Inliner {
 public:
  // roots: where an included file may lie (family/template_roots.hpp); spec: named in errors.
  Inliner(const std::vector<fs::path>& include_dirs, std::vector<fs::path> roots, std::string spec,
          bool line_directives)
      : dirs_(include_dirs), roots_(std::move(roots)), spec_(std::move(spec)), lines_(line_directives) {}

  void run(const fs::path& path, std::string& out) {
    seen_.insert(key(path));
    if (lines_) out += line_directive(1, path);
    file(path, out);
  }

 private:
  // Appends path's text with its includes inlined; path is already marked as seen.
  void file(const fs::path& path, std::string& out) {
    std::string text;
    if (!read_text(path, text)) throw SpecError(path.string() + ": cannot read template file");
    std::istringstream in(text);
    std::string line;
    int line_no = 0;
    while (std::getline(in, line)) {
      ++line_no;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (is_pragma_once(line)) {
        // Each file is inlined once anyway, and NVRTC warns about #pragma once in the main file.
        out += "// #pragma once (inlined once)\n";
        continue;
      }
      const auto name = quoted_include(line);
      if (!name) {
        out += line;
        out += '\n';
        continue;
      }
      const fs::path found = find(*name, path, line_no);
      if (!seen_.insert(key(found)).second) {
        out += "// ---- already inlined: " + *name + " ----\n";
        continue;
      }
      out += "// ---- begin " + *name + " ----\n";
      if (lines_) out += line_directive(1, found);
      file(found, out);
      out += "// ---- end " + *name + " ----\n";
      if (lines_) out += line_directive(line_no + 1, path);
    }
  }

  static std::string key(const fs::path& p) { return fs::weakly_canonical(p).string(); }

  fs::path find(const std::string& name, const fs::path& from, int line_no) const {
    std::vector<fs::path> searched{from.parent_path()};
    searched.insert(searched.end(), dirs_.begin(), dirs_.end());
    const std::string at = (spec_.empty() ? "" : spec_ + ": ") + from.string() + ":" + std::to_string(line_no) + ": ";
    for (const auto& dir : searched) {
      const fs::path candidate = (dir / name).lexically_normal();
      if (!fs::is_regular_file(candidate)) continue;
      // The first match decides: skipping one outside the trees would quietly take another file.
      if (!inside_roots(candidate, roots_))
        throw SpecError(at + "included file \"" + name + "\": " + outside_roots_text(candidate, roots_));
      return candidate;
    }
    std::string where;
    for (const auto& dir : searched) where += (where.empty() ? "" : ", ") + dir.string();
    throw SpecError(at + "cannot find included file \"" + name + "\" (searched: " + where + ")");
  }

  const std::vector<fs::path>& dirs_;
  const std::vector<fs::path> roots_;
  const std::string spec_;
  const bool lines_;
  std::set<std::string> seen_;
};

// The spec's folder, the kernel_templates tree beside it, the include dirs and the template's own
// folder. The loader has checked that the last two lie in the first two, so for a loaded spec they
// widen nothing; a Family built in code (no spec) reads beside its template and in its include dirs.
std::vector<fs::path> render_roots(const Family& f, const fs::path& template_path) {
  std::vector<fs::path> roots = template_roots(f.spec_path);
  for (const auto& dir : f.include_dirs) roots.push_back(real_path(dir));
  roots.push_back(real_path(template_path.parent_path()));
  return roots;
}


std::string variant_hash(const Variant& v) {
  // Over the source without its #line directives: they only name where the text came from,
  // and leaving them out keeps the hashes (and so the cubin cache keys and the stale check of
  // stored results) what they were before render added them and wherever the templates live.
  // NUL separators: no concatenation of different parts can collide.
  std::string data = strip_line_directives(v.source);
  for (const auto& o : v.options) {
    data += '\0';
    data += o;
  }
  data += '\0';
  data += v.arch_suffix;
  return content_hash(data);
}

Variant render(const Family& f, const KernelSpec& k, const Config& c, const Shape& s, const Assignment& defines) {
  Variant v;
  v.family = f.name;
  v.config = c;
  v.defines = defines;
  v.specialization = specialization_of(f, s);
  v.source = "// kforge " + f.name + (c.empty() ? " reference" : " " + to_string(c)) +
             (v.specialization.empty() ? "" : " [" + to_string(v.specialization) + "]") +
             (defines.empty() ? "" : " defines " + to_string(defines)) + "\n";
  v.source += render_defines(c, v.specialization);
  add_defines(v.source, defines);
  Inliner(f.include_dirs, render_roots(f, k.template_path), f.spec_path.string(), true).run(k.template_path, v.source);
  v.entry = k.entry;
  v.options = f.compile_options;
  return v;
}

}  // namespace

Shape specialization_of(const Family& f, const Shape& shape) {
  const Shape s = full_shape(f, shape);
  Shape out;
  for (const auto& name : f.specialize) {
    auto it = s.find(name);
    if (it == s.end())
      throw SpecError("family " + f.name + ": shape '" + to_string(s) + "' lacks the specialized dimension '" + name + "'");
    out.emplace(name, it->second);
  }
  return out;
}

std::string render_defines(const Config& config, const Shape& specialization) {
  std::string out;
  add_defines(out, config);
  add_defines(out, specialization);
  return out;
}

std::string inline_includes(const fs::path& file, const std::vector<fs::path>& include_dirs) {
  std::string out;
  std::vector<fs::path> roots{real_path(file.parent_path())};
  for (const auto& dir : include_dirs) roots.push_back(real_path(dir));
  Inliner(include_dirs, roots, "", false).run(file, out);
  return out;
}

std::string strip_line_directives(const std::string& source) {
  std::string out;
  out.reserve(source.size());
  size_t pos = 0;
  while (pos < source.size()) {
    size_t end = source.find('\n', pos);
    end = end == std::string::npos ? source.size() : end + 1;
    if (source.compare(pos, 6, "#line ") != 0) out.append(source, pos, end - pos);
    pos = end;
  }
  return out;
}

Variant render_variant(const Family& f, const Config& c, const Shape& s, const Assignment& defines) {
  Variant v = render(f, f.kernel, c, s, defines);
  if (!f.arch_suffix.empty()) {
    Scope scope(c.begin(), c.end());
    for (const auto& [name, value] : full_shape(f, s)) scope[name] = value;
    try {
      v.arch_suffix = f.arch_suffix.eval_string(scope);
    } catch (const ExprError& e) {
      throw SpecError(f.spec_path.string() + ":/arch_suffix: " + e.what());
    }
  }
  v.hash = variant_hash(v);
  return v;
}

Variant render_reference(const Family& f, const Shape& s) {
  Variant v = render(f, f.reference, {}, s, {});
  v.hash = variant_hash(v);
  return v;
}

}  // namespace kf
