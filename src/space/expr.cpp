// The expression language's public interface: parse (space/expr_parser.cpp), evaluate
// (space/expr_eval.cpp) and typed results. Errors are one line: "in '<text>': <problem> (at column N)".
#include "space/expr.hpp"

#include <cmath>
#include <unordered_set>

#include "space/expr_detail.hpp"

namespace kf {

namespace expr_detail {

std::string quoted(const std::string& text) {
  constexpr size_t kShown = 80;
  if (text.size() <= kShown) return "'" + text + "'";
  return "'" + text.substr(0, kShown) + "...' (" + std::to_string(text.size()) + " characters)";
}

std::string format_error(const std::string& text, size_t pos, const std::string& message) {
  return "in " + quoted(text) + ": " + message + " (at column " + std::to_string(pos + 1) + ")";
}

std::string describe(const Value& v) {
  if (is_string(v)) return "string '" + std::get<std::string>(v) + "'";
  return to_string(v);
}

}  // namespace expr_detail

using namespace expr_detail;

namespace {

// In first-use order; `seen` keeps an expression of many names linear (a search of `out` per
// name was quadratic).
void collect_names(const Node& n, std::vector<std::string>& out, std::unordered_set<std::string>& seen) {
  if (n.kind == Node::Kind::Name && seen.insert(n.name).second) out.push_back(n.name);
  for (const auto& k : n.kids) collect_names(*k, out, seen);
}

}  // namespace

Expr Expr::parse(const std::string& text) {
  Expr e;
  e.text_ = text;
  try {
    e.root_ = parse_tree(e.text_);
  } catch (const LocatedError& err) {
    throw ExprError(format_error(text, err.pos, err.message));
  }
  return e;
}

Value Expr::eval(const Scope& scope) const {
  if (!root_) throw ExprError("in '': empty expression");
  try {
    return eval_tree(*root_, scope);
  } catch (const LocatedError& err) {
    throw ExprError(format_error(text_, err.pos, err.message));
  }
}

int64_t Expr::eval_int(const Scope& scope) const {
  const Value v = eval(scope);
  if (is_int(v)) return std::get<int64_t>(v);
  if (const auto* d = std::get_if<double>(&v)) {
    // A real that is exactly integral (ceil_div of reals, floor(x)) is accepted.
    if (std::isfinite(*d) && std::floor(*d) == *d && std::fabs(*d) < 9.2e18) return static_cast<int64_t>(*d);
  }
  throw ExprError("in " + quoted(text_) + ": expected an integer, got " + describe(v));
}

double Expr::eval_double(const Scope& scope) const {
  const Value v = eval(scope);
  if (is_string(v)) throw ExprError("in " + quoted(text_) + ": expected a number, got " + describe(v));
  return as_double(v);
}

bool Expr::eval_bool(const Scope& scope) const {
  const Value v = eval(scope);
  if (is_string(v)) throw ExprError("in " + quoted(text_) + ": expected a condition, got " + describe(v));
  return as_double(v) != 0.0;
}

std::string Expr::eval_string(const Scope& scope) const {
  const Value v = eval(scope);
  if (!is_string(v)) throw ExprError("in " + quoted(text_) + ": expected a string, got " + describe(v));
  return std::get<std::string>(v);
}

std::vector<std::string> Expr::identifiers() const {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  if (root_) collect_names(*root_, out, seen);
  return out;
}

}  // namespace kf
