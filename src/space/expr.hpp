// A small expression language for constraints, launch geometry, buffer sizes and costs.
//
// Grammar (C-like precedence): literals (123, 1.5, 'text' or "text"), identifiers
// (letters, digits, '_' and '.', e.g. BLOCK_M or device.smem_optin), unary - ! , * / %,
// + -, < <= > >=, == !=, &&, ||, cond ? a : b, and calls min(a,b) max(a,b) ceil_div(a,b)
// sqrt(x) rsqrt(x) log2(x) pow(a,b) abs(x) floor(x) ceil(x) sizeof_dtype('f16').
// Integer arithmetic stays integral (C semantics for / and %); mixing with a real gives a real.
// Strings support == and != only. Booleans are the integers 0 and 1.
#pragma once
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "space/value.hpp"

namespace kf {

struct ExprError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Expr {
 public:
  Expr() = default;
  // Parses text; throws ExprError naming the position and the problem.
  static Expr parse(const std::string& text);
  // Evaluates; throws ExprError for an unknown name, a type mismatch or division by zero.
  Value eval(const Scope& scope) const;
  int64_t eval_int(const Scope& scope) const;
  double eval_double(const Scope& scope) const;
  bool eval_bool(const Scope& scope) const;
  std::string eval_string(const Scope& scope) const;
  const std::string& text() const { return text_; }
  // Identifiers the expression reads (to report unknown names at load time).
  std::vector<std::string> identifiers() const;
  bool empty() const { return !root_; }

  struct Node;  // defined in space/expr_node.hpp
  const Node* root() const { return root_.get(); }  // null for an empty Expr

 private:
  std::string text_;
  std::shared_ptr<const Node> root_;
};

}  // namespace kf
