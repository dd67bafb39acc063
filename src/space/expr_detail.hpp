// Shared by the expression parser and evaluator (internal to space/): errors located in the
// text, and how values are named in them.
#pragma once
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "space/expr_node.hpp"

namespace kf::expr_detail {

using Node = Expr::Node;
using NodePtr = std::shared_ptr<const Node>;

// An error at a position; the public entry points add the expression's text.
struct LocatedError {
  size_t pos;
  std::string message;
};

[[noreturn]] inline void fail(size_t pos, std::string message) { throw LocatedError{pos, std::move(message)}; }

// The expression as an error quotes it: a generated 40,000-character chain is cut short, so
// that the error stays one readable line.
std::string quoted(const std::string& text);
std::string format_error(const std::string& text, size_t pos, const std::string& message);
// "string 'f16'" or the number.
std::string describe(const Value& v);

// The tree of text (throws LocatedError), and its value in a scope (throws LocatedError).
NodePtr parse_tree(const std::string& text);
Value eval_tree(const Node& n, const Scope& scope);

}  // namespace kf::expr_detail
