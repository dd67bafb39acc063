// Scopes for expressions (params, dims, device.*, derived), constraint checks, the family's
// search space for one shape and device, and launch geometry.
#include <algorithm>
#include <limits>
#include <memory>

#include "family/family.hpp"

namespace kf {

namespace {

void add_shape(Scope& scope, const Shape& s) {
  for (const auto& [name, value] : s) scope[name] = value;
}

// params, dims and device.*: everything but the derived values.
Scope base_scope(const Config& c, const Shape& s, const DeviceLimits& d) {
  Scope scope(c.begin(), c.end());
  add_shape(scope, s);
  d.add_to(scope);
  return scope;
}

}  // namespace

Scope make_scope(const Family& f, const Config& c, const Shape& s, const DeviceLimits& d) {
  Scope scope = base_scope(c, s, d);
  for (const auto& derived : f.derived) scope[derived.name] = derived.expr.eval(scope);
  return scope;
}

Scope make_reference_scope(const Family&, const Shape& s, const DeviceLimits& d) {
  Scope scope;
  add_shape(scope, s);
  d.add_to(scope);
  return scope;
}

std::optional<std::string> violated_constraint(const Family& f, const Config& c, const Shape& s,
                                               const DeviceLimits& d) {
  Scope scope = base_scope(c, s, d);
  for (const auto& derived : f.derived) {
    try {
      scope[derived.name] = derived.expr.eval(scope);
    } catch (const ExprError& e) {
      // A derived value that cannot be computed makes the config unusable for this shape.
      return derived.name + ": " + e.what();
    }
  }
  for (const auto& constraint : f.constraints) {
    try {
      if (!constraint.expr.eval_bool(scope)) return constraint.text;
    } catch (const ExprError& e) {
      return constraint.text + ": " + e.what();
    }
  }
  return std::nullopt;
}

namespace {

// When each derived value and constraint becomes decidable during enumeration: the length of
// the shortest prefix of the parameters (in spec order) that holds every parameter it reads,
// directly or through derived values. Dims and device.* are known from the start.
struct PrefixStages {
  std::vector<size_t> derived;      // per Family::derived
  std::vector<size_t> constraints;  // per Family::constraints, at least 1
  // per depth, the derived values (indices, in spec order) that its constraints read, directly
  // or through other derived values: a prefix check computes only those (scope lookups dominate)
  std::vector<std::vector<size_t>> derived_needed;
};

PrefixStages prefix_stages(const Family& f) {
  std::map<std::string, size_t> stage;
  for (size_t i = 0; i < f.params.size(); ++i) stage[f.params[i].name] = i + 1;
  auto stage_of = [&](const Expr& e) {
    size_t s = 0;
    for (const auto& id : e.identifiers())
      if (auto it = stage.find(id); it != stage.end()) s = std::max(s, it->second);
    return s;
  };
  PrefixStages out;
  for (const auto& derived : f.derived) {
    out.derived.push_back(stage_of(derived.expr));
    stage[derived.name] = out.derived.back();
  }
  for (const auto& constraint : f.constraints) out.constraints.push_back(std::max<size_t>(1, stage_of(constraint.expr)));
  std::map<std::string, size_t> derived_index;
  for (size_t i = 0; i < f.derived.size(); ++i) derived_index[f.derived[i].name] = i;
  out.derived_needed.resize(f.params.size() + 1);
  for (size_t depth = 1; depth <= f.params.size(); ++depth) {
    std::vector<bool> need(f.derived.size(), false);
    std::vector<const Expr*> todo;
    for (size_t i = 0; i < f.constraints.size(); ++i)
      if (out.constraints[i] == depth) todo.push_back(&f.constraints[i].expr);
    while (!todo.empty()) {
      const Expr* e = todo.back();
      todo.pop_back();
      for (const auto& id : e->identifiers())
        if (auto it = derived_index.find(id); it != derived_index.end() && !need[it->second]) {
          need[it->second] = true;
          todo.push_back(&f.derived[it->second].expr);
        }
    }
    for (size_t i = 0; i < need.size(); ++i)
      if (need[i]) out.derived_needed[depth].push_back(i);
  }
  return out;
}

// The constraints decided by exactly `depth` parameters, checked on a prefix of that length
// (the ones decided earlier passed on the way down), with only the derived values they read.
// On a complete config (depth = every parameter) every derived value is computed (an error
// invalidates the config, as in violated_constraint): with the checks on the way down, that is
// exactly violated_constraint's verdict, at a fraction of its cost (the enumeration of the
// attention space runs it ~1e6 times).
bool prefix_may_be_valid(const Family& f, const PrefixStages& stages, const Config& prefix, size_t depth,
                         const Shape& s, const DeviceLimits& d) {
  const bool complete = depth == f.params.size();
  if (!complete && std::find(stages.constraints.begin(), stages.constraints.end(), depth) == stages.constraints.end())
    return true;
  Scope scope = base_scope(prefix, s, d);
  try {
    if (complete) {
      for (const auto& derived : f.derived) scope[derived.name] = derived.expr.eval(scope);
    } else {
      for (size_t i : stages.derived_needed[depth]) scope[f.derived[i].name] = f.derived[i].expr.eval(scope);
    }
    for (size_t i = 0; i < f.constraints.size(); ++i) {
      // (constraints are staged at 1 or later, so with no parameters the complete check takes all)
      const bool decided_here = complete ? stages.constraints[i] >= depth : stages.constraints[i] == depth;
      if (decided_here && !f.constraints[i].expr.eval_bool(scope)) return false;
    }
  } catch (const ExprError&) {
    return false;  // as in violated_constraint: an error makes every completion invalid
  }
  return true;
}

}  // namespace

SearchSpace make_space(const Family& f, const Shape& s, const DeviceLimits& d) {
  // The space may outlive the caller's objects, so the predicates own copies.
  auto family = std::make_shared<const Family>(f);
  auto stages = std::make_shared<const PrefixStages>(prefix_stages(f));
  return SearchSpace(
      f.params, [family, s, d](const Config& c) { return !violated_constraint(*family, c, s, d); },
      [family, stages, s, d](const Config& prefix, size_t depth) {
        return prefix_may_be_valid(*family, *stages, prefix, depth, s, d);
      },
      [family, stages, s, d](const Config& c) {
        return prefix_may_be_valid(*family, *stages, c, family->params.size(), s, d);
      });
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
