// The expression language's evaluator: C semantics for integers (overflow and division by
// zero are errors), reals where a real takes part, strings compared with == and != only.
#include <cmath>
#include <limits>
#include <optional>

#include "space/expr_detail.hpp"

namespace kf::expr_detail {

namespace {

double num(const Value& v, const Node& n, const char* what) {
  if (is_string(v)) fail(n.pos, std::string(what) + " needs a number, got " + describe(v));
  return as_double(v);
}

bool truth(const Value& v, const Node& n) {
  if (is_string(v)) fail(n.pos, "a string (" + describe(v) + ") is not a condition");
  if (is_int(v)) return std::get<int64_t>(v) != 0;
  return std::get<double>(v) != 0.0;
}

Value eval_node(const Node& n, const Scope& scope);

// A comparison operator's 0 or 1; nullopt when op is not a comparison.
template <class T>
std::optional<Value> compare(const std::string& op, T x, T y) {
  if (op == "<") return int64_t{x < y};
  if (op == "<=") return int64_t{x <= y};
  if (op == ">") return int64_t{x > y};
  if (op == ">=") return int64_t{x >= y};
  if (op == "==") return int64_t{x == y};
  if (op == "!=") return int64_t{x != y};
  return std::nullopt;
}

Value eval_binary(const Node& n, const Scope& scope) {
  const std::string& op = n.op;
  if (op == "&&" || op == "||") {  // short-circuit, like C
    const bool lhs = truth(eval_node(*n.kids[0], scope), *n.kids[0]);
    if (op == "&&" && !lhs) return int64_t{0};
    if (op == "||" && lhs) return int64_t{1};
    return int64_t{truth(eval_node(*n.kids[1], scope), *n.kids[1]) ? 1 : 0};
  }
  const Value a = eval_node(*n.kids[0], scope);
  const Value b = eval_node(*n.kids[1], scope);

  if (is_string(a) || is_string(b)) {
    if (!(is_string(a) && is_string(b)))
      fail(n.pos, "cannot apply '" + op + "' to " + describe(a) + " and " + describe(b));
    if (op != "==" && op != "!=") fail(n.pos, "strings support only == and !=, not '" + op + "'");
    const bool eq = std::get<std::string>(a) == std::get<std::string>(b);
    return int64_t{(op == "==") == eq ? 1 : 0};
  }

  if (is_int(a) && is_int(b)) {
    const int64_t x = std::get<int64_t>(a), y = std::get<int64_t>(b);
    int64_t r = 0;
    bool overflow = false;
    if (op == "+" || op == "-" || op == "*") {
      if (op == "+") overflow = __builtin_add_overflow(x, y, &r);
      if (op == "-") overflow = __builtin_sub_overflow(x, y, &r);
      if (op == "*") overflow = __builtin_mul_overflow(x, y, &r);
      if (overflow) fail(n.pos, "integer overflow in '" + op + "'");
      return r;
    }
    if (op == "/" || op == "%") {
      if (y == 0) fail(n.pos, "division by zero");
      if (x == std::numeric_limits<int64_t>::min() && y == -1) fail(n.pos, "integer overflow in '" + op + "'");
      return op == "/" ? x / y : x % y;  // C: truncation toward zero
    }
    if (auto cmp = compare(op, x, y)) return *cmp;
  } else {
    const double x = as_double(a), y = as_double(b);
    if (op == "+") return x + y;
    if (op == "-") return x - y;
    if (op == "*") return x * y;
    if (op == "/" || op == "%") {
      // An infinite size or cost is never meant; treat it like the integer case.
      if (y == 0.0) fail(n.pos, "division by zero");
      return op == "/" ? x / y : std::fmod(x, y);
    }
    if (auto cmp = compare(op, x, y)) return *cmp;
  }
  fail(n.pos, "unknown operator '" + op + "'");
}

int64_t sizeof_dtype(const std::string& dtype, const Node& n) {
  if (dtype == "f16" || dtype == "bf16") return 2;
  if (dtype == "f32" || dtype == "i32") return 4;
  if (dtype == "f64") return 8;
  fail(n.pos, "sizeof_dtype: unknown dtype '" + dtype + "' (known: f16, bf16, f32, i32, f64)");
}

Value eval_call(const Node& n, const Scope& scope) {
  std::vector<Value> args;
  args.reserve(n.kids.size());
  for (const auto& k : n.kids) args.push_back(eval_node(*k, scope));
  const std::string& f = n.name;
  const auto arg_num = [&](size_t i) { return num(args[i], *n.kids[i], (f + "()").c_str()); };

  if (f == "min" || f == "max") {
    bool all_int = true;
    for (size_t i = 0; i < args.size(); ++i) {
      arg_num(i);  // rejects strings
      all_int = all_int && is_int(args[i]);
    }
    if (all_int) {
      int64_t r = std::get<int64_t>(args[0]);
      for (const auto& v : args) r = f == "min" ? std::min(r, std::get<int64_t>(v)) : std::max(r, std::get<int64_t>(v));
      return r;
    }
    double r = arg_num(0);
    for (size_t i = 1; i < args.size(); ++i) r = f == "min" ? std::min(r, arg_num(i)) : std::max(r, arg_num(i));
    return r;
  }
  if (f == "ceil_div") {
    const double xd = arg_num(0), yd = arg_num(1);
    if (is_int(args[0]) && is_int(args[1])) {
      const int64_t x = std::get<int64_t>(args[0]), y = std::get<int64_t>(args[1]);
      if (y == 0) fail(n.pos, "ceil_div: division by zero");
      if (x == std::numeric_limits<int64_t>::min() && y == -1) fail(n.pos, "ceil_div: integer overflow");
      int64_t q = x / y;
      if (x % y != 0 && ((x < 0) == (y < 0))) ++q;  // round toward +infinity
      return q;
    }
    if (yd == 0.0) fail(n.pos, "ceil_div: division by zero");
    return std::ceil(xd / yd);
  }
  if (f == "sqrt") {
    const double x = arg_num(0);
    if (x < 0) fail(n.pos, "sqrt of a negative number (" + to_string(args[0]) + ")");
    return std::sqrt(x);
  }
  if (f == "rsqrt") {
    const double x = arg_num(0);
    if (x <= 0) fail(n.pos, "rsqrt of a non-positive number (" + to_string(args[0]) + ")");
    return 1.0 / std::sqrt(x);
  }
  if (f == "log2") {
    const double x = arg_num(0);
    if (x <= 0) fail(n.pos, "log2 of a non-positive number (" + to_string(args[0]) + ")");
    return std::log2(x);
  }
  if (f == "pow") return std::pow(arg_num(0), arg_num(1));
  if (f == "abs") {
    arg_num(0);
    if (is_int(args[0])) {
      const int64_t x = std::get<int64_t>(args[0]);
      if (x == std::numeric_limits<int64_t>::min()) fail(n.pos, "abs: integer overflow");
      return x < 0 ? -x : x;
    }
    return std::fabs(std::get<double>(args[0]));
  }
  if (f == "floor" || f == "ceil") {
    arg_num(0);
    if (is_int(args[0])) return args[0];  // already integral
    const double x = std::get<double>(args[0]);
    return f == "floor" ? std::floor(x) : std::ceil(x);
  }
  if (f == "sizeof_dtype") {
    if (!is_string(args[0])) fail(n.kids[0]->pos, "sizeof_dtype() needs a string, got " + describe(args[0]));
    return sizeof_dtype(std::get<std::string>(args[0]), n);
  }
  fail(n.pos, "unknown function '" + f + "'");
}

Value eval_node(const Node& n, const Scope& scope) {
  switch (n.kind) {
    case Node::Kind::Literal:
      return n.literal;
    case Node::Kind::Name: {
      auto it = scope.find(n.name);
      if (it == scope.end()) fail(n.pos, "unknown name '" + n.name + "'");
      return it->second;
    }
    case Node::Kind::Unary: {
      const Value v = eval_node(*n.kids[0], scope);
      if (n.op == "!") return int64_t{truth(v, *n.kids[0]) ? 0 : 1};
      num(v, n, ("unary '" + n.op + "'").c_str());
      if (n.op == "+") return v;
      if (is_int(v)) {
        const int64_t x = std::get<int64_t>(v);
        if (x == std::numeric_limits<int64_t>::min()) fail(n.pos, "integer overflow in '-'");
        return -x;
      }
      return -std::get<double>(v);
    }
    case Node::Kind::Binary:
      return eval_binary(n, scope);
    case Node::Kind::Ternary:
      return truth(eval_node(*n.kids[0], scope), *n.kids[0]) ? eval_node(*n.kids[1], scope)
                                                             : eval_node(*n.kids[2], scope);
    case Node::Kind::Call:
      return eval_call(n, scope);
  }
  fail(n.pos, "corrupt expression");
}

}  // namespace

Value eval_tree(const Node& n, const Scope& scope) { return eval_node(n, scope); }

}  // namespace kf::expr_detail
