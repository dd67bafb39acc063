// The constraints as a validity predicate: the family's space for one shape and device, and the
// verdict on one config (violated_constraint). Both check in the same order, so a config the
// space rejects and a config violated_constraint rejects are the same, and an expression that
// cannot be evaluated fails both at the same place (docs/family_spec.md, "Walks, sampling and
// priors"):
//   - each constraint at the first prefix of the parameters (in spec order) that fixes every
//     parameter it reads, directly or through derived values; in list order within a prefix;
//     a config is rejected at the first that does not hold;
//   - a derived value when a constraint needs it; the rest only for a config that passes
//     every constraint.
// An evaluation error (division by zero, a string where a number belongs, an overflow) is the
// spec's error, not the config's: it is thrown as a SpecError naming the spec field, the
// expression and the config, never taken for "invalid", which would silently shrink the space.
#include <algorithm>
#include <map>
#include <memory>

#include "family/family.hpp"

namespace kf {

namespace {

// When each constraint is decided, and what it needs.
struct Stages {
  std::vector<std::vector<size_t>> needs;  // per constraint: derived values it reads (transitively), in spec order
  std::vector<std::vector<size_t>> at;     // per prefix length 0..n: its constraints, in list order
};

Stages make_stages(const Family& f) {
  const size_t n = f.params.size();
  std::map<std::string, size_t> stage;
  for (size_t i = 0; i < n; ++i) stage[f.params[i].name] = i + 1;
  std::map<std::string, size_t> derived_index;
  // Per derived value: its stage and the derived values it reads directly.
  std::vector<std::vector<size_t>> reads(f.derived.size());
  const auto stage_of = [&](const Expr& e, std::vector<size_t>* read) {
    size_t s = 0;
    for (const auto& id : e.identifiers()) {
      if (auto it = stage.find(id); it != stage.end()) s = std::max(s, it->second);
      if (auto it = derived_index.find(id); it != derived_index.end() && read) read->push_back(it->second);
    }
    return s;
  };
  for (size_t i = 0; i < f.derived.size(); ++i) {
    stage[f.derived[i].name] = stage_of(f.derived[i].expr, &reads[i]);
    derived_index[f.derived[i].name] = i;
  }
  Stages out;
  out.at.resize(n + 1);
  std::vector<size_t> mark(f.derived.size(), SIZE_MAX);  // the constraint that last marked each
  for (size_t c = 0; c < f.constraints.size(); ++c) {
    std::vector<size_t> direct;
    // A constraint that reads no parameter is decided by the first (a space with none has one
    // config, decided at length 0).
    const size_t s = n == 0 ? 0 : std::max<size_t>(1, stage_of(f.constraints[c].expr, &direct));
    out.at[s].push_back(c);
    std::vector<size_t> need;
    while (!direct.empty()) {
      const size_t k = direct.back();
      direct.pop_back();
      if (mark[k] == c) continue;
      mark[k] = c;
      need.push_back(k);
      direct.insert(direct.end(), reads[k].begin(), reads[k].end());
    }
    std::sort(need.begin(), need.end());  // spec order: a derived value reads only earlier ones
    out.needs.push_back(std::move(need));
  }
  return out;
}

// One config (or prefix) being checked: its scope, filled with derived values as they are needed.
class Check {
 public:
  Check(const Family& f, const Stages& st, const Config& c, const Shape& s, const DeviceLimits& d)
      : f_(f), st_(st), config_(c), shape_(s), device_(d), scope_(c.begin(), c.end()), have_(f.derived.size(), 0) {
    for (const auto& [name, value] : full_shape(f, s)) scope_[name] = value;
    d.add_to(scope_);
  }

  // Does constraint i hold? Throws SpecError when it (or a derived value it reads) fails to evaluate.
  bool holds(size_t i) {
    for (size_t k : st_.needs[i]) derive(k);
    try {
      return f_.constraints[i].expr.eval_bool(scope_);
    } catch (const ExprError& e) {
      fail("/constraints/" + std::to_string(i), e.what());
    }
  }

  // Every derived value not computed yet (a config that passed every constraint).
  void derive_all() {
    for (size_t k = 0; k < f_.derived.size(); ++k) derive(k);
  }

 private:
  void derive(size_t k) {
    if (have_[k]) return;
    const NamedExpr& d = f_.derived[k];
    try {
      scope_[d.name] = d.expr.eval(scope_);
    } catch (const ExprError& e) {
      fail("/derived/" + d.name, e.what());
    }
    have_[k] = 1;
  }

  [[noreturn]] void fail(const std::string& field, const std::string& error) const {
    throw SpecError(f_.spec_path.string() + ":" + field + ": " + error + ", for config " +
                    (config_.empty() ? std::string("{}") : to_string(config_)) + " at shape " + to_string(shape_) +
                    " on " + device_.arch());
  }

  const Family& f_;
  const Stages& st_;
  const Config& config_;
  const Shape& shape_;
  const DeviceLimits& device_;
  Scope scope_;
  std::vector<char> have_;
};

// The check of a prefix of `depth` parameters: the constraints it decides; on a complete config
// every derived value too.
bool prefix_holds(const Family& f, const Stages& st, const Config& prefix, size_t depth, const Shape& s,
                  const DeviceLimits& d) {
  const bool complete = depth == f.params.size();
  if (!complete && st.at[depth].empty()) return true;
  Check check(f, st, prefix, s, d);
  for (size_t i : st.at[depth])
    if (!check.holds(i)) return false;
  if (complete) check.derive_all();
  return true;
}

// The whole check of a complete config, in the order the prefixes take: the first constraint
// that does not hold (its index), or nullopt.
std::optional<size_t> first_violated(const Family& f, const Stages& st, const Config& c, const Shape& s,
                                     const DeviceLimits& d) {
  Check check(f, st, c, s, d);
  for (const auto& stage : st.at)
    for (size_t i : stage)
      if (!check.holds(i)) return i;
  check.derive_all();
  return std::nullopt;
}

}  // namespace

std::optional<std::string> violated_constraint(const Family& f, const Config& c, const Shape& s,
                                               const DeviceLimits& d) {
  if (auto i = first_violated(f, make_stages(f), c, s, d)) return f.constraints[*i].text;
  return std::nullopt;
}

SearchSpace make_space(const Family& f, const Shape& s, const DeviceLimits& d) {
  // The space may outlive the caller's objects, so the predicates own copies.
  auto family = std::make_shared<const Family>(f);
  auto stages = std::make_shared<const Stages>(make_stages(f));
  return SearchSpace(
      f.params,
      [family, stages, s, d](const Config& c) { return !first_violated(*family, *stages, c, s, d); },
      [family, stages, s, d](const Config& prefix, size_t depth) {
        return prefix_holds(*family, *stages, prefix, depth, s, d);
      },
      [family, stages, s, d](const Config& c) {
        return prefix_holds(*family, *stages, c, family->params.size(), s, d);
      });
}

}  // namespace kf
