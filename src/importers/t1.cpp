#include "importers/t1.hpp"

#include <cctype>
#include <cstdint>
#include <cmath>

#include "importers/import.hpp"
#include "space/expr.hpp"
#include "util/json_text.hpp"
#include "util/text.hpp"

namespace kf {

namespace {

using ojson = nlohmann::ordered_json;

std::vector<std::string> tokenize(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) { ++i; continue; }
    size_t j = i + 1;
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
    } else if (std::isdigit(static_cast<unsigned char>(c)) || (c == '.' && j < s.size() && std::isdigit(static_cast<unsigned char>(s[j])))) {
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '.')) ++j;
    } else if (c == '\'' || c == '"') {
      while (j < s.size() && s[j] != c) ++j;
      if (j == s.size()) throw ImportError("unterminated string in '" + s + "'");
      ++j;
    } else {
      for (const char* two : {"//", "**", "<=", ">=", "==", "!="})
        if (s.compare(i, 2, two) == 0) j = i + 2;
    }
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

bool is_primary(const std::string& t) {
  return !t.empty() && (std::isalnum(static_cast<unsigned char>(t[0])) || t[0] == '_' || t[0] == '\'' || t[0] == '"');
}
bool is_comparison(const std::string& t) {
  return t == "<" || t == ">" || t == "<=" || t == ">=" || t == "==" || t == "!=";
}

// Token-level translation; "" when a construct has no kforge equivalent (in, is, lambda,
// subscripts other than ProblemSize[i], conditional expressions, chained comparisons, ...).
std::string translate(const std::vector<std::string>& t) {
  std::string out;
  std::vector<int> not_depths;  // open "!(" groups, by paren depth
  int depth = 0, comparisons = 0;
  auto close_nots = [&](int at_depth) {
    while (!not_depths.empty() && not_depths.back() == at_depth) {
      out += ")";
      not_depths.pop_back();
    }
  };
  for (size_t i = 0; i < t.size(); ++i) {
    const std::string& tok = t[i];
    if (tok == "and" || tok == "or") {
      close_nots(depth);
      if (depth == 0) comparisons = 0;
      out += tok == "and" ? " && " : " || ";
    } else if (tok == "not") {
      out += "!(";
      not_depths.push_back(depth);
    } else if (tok == "(") {
      ++depth;
      out += "(";
    } else if (tok == ")") {
      close_nots(depth);
      --depth;
      out += ")";
    } else if (tok == "//") {
      out += " / ";  // C division: equal to Python's floor division for non-negative operands
    } else if (tok == "/") {
      out += " * 1.0 / ";  // Python's / is real division
    } else if (tok == "**") {
      if (i + 1 >= t.size() || !is_primary(t[i + 1]) || i == 0 || !is_primary(t[i - 1])) return "";
      const size_t cut = out.rfind(t[i - 1]);
      out = out.substr(0, cut) + "pow(" + t[i - 1] + ", " + t[i + 1] + ")";
      ++i;
    } else if (tok == "True" || tok == "False") {
      out += tok == "True" ? "1" : "0";
    } else if (tok == "ProblemSize" && i + 3 < t.size() && t[i + 1] == "[" && t[i + 3] == "]") {
      out += "problem_size_" + t[i + 2];
      i += 3;
    } else if (tok == "in" || tok == "is" || tok == "lambda" || tok == "if" || tok == "else" ||
               tok == "for" || tok == "[" || tok == "]" || tok == "len") {
      return "";
    } else {
      if (is_comparison(tok) && depth == 0 && ++comparisons > 1) return "";  // a < b < c
      out += is_comparison(tok) ? " " + tok + " " : tok;
    }
  }
  close_nots(0);
  if (depth != 0 || !not_depths.empty()) return "";
  return out;
}

ojson spec_value_json(const Value& v) {  // integral floats as ints, as a spec writes them
  if (std::holds_alternative<int64_t>(v)) return std::get<int64_t>(v);
  if (std::holds_alternative<std::string>(v)) return std::get<std::string>(v);
  const double d = std::get<double>(v);
  if (std::floor(d) == d && std::fabs(d) < 9e15) return static_cast<int64_t>(d);
  return d;
}

Value eval_python(const std::string& text, const Scope& scope) {
  const std::string e = python_to_kforge_expr(text);
  if (e.empty()) throw ImportError("cannot evaluate '" + text + "'");
  try {
    return Expr::parse(e).eval(scope);
  } catch (const ExprError& err) {
    throw ImportError("cannot evaluate '" + text + "': " + err.what());
  }
}

