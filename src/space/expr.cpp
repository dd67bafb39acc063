// The expression language: a recursive-descent parser to a small AST, and its evaluator.
// Errors are one line: "in '<text>': <problem> (at column N)".
#include "space/expr.hpp"
#include "space/expr_node.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace kf {

namespace {

using NodePtr = std::shared_ptr<const Expr::Node>;
using Node = Expr::Node;

// An error at a position; the public entry points add the expression's text.
struct LocatedError {
  size_t pos;
  std::string message;
};

[[noreturn]] void fail(size_t pos, std::string message) { throw LocatedError{pos, std::move(message)}; }

// The expression as an error quotes it: a generated 40,000-character chain is cut short, so
// that the error stays one readable line.
std::string quoted(const std::string& text) {
  constexpr size_t kShown = 80;
  if (text.size() <= kShown) return "'" + text + "'";
  return "'" + text.substr(0, kShown) + "...' (" + std::to_string(text.size()) + " characters)";
}

std::string format_error(const std::string& text, size_t pos, const std::string& message) {
  return "in " + quoted(text) + ": " + message + " (at column " + std::to_string(pos + 1) + ")";
}

struct FunctionInfo {
  const char* name;
  size_t min_args, max_args;
};
constexpr FunctionInfo kFunctions[] = {
    {"min", 2, 16},  {"max", 2, 16},   {"ceil_div", 2, 2}, {"sqrt", 1, 1},
    {"rsqrt", 1, 1}, {"log2", 1, 1},   {"pow", 2, 2},      {"abs", 1, 1},
    {"floor", 1, 1}, {"ceil", 1, 1},   {"sizeof_dtype", 1, 1},
};

const FunctionInfo* find_function(const std::string& name) {
  for (const auto& f : kFunctions)
    if (name == f.name) return &f;
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// Parser. Precedence, lowest first: ?:  ||  &&  == !=  < <= > >=  + -  * / %  unary - ! +

class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  NodePtr parse_all() {
    skip_space();
    if (pos_ == s_.size()) fail(pos_, "empty expression");
    NodePtr root = ternary();
    skip_space();
    if (pos_ != s_.size()) fail(pos_, "unexpected '" + std::string(1, s_[pos_]) + "'");
    return root;
  }

 private:
  // Deep nesting would overflow the stack; real expressions are never this deep.
  static constexpr int kMaxDepth = 200;
  // A left-associative chain (1+1+...+1) is parsed by a loop but still builds a tree one
  // level per operator, which the evaluator walks recursively: bound the tree's height too.
  static constexpr size_t kMaxHeight = 1000;

  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser) : p(parser) {
      if (++p.depth_ > kMaxDepth) fail(p.pos_, "expression nested too deeply");
    }
    ~DepthGuard() { --p.depth_; }
  };

  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }

  // Consumes op if it comes next (and is not the start of a longer operator).
  bool accept(std::string_view op) {
    skip_space();
    if (s_.compare(pos_, op.size(), op) != 0) return false;
    const char next = pos_ + op.size() < s_.size() ? s_[pos_ + op.size()] : '\0';
    // "<" must not match "<=", "!" not "!=", "=" alone is never an operator.
    if ((op == "<" || op == ">" || op == "!") && next == '=') return false;
    pos_ += op.size();
    return true;
  }

  void expect(char ch, const char* what) {
    skip_space();
    if (pos_ >= s_.size() || s_[pos_] != ch) {
      fail(pos_, std::string("expected ") + what +
                     (pos_ >= s_.size() ? " at the end" : ", got '" + std::string(1, s_[pos_]) + "'"));
    }
    ++pos_;
  }

  static NodePtr make(Node::Kind kind, size_t pos, std::string op, std::vector<NodePtr> kids) {
    size_t height = 1;
    for (const auto& k : kids) height = std::max(height, k->height + 1);
    if (height > kMaxHeight)
      fail(pos, "expression too deep (more than " + std::to_string(kMaxHeight) +
                    " nested operations; split it into derived values)");
    auto n = std::make_shared<Node>();
    n->height = height;
    n->kind = kind;
    n->pos = pos;
    n->op = std::move(op);
    n->kids = std::move(kids);
    return n;
  }

  NodePtr ternary() {
    DepthGuard guard(*this);
    NodePtr cond = logical_or();
    skip_space();
    const size_t at = pos_;
    if (!accept("?")) return cond;
    NodePtr yes = ternary();
    expect(':', "':' of '?:'");
    NodePtr no = ternary();
    return make(Node::Kind::Ternary, at, "?:", {cond, yes, no});
  }

  // One left-associative precedence level.
  template <typename Next>
  NodePtr binary_level(std::initializer_list<std::string_view> ops, Next next) {
    NodePtr lhs = (this->*next)();
    for (;;) {
      skip_space();
      const size_t at = pos_;
      std::string_view matched;
      for (auto op : ops)
        if (accept(op)) {
          matched = op;
          break;
        }
      if (matched.empty()) return lhs;
      NodePtr rhs = (this->*next)();
      lhs = make(Node::Kind::Binary, at, std::string(matched), {lhs, rhs});
    }
  }

  NodePtr logical_or() { return binary_level({"||"}, &Parser::logical_and); }
  NodePtr logical_and() { return binary_level({"&&"}, &Parser::equality); }
  NodePtr equality() { return binary_level({"==", "!="}, &Parser::relational); }
  NodePtr relational() { return binary_level({"<=", ">=", "<", ">"}, &Parser::additive); }
  NodePtr additive() { return binary_level({"+", "-"}, &Parser::multiplicative); }
  NodePtr multiplicative() { return binary_level({"*", "/", "%"}, &Parser::unary); }

  NodePtr unary() {
    DepthGuard guard(*this);
    skip_space();
    const size_t at = pos_;
    for (std::string_view op : {"-", "!", "+"})
      if (accept(op)) return make(Node::Kind::Unary, at, std::string(op), {unary()});
    return primary();
  }

  NodePtr primary() {
    skip_space();
    if (pos_ >= s_.size()) fail(pos_, "expected a number, name, string or '(' at the end");
    const char ch = s_[pos_];
    if (ch == '(') {
      ++pos_;
      NodePtr inner = ternary();
      expect(')', "')'");
      return inner;
    }
    if (std::isdigit(static_cast<unsigned char>(ch)) ||
        (ch == '.' && pos_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_ + 1]))))
      return number();
    if (ch == '\'' || ch == '"') return string_literal();
    if (std::isalpha(static_cast<unsigned char>(ch)) || ch == '_') return name_or_call();
    fail(pos_, "expected a number, name, string or '(', got '" + std::string(1, ch) + "'");
  }

  NodePtr number() {
    const size_t start = pos_;
    bool real = false;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '.') {
      real = true;
      ++pos_;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      size_t p = pos_ + 1;
      if (p < s_.size() && (s_[p] == '+' || s_[p] == '-')) ++p;
      if (p < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p]))) {
        real = true;
        pos_ = p;
        while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      }
    }
    if (pos_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
      fail(pos_, "unexpected '" + std::string(1, s_[pos_]) + "' after a number");
    const std::string digits = s_.substr(start, pos_ - start);
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::Literal;
    n->pos = start;
    if (real) {
      // strtod, not from_chars: it accepts the leading-'.' form ".5".
      n->literal = std::strtod(digits.c_str(), nullptr);
    } else {
      int64_t v = 0;
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
      if (ec != std::errc()) fail(start, "integer " + digits + " is too large");
      n->literal = v;
    }
    return n;
  }

  NodePtr string_literal() {
    const size_t start = pos_;
    const char quote = s_[pos_++];
    const size_t end = s_.find(quote, pos_);
    if (end == std::string::npos) fail(start, "unterminated string");
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::Literal;
    n->pos = start;
    n->literal = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return n;
  }

  NodePtr name_or_call() {
    const size_t start = pos_;
    while (pos_ < s_.size() &&
           (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_' || s_[pos_] == '.'))
      ++pos_;
    std::string name = s_.substr(start, pos_ - start);
    if (name.back() == '.' || name.find("..") != std::string::npos)
      fail(start, "malformed name '" + name + "'");
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == '(') {
      const FunctionInfo* f = find_function(name);
      if (!f) fail(start, "unknown function '" + name + "'");
      ++pos_;
      std::vector<NodePtr> args;
      skip_space();
      if (pos_ < s_.size() && s_[pos_] == ')') {
        ++pos_;
      } else {
        for (;;) {
          args.push_back(ternary());
          skip_space();
          if (pos_ < s_.size() && s_[pos_] == ',') {
            ++pos_;
            continue;
          }
          expect(')', "',' or ')'");
          break;
        }
      }
      if (args.size() < f->min_args || args.size() > f->max_args) {
        const std::string want = f->min_args == f->max_args
                                     ? std::to_string(f->min_args)
                                     : "at least " + std::to_string(f->min_args);
        fail(start, name + "() takes " + want + " argument" + (f->max_args == 1 ? "" : "s") +
                        ", got " + std::to_string(args.size()));
      }
      NodePtr call = make(Node::Kind::Call, start, "", std::move(args));
      std::const_pointer_cast<Node>(call)->name = std::move(name);
      return call;
    }
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::Name;
    n->pos = start;
    n->name = std::move(name);
    return n;
  }

  const std::string& s_;
  size_t pos_ = 0;
  int depth_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Evaluator

std::string describe(const Value& v) {
  if (is_string(v)) return "string '" + std::get<std::string>(v) + "'";
  return to_string(v);
}

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
    if (op == "<") return int64_t{x < y};
    if (op == "<=") return int64_t{x <= y};
    if (op == ">") return int64_t{x > y};
    if (op == ">=") return int64_t{x >= y};
    if (op == "==") return int64_t{x == y};
    if (op == "!=") return int64_t{x != y};
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
    if (op == "<") return int64_t{x < y};
    if (op == "<=") return int64_t{x <= y};
    if (op == ">") return int64_t{x > y};
    if (op == ">=") return int64_t{x >= y};
    if (op == "==") return int64_t{x == y};
    if (op == "!=") return int64_t{x != y};
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

void collect_names(const Node& n, std::vector<std::string>& out) {
  if (n.kind == Node::Kind::Name && std::find(out.begin(), out.end(), n.name) == out.end())
    out.push_back(n.name);
  for (const auto& k : n.kids) collect_names(*k, out);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public interface

Expr Expr::parse(const std::string& text) {
  Expr e;
  e.text_ = text;
  try {
    Parser parser(e.text_);
    e.root_ = parser.parse_all();
  } catch (const LocatedError& err) {
    throw ExprError(format_error(text, err.pos, err.message));
  }
  return e;
}

Value Expr::eval(const Scope& scope) const {
  if (!root_) throw ExprError("in '': empty expression");
  try {
    return eval_node(*root_, scope);
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
  if (root_) collect_names(*root_, out);
  return out;
}

}  // namespace kf
