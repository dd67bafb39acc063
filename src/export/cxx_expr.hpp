// Translates the spec's expression language (src/space/expr.hpp) into C++ source for the
// exported host launcher, so a launcher checks the very same constraints and computes the same
// launch geometry as kforge did, for any shape it is called with.
//
// The translation is typed statically (int -> long long, real -> double, string ->
// std::string_view), mirroring the evaluator's rules, so type errors surface at export time
// with the expression's text rather than as a C++ compile error. Division, modulo, overflow
// and domain errors (sqrt of a negative, ...) set a flag `kfx_bad` instead of being undefined
// behaviour: the launcher then rejects the shape, as the evaluator would have thrown.
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "space/expr.hpp"

namespace kf::exporter {

enum class CxxType { Int, Real, Str };

struct CxxExpr {
  std::string code;  // a C++ expression; reads a `bool kfx_bad` in scope
  CxxType type = CxxType::Int;
};

// Maps an identifier to its C++ spelling (a literal, a local, a struct member) and type;
// nullopt for an unknown name.
using NameResolver = std::function<std::optional<CxxExpr>(const std::string& name)>;

// Throws ExprError (one line, naming the expression) for a syntax, type or name error.
CxxExpr translate_expr(const std::string& text, const NameResolver& names);

// C++ spelling of a literal value of each kind.
std::string cxx_int_literal(int64_t v);
std::string cxx_real_literal(double v);
std::string cxx_string_literal(const std::string& s);  // std::string_view("...")
// "..." with quotes, backslashes and newlines escaped: a C, C++ and Python string literal.
std::string c_string_literal(const std::string& s);
std::string cxx_type_name(CxxType t);                   // long long | double | std::string_view

// Definitions of the kfx:: helpers the translated code calls (host-only C++17; placed in an
// anonymous namespace so several exported files link together): cxx_expr_helpers.cpp.
std::string cxx_expr_helpers();

// Helpers that turn a translated expression into a checked value of a given kind.
std::string cxx_as_int(const CxxExpr& e);     // long long; flags a non-integral real
std::string cxx_as_real(const CxxExpr& e);    // double; strings are rejected at translation
// bool; a string is not a condition: ExprError naming `text`.
std::string cxx_as_bool(const CxxExpr& e, const std::string& text);
}  // namespace kf::exporter
