#include "export/plan_names.hpp"

#include <functional>

#include "export/device_info_gen.hpp"

namespace kf::exporter {

std::optional<CxxExpr> PlanNames::operator()(const std::string& name) const {
  // Latest first: a derived value's name is looked up as it was last defined.
  for (auto it = derived_.rbegin(); it != derived_.rend(); ++it)
    if (it->first == name) return CxxExpr{"v_" + name, it->second};
  if (auto c = m_.config.find(name); c != m_.config.end()) {
    const Value& v = c->second;
    if (is_string(v)) return CxxExpr{cxx_string_literal(std::get<std::string>(v)), CxxType::Str};
    if (is_int(v)) return CxxExpr{cxx_int_literal(std::get<int64_t>(v)), CxxType::Int};
    return CxxExpr{cxx_real_literal(std::get<double>(v)), CxxType::Real};
  }
  if (const DimSpec* d = m_.family->dim(name)) return CxxExpr{"d_" + name, d->is_enum ? CxxType::Str : CxxType::Int};
  if (name.rfind("device.", 0) == 0) {
    const std::string field = name.substr(7);
    for (const auto& f : device_fields())
      if (f == field) return CxxExpr{"dev." + field, CxxType::Int};
  }
  return std::nullopt;
}

CxxExpr PlanNames::translate(const Expr& e) const { return translate_expr(e.text(), std::cref(*this)); }

std::string derived_locals(const Family& f, PlanNames& names) {
  std::string out;
  for (const NamedExpr& d : f.derived) {
    const CxxExpr e = names.translate(d.expr);
    out += "  const " + cxx_type_name(e.type) + " v_" + d.name + " = " + e.code + ";  // " + d.expr.text() + "\n";
    out += "  (void)v_" + d.name + ";\n";
    names.define_derived(d.name, e.type);
  }
  return out;
}

}  // namespace kf::exporter