// Splits "a, f(b, c), 'x'" at top-level commas.
std::vector<std::string> split_top(const std::string& s) {
  std::vector<std::string> out(1);
  int depth = 0;
  char quote = 0;
  for (char c : s) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(' || c == '[') {
      ++depth;
    } else if (c == ')' || c == ']') {
      --depth;
    } else if (c == ',' && depth == 0) {
      out.emplace_back();
      continue;
    }
    out.back() += c;
  }
  if (out.back().find_first_not_of(" \t") == std::string::npos) out.pop_back();  // trailing comma
  return out;
}

std::vector<Value> iterate(const std::string& text) {
  const std::string s = trim(text);
  auto inner = [&](const std::string& prefix) { return s.substr(prefix.size(), s.size() - prefix.size() - 1); };
  if (s.rfind("list(", 0) == 0 && s.back() == ')') return iterate(inner("list("));
  std::vector<Value> out;
  if (s.rfind("range(", 0) == 0 && s.back() == ')') {
    std::vector<int64_t> a;
    for (const auto& arg : split_top(inner("range("))) {
      try {
        a.push_back(as_int(eval_python(arg, {})));
      } catch (const std::invalid_argument& e) {  // a real beyond int64 (10**30), a string
        throw ImportError("range() argument '" + trim(arg) + "': " + e.what());
      }
    }
    if (a.empty() || a.size() > 3) throw ImportError("range() takes 1 to 3 arguments: '" + s + "'");
    const int64_t lo = a.size() == 1 ? 0 : a[0], hi = a.size() == 1 ? a[0] : a[1], step = a.size() == 3 ? a[2] : 1;
    if (step == 0) throw ImportError("range() step is zero: '" + s + "'");
    // Counted before a value is made: range(10**12) is refused, not built. In unsigned
    // arithmetic: the difference of two int64 may not fit in one.
    const bool up = step > 0;
    const uint64_t span = up ? (hi > lo ? static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) : 0)
                             : (lo > hi ? static_cast<uint64_t>(lo) - static_cast<uint64_t>(hi) : 0);
    const uint64_t stride = up ? static_cast<uint64_t>(step) : 0 - static_cast<uint64_t>(step);
    const uint64_t count = span == 0 ? 0 : (span - 1) / stride + 1;
    if (count > kMaxT1Values)
      throw ImportError("'" + s + "' has " + std::to_string(count) + " values; a parameter has at most " +
                        std::to_string(kMaxT1Values));
    for (uint64_t i = 0; i < count; ++i)
      out.push_back(static_cast<int64_t>(static_cast<uint64_t>(lo) + i * static_cast<uint64_t>(step)));
    return out;
  }
  if (s.size() >= 2 && s.front() == '[' && s.back() == ']') {
    const std::string body = s.substr(1, s.size() - 2);
    const size_t for_at = body.find(" for ");
    if (for_at == std::string::npos) {
      const auto items = split_top(body);
      if (items.size() > kMaxT1Values)
        throw ImportError("the list has " + std::to_string(items.size()) + " values; a parameter has at most " +
                          std::to_string(kMaxT1Values));
      for (const auto& item : items) {
        const std::string v = trim(item);
        if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"')) out.push_back(v.substr(1, v.size() - 2));
        else out.push_back(eval_python(v, {}));
      }
      return out;
    }
    const std::string expr = body.substr(0, for_at);
    const std::string rest = body.substr(for_at + 5);
    const size_t in_at = rest.find(" in ");
    if (in_at == std::string::npos) throw ImportError("cannot read the comprehension '" + s + "'");
    const std::string var = trim(rest.substr(0, in_at));
    for (const Value& v : iterate(rest.substr(in_at + 4))) out.push_back(eval_python(expr, {{var, v}}));
    return out;
  }
  throw ImportError("cannot read the values '" + s + "' (a list, range() or a comprehension over one)");
}


}  // namespace

std::string python_to_kforge_expr(const std::string& python) {
  std::string e;
  try {
    e = translate(tokenize(python));
  } catch (const ImportError&) {
    return "";
  }
  if (e.empty()) return "";
  try {
    Expr::parse(e);
  } catch (const ExprError&) {
    return "";
  }
  return e;
}

ojson t1_values(const std::string& python) {
  ojson out = ojson::array();
  for (const Value& v : iterate(python)) out.push_back(spec_value_json(v));
  return out;
}

bool is_t1_file(const std::filesystem::path& path) {
  std::string text;
  try {
    text = read_bounded(path, kMaxT1Bytes, "");
  } catch (const JsonFileError&) {
    return false;  // too large for a T1 file (or unreadable): the recorded-space importers say why
  }
  // Nesting too deep is refused before nlohmann's parser, which recurses over it (the importers
  // of recorded spaces then say why).
  if (!json_nesting_problem(text).empty()) return false;
  const auto j = parse_ordered(text);
  return j && j->is_object() && j->contains("ConfigurationSpace") && j->contains("KernelSpecification");
}

}  // namespace kf
