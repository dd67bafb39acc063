// How the spec's identifiers are spelled in an exported kernel's host code: the launcher's plan
// and the workspace query translate the same expressions with the same names, so both agree on
// every derived value.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "export/cxx_expr.hpp"
#include "export/kernel_model.hpp"

namespace kf::exporter {

// Params become baked literals, dims the d_-prefixed arguments, derived values v_-prefixed
// locals (once defined), device.* the fields of a kforge_device_info named `dev`.
class PlanNames {
 public:
  explicit PlanNames(const KernelModel& m) : m_(m) {}

  std::optional<CxxExpr> operator()(const std::string& name) const;
  // Throws ExprError (naming the expression) for a name or type error.
  CxxExpr translate(const Expr& e) const;
  void define_derived(const std::string& name, CxxType t) { derived_.push_back({name, t}); }

 private:
  const KernelModel& m_;
  std::vector<std::pair<std::string, CxxType>> derived_;
};

// The family's derived values as typed locals, in spec order, each with its expression as a
// comment; each is defined in `names` as it comes, since a later one may read it.
std::string derived_locals(const Family& f, PlanNames& names);

}  // namespace kf::exporter
