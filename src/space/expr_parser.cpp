// The expression language's parser: recursive descent to the tree of space/expr_node.hpp.
// Precedence, lowest first: ?:  ||  &&  == !=  < <= > >=  + -  * / %  unary - ! +
#include <cctype>
#include <charconv>
#include <cstdlib>

#include "space/expr_detail.hpp"
#include "space/expr_limits.hpp"

namespace kf::expr_detail {

namespace {

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
    const size_t height = checked_height(kids, pos);
    auto n = std::make_shared<Node>();
    n->height = height;
    n->kind = kind;
    n->pos = pos;
    n->op = std::move(op);
    n->kids = std::move(kids);
    return n;
  }

  NodePtr ternary() {
    DepthGuard guard(depth_, pos_);
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
    DepthGuard guard(depth_, pos_);
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

}  // namespace

NodePtr parse_tree(const std::string& text) { return Parser(text).parse_all(); }

}  // namespace kf::expr_detail
