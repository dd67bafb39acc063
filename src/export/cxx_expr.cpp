// Expression -> C++: walks the tree of Expr::parse (space/expr_node.hpp) and emits typed code.
#include "export/cxx_expr.hpp"

#include <cmath>
#include <cstdio>
#include <string_view>
#include <vector>

#include "space/expr_node.hpp"

namespace kf::exporter {

std::string cxx_int_literal(int64_t v) {
  // -9223372036854775808LL is not a literal in C++ (it is minus a too-large literal).
  if (v == INT64_MIN) return "(-9223372036854775807LL - 1)";
  return std::to_string(v) + "LL";
}

std::string cxx_real_literal(double v) {
  if (std::isnan(v)) return "(0.0 / 0.0)";
  if (std::isinf(v)) return v > 0 ? "HUGE_VAL" : "(-HUGE_VAL)";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return v < 0 ? "(" + s + ")" : s;
}

std::string c_string_literal(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string cxx_string_literal(const std::string& s) { return "std::string_view(" + c_string_literal(s) + ")"; }

std::string cxx_type_name(CxxType t) {
  switch (t) {
    case CxxType::Int: return "long long";
    case CxxType::Real: return "double";
    case CxxType::Str: return "std::string_view";
  }
  return "long long";
}

std::string cxx_as_int(const CxxExpr& e) {
  if (e.type == CxxType::Int) return e.code;
  return "kfx::to_int(kfx_bad, " + e.code + ")";
}

std::string cxx_as_real(const CxxExpr& e) {
  if (e.type == CxxType::Real) return e.code;
  return "static_cast<double>(" + e.code + ")";
}

std::string cxx_as_bool(const CxxExpr& e, const std::string& text) {
  if (e.type == CxxType::Str) throw ExprError("in '" + text + "': a string is not a condition");
  return "kfx::truth(" + e.code + ")";
}

namespace {

struct Located {
  size_t pos;
  std::string message;
};
[[noreturn]] void fail(size_t pos, std::string message) { throw Located{pos, std::move(message)}; }

const char* type_word(CxxType t) {
  switch (t) {
    case CxxType::Int: return "an integer";
    case CxxType::Real: return "a real";
    case CxxType::Str: return "a string";
  }
  return "?";
}

// Walks the tree Expr::parse built (one parser for the grammar) and types each node statically.
class Translator {
 public:
  explicit Translator(const NameResolver& names) : names_(names) {}

  CxxExpr walk(const Expr::Node& n) const {
    using Kind = Expr::Node::Kind;
    switch (n.kind) {
      case Kind::Literal: return literal(n);
      case Kind::Name: {
        std::optional<CxxExpr> r = names_(n.name);
        if (!r) fail(n.pos, "unknown name '" + n.name + "'");
        return *r;
      }
      case Kind::Unary: return unary(n.op, walk(*n.kids.at(0)), n.pos);
      case Kind::Binary: return binary(n.op, walk(*n.kids.at(0)), walk(*n.kids.at(1)), n.pos);
      case Kind::Ternary: return ternary(walk(*n.kids.at(0)), walk(*n.kids.at(1)), walk(*n.kids.at(2)), n.pos);
      case Kind::Call: {
        std::vector<CxxExpr> args;
        for (const auto& k : n.kids) args.push_back(walk(*k));
        return call(n.name, args, n.pos);
      }
    }
    fail(n.pos, "unknown expression node");
  }

 private:
  const NameResolver& names_;

  static CxxExpr literal(const Expr::Node& n) {
    if (is_string(n.literal)) return {cxx_string_literal(std::get<std::string>(n.literal)), CxxType::Str};
    if (is_int(n.literal)) return {cxx_int_literal(std::get<int64_t>(n.literal)), CxxType::Int};
    return {cxx_real_literal(as_double(n.literal)), CxxType::Real};
  }

  static void need_number(const CxxExpr& e, size_t at, const std::string& what) {
    if (e.type == CxxType::Str) fail(at, what + " needs a number, got a string");
  }
  static std::string cond(const CxxExpr& e, size_t at) {
    if (e.type == CxxType::Str) fail(at, "a string is not a condition");
    return "kfx::truth(" + e.code + ")";
  }

  static CxxExpr ternary(const CxxExpr& c, const CxxExpr& yes, const CxxExpr& no, size_t at) {
    const std::string test = cond(c, at);
    if (yes.type == no.type) return {"(" + test + " ? " + yes.code + " : " + no.code + ")", yes.type};
    if (yes.type == CxxType::Str || no.type == CxxType::Str)
      fail(at, "'?:' mixes a string with a number");
    // The evaluator keeps the chosen branch's kind; C++ needs one type, and a real holds both.
    return {"(" + test + " ? " + cxx_as_real(yes) + " : " + cxx_as_real(no) + ")", CxxType::Real};
  }

  static CxxExpr binary(const std::string& op, const CxxExpr& a, const CxxExpr& b, size_t at) {
    if (op == "&&" || op == "||")  // short-circuit, like the evaluator
      return {"static_cast<long long>(" + cond(a, at) + " " + op + " " + cond(b, at) + ")", CxxType::Int};
    const bool cmp = op == "==" || op == "!=" || op == "<" || op == "<=" || op == ">" || op == ">=";
    if (a.type == CxxType::Str || b.type == CxxType::Str) {
      if (a.type != b.type)
        fail(at, "cannot apply '" + op + "' to " + type_word(a.type) + " and " + type_word(b.type));
      if (op != "==" && op != "!=") fail(at, "strings support only == and !=, not '" + op + "'");
      return {"static_cast<long long>(" + a.code + " " + op + " " + b.code + ")", CxxType::Int};
    }
    const bool ints = a.type == CxxType::Int && b.type == CxxType::Int;
    if (cmp) {
      if (ints) return {"static_cast<long long>(" + a.code + " " + op + " " + b.code + ")", CxxType::Int};
      return {"static_cast<long long>(" + cxx_as_real(a) + " " + op + " " + cxx_as_real(b) + ")",
              CxxType::Int};
    }
    static const std::pair<const char*, const char*> kNames[] = {
        {"+", "add"}, {"-", "sub"}, {"*", "mul"}, {"/", "div"}, {"%", "mod"}};
    for (const auto& [sym, name] : kNames) {
      if (op != sym) continue;
      if (ints) return {std::string("kfx::i") + name + "(kfx_bad, " + a.code + ", " + b.code + ")", CxxType::Int};
      if (op == "+" || op == "-" || op == "*")
        return {"(" + cxx_as_real(a) + " " + op + " " + cxx_as_real(b) + ")", CxxType::Real};
      return {std::string("kfx::f") + name + "(kfx_bad, " + cxx_as_real(a) + ", " + cxx_as_real(b) + ")",
              CxxType::Real};
    }
    fail(at, "unknown operator '" + op + "'");
  }

  static CxxExpr unary(const std::string& op, const CxxExpr& v, size_t at) {
    if (op == "!") return {"static_cast<long long>(!" + cond(v, at) + ")", CxxType::Int};
    need_number(v, at, "unary '" + op + "'");
    if (op == "+") return v;
    if (v.type == CxxType::Int) return {"kfx::ineg(kfx_bad, " + v.code + ")", CxxType::Int};
    return {"(-" + v.code + ")", CxxType::Real};
  }

  static CxxExpr call(const std::string& f, const std::vector<CxxExpr>& args, size_t at) {
    const auto arity = [&](size_t lo, size_t hi) {
      if (args.size() < lo || args.size() > hi)
        fail(at, f + "() takes " + (lo == hi ? std::to_string(lo) : "at least " + std::to_string(lo)) +
                     " argument" + (hi == 1 ? "" : "s") + ", got " + std::to_string(args.size()));
    };
    const auto numbers = [&] {
      for (const auto& a : args) need_number(a, at, f + "()");
    };
    const auto all_int = [&] {
      for (const auto& a : args)
        if (a.type != CxxType::Int) return false;
      return true;
    };
    if (f == "min" || f == "max") {
      arity(2, 16);
      numbers();
      const bool ints = all_int();
      // Folded pairwise, left to right, as the evaluator does.
      std::string code = ints ? args[0].code : cxx_as_real(args[0]);
      for (size_t i = 1; i < args.size(); ++i)
        code = std::string(ints ? "kfx::i" : "kfx::f") + f + "(" + code + ", " +
               (ints ? args[i].code : cxx_as_real(args[i])) + ")";
      return {code, ints ? CxxType::Int : CxxType::Real};
    }
    if (f == "ceil_div") {
      arity(2, 2);
      numbers();
      if (all_int()) return {"kfx::iceil_div(kfx_bad, " + args[0].code + ", " + args[1].code + ")", CxxType::Int};
      return {"kfx::fceil_div(kfx_bad, " + cxx_as_real(args[0]) + ", " + cxx_as_real(args[1]) + ")",
              CxxType::Real};
    }
    if (f == "sqrt" || f == "rsqrt" || f == "log2") {
      arity(1, 1);
      numbers();
      return {"kfx::f" + f + "(kfx_bad, " + cxx_as_real(args[0]) + ")", CxxType::Real};
    }
    if (f == "pow") {
      arity(2, 2);
      numbers();
      return {"std::pow(" + cxx_as_real(args[0]) + ", " + cxx_as_real(args[1]) + ")", CxxType::Real};
    }
    if (f == "abs") {
      arity(1, 1);
      numbers();
      if (args[0].type == CxxType::Int) return {"kfx::iabs(kfx_bad, " + args[0].code + ")", CxxType::Int};
      return {"std::fabs(" + args[0].code + ")", CxxType::Real};
    }
    if (f == "floor" || f == "ceil") {
      arity(1, 1);
      numbers();
      if (args[0].type == CxxType::Int) return args[0];  // already integral
      return {"std::" + f + "(" + args[0].code + ")", CxxType::Real};
    }
    if (f == "sizeof_dtype") {
      arity(1, 1);
      if (args[0].type != CxxType::Str) fail(at, "sizeof_dtype() needs a string");
      return {"kfx::sizeof_dtype(kfx_bad, " + args[0].code + ")", CxxType::Int};
    }
    fail(at, "unknown function '" + f + "'");
  }
};

}  // namespace

CxxExpr translate_expr(const std::string& text, const NameResolver& names) {
  const Expr parsed = Expr::parse(text);  // syntax errors, worded as everywhere else
  try {
    return Translator(names).walk(*parsed.root());
  } catch (const Located& e) {
    throw ExprError("in '" + text + "': " + e.message + " (at column " + std::to_string(e.pos + 1) + ")");
  }
}

}  // namespace kf::exporter
