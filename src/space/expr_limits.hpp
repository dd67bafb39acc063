// How deep an expression may go (internal to space/). The parser recurses once per nesting
// level and the evaluator, the C++ translator and the tree's destructor once per tree level,
// so both are bounded at parse time: a spec cannot overflow the stack.
#pragma once
#include <cstddef>
#include <string>

#include "space/expr_detail.hpp"

namespace kf::expr_detail {

// Nesting of parentheses, unary operators and ?: while parsing; real expressions are never this deep.
inline constexpr int kMaxDepth = 200;
// A left-associative chain (1+1+...+1) is parsed by a loop but still builds a tree one level
// per operator: the tree's height is bounded too.
inline constexpr size_t kMaxHeight = 1000;

// Counts the parser's recursion; fails past kMaxDepth.
class DepthGuard {
 public:
  DepthGuard(int& depth, size_t pos) : depth_(depth) {
    if (++depth_ > kMaxDepth) fail(pos, "expression nested too deeply");
  }
  ~DepthGuard() { --depth_; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;

 private:
  int& depth_;
};

// The height of a node over kids; fails past kMaxHeight.
inline size_t checked_height(const std::vector<NodePtr>& kids, size_t pos) {
  size_t height = 1;
  for (const auto& k : kids) height = std::max(height, k->height + 1);
  if (height > kMaxHeight)
    fail(pos, "expression too deep (more than " + std::to_string(kMaxHeight) +
                  " nested operations; split it into derived values)");
  return height;
}

}  // namespace kf::expr_detail
