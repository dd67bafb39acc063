// Scopes for expressions (params, dims, device.*, derived) and launch geometry (the constraint
// checks and the family's space are in constraint_check.cpp).
#include <limits>

#include "family/family.hpp"

namespace kf {

namespace {

// every dim: those the shape leaves out at their defaults
void add_shape(Scope& scope, const Family& f, const Shape& s) {
  for (const auto& [name, value] : full_shape(f, s)) scope[name] = value;
}

// params, dims and device.*: everything but the derived values.
Scope base_scope(const Family& f, const Config& c, const Shape& s, const DeviceLimits& d) {
  Scope scope(c.begin(), c.end());
  add_shape(scope, f, s);
  d.add_to(scope);
  return scope;
}

}  // namespace

Scope make_scope(const Family& f, const Config& c, const Shape& s, const DeviceLimits& d) {
  Scope scope = base_scope(f, c, s, d);
  for (const auto& derived : f.derived) {
    try {
      scope[derived.name] = derived.expr.eval(scope);
    } catch (const ExprError& e) {
      throw ExprError("derived value '" + derived.name + "' " + e.what());
    }
  }
  return scope;
}

Scope make_reference_scope(const Family& f, const Shape& s, const DeviceLimits& d) {
  Scope scope;
  add_shape(scope, f, s);
  d.add_to(scope);
  return scope;
}

namespace {

unsigned checked_extent(const Expr& e, const Scope& scope, const char* what, int64_t min_value) {
  if (e.empty()) return static_cast<unsigned>(min_value);
  const int64_t v = e.eval_int(scope);
  if (v < min_value || v > std::numeric_limits<unsigned>::max())
    throw ExprError("in '" + e.text() + "': " + what + " = " + std::to_string(v) + " is out of range [" +
                    std::to_string(min_value) + ", " + std::to_string(std::numeric_limits<unsigned>::max()) + "]");
  return static_cast<unsigned>(v);
}

}  // namespace

ResolvedLaunch resolve_launch(const LaunchSpec& l, const Scope& scope) {
  static const char* const kGrid[] = {"grid.x", "grid.y", "grid.z"};
  static const char* const kBlock[] = {"block.x", "block.y", "block.z"};
  ResolvedLaunch r;
  for (size_t i = 0; i < 3; ++i) {
    r.grid[i] = checked_extent(l.grid[i], scope, kGrid[i], 1);
    r.block[i] = checked_extent(l.block[i], scope, kBlock[i], 1);
  }
  r.smem = checked_extent(l.smem, scope, "smem", 0);
  return r;
}

}  // namespace kf
