// The parsed form of an Expr, for the code that walks it: the evaluator (space/expr.cpp) and
// the C++ translator of exported launchers (export/cxx_expr.cpp), so the grammar has one parser.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "space/expr.hpp"

namespace kf {

struct Expr::Node {
  enum class Kind { Literal, Name, Unary, Binary, Ternary, Call };
  Kind kind = Kind::Literal;
  size_t pos = 0;     // offset in the text, for error messages
  Value literal;      // Literal
  std::string name;   // Name, or the function of a Call
  std::string op;     // Unary / Binary operator
  std::vector<std::shared_ptr<const Node>> kids;  // Unary 1, Binary 2, Ternary 3 (cond, yes, no), Call: args
  // Levels of the subtree (a leaf is 1). The parser bounds it, so that the recursive walks
  // over the tree (evaluation, translation, destruction) cannot overflow the stack.
  size_t height = 1;
};

}  // namespace kf
