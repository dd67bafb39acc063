// The kfx:: helpers exported host code calls (cxx_expr.hpp): they mirror the evaluator in
// space/expr_eval.cpp, and where it would throw they set kfx_bad instead.
#include "export/cxx_expr.hpp"

namespace kf::exporter {

namespace {

// truth(), and integer arithmetic that flags overflow and division by zero (undefined behaviour
// in C++, an error in the evaluator).
constexpr const char* kIntegerOps = R"CXX([[maybe_unused]] inline bool truth(long long v) { return v != 0; }
[[maybe_unused]] inline bool truth(double v) { return v != 0.0; }
[[maybe_unused]] inline long long iadd(bool& bad, long long a, long long b) {
  if ((b > 0 && a > LLONG_MAX - b) || (b < 0 && a < LLONG_MIN - b)) { bad = true; return 0; }
  return a + b;
}
[[maybe_unused]] inline long long isub(bool& bad, long long a, long long b) {
  if ((b < 0 && a > LLONG_MAX + b) || (b > 0 && a < LLONG_MIN + b)) { bad = true; return 0; }
  return a - b;
}
[[maybe_unused]] inline long long imul(bool& bad, long long a, long long b) {
  if (a == 0 || b == 0) return 0;
  if ((a == -1 && b == LLONG_MIN) || (b == -1 && a == LLONG_MIN)) { bad = true; return 0; }
  const long long r = static_cast<long long>(static_cast<unsigned long long>(a) * static_cast<unsigned long long>(b));
  if (a != -1 && r / a != b) { bad = true; return 0; }
  return r;
}
[[maybe_unused]] inline long long idiv(bool& bad, long long a, long long b) {
  if (b == 0 || (a == LLONG_MIN && b == -1)) { bad = true; return 0; }
  return a / b;
}
[[maybe_unused]] inline long long imod(bool& bad, long long a, long long b) {
  if (b == 0 || (a == LLONG_MIN && b == -1)) { bad = true; return 0; }
  return a % b;
}
[[maybe_unused]] inline long long ineg(bool& bad, long long a) {
  if (a == LLONG_MIN) { bad = true; return 0; }
  return -a;
}
[[maybe_unused]] inline long long iabs(bool& bad, long long a) { return a < 0 ? ineg(bad, a) : a; }
)CXX";

// Real division and modulo, min/max, ceil_div and the math functions, with the evaluator's
// domain errors.
constexpr const char* kFunctions = R"CXX([[maybe_unused]] inline double fdiv(bool& bad, double a, double b) {
  if (b == 0.0) { bad = true; return 0.0; }
  return a / b;
}
[[maybe_unused]] inline double fmod(bool& bad, double a, double b) {
  if (b == 0.0) { bad = true; return 0.0; }
  return std::fmod(a, b);
}
[[maybe_unused]] inline long long imin(long long a, long long b) { return a < b ? a : b; }
[[maybe_unused]] inline long long imax(long long a, long long b) { return a < b ? b : a; }
[[maybe_unused]] inline double fmin(double a, double b) { return b < a ? b : a; }
[[maybe_unused]] inline double fmax(double a, double b) { return a < b ? b : a; }
[[maybe_unused]] inline long long iceil_div(bool& bad, long long a, long long b) {
  if (b == 0 || (a == LLONG_MIN && b == -1)) { bad = true; return 0; }
  long long q = a / b;
  if (a % b != 0 && ((a < 0) == (b < 0))) ++q;
  return q;
}
[[maybe_unused]] inline double fceil_div(bool& bad, double a, double b) {
  if (b == 0.0) { bad = true; return 0.0; }
  return std::ceil(a / b);
}
[[maybe_unused]] inline double fsqrt(bool& bad, double x) {
  if (x < 0) { bad = true; return 0.0; }
  return std::sqrt(x);
}
[[maybe_unused]] inline double frsqrt(bool& bad, double x) {
  if (x <= 0) { bad = true; return 0.0; }
  return 1.0 / std::sqrt(x);
}
[[maybe_unused]] inline double flog2(bool& bad, double x) {
  if (x <= 0) { bad = true; return 0.0; }
  return std::log2(x);
}
)CXX";

// sizeof_dtype and the conversion of a value to an integer where one is needed.
constexpr const char* kConversions = R"CXX([[maybe_unused]] inline long long sizeof_dtype(bool& bad, std::string_view t) {
  if (t == "f16" || t == "bf16") return 2;
  if (t == "f32" || t == "i32") return 4;
  if (t == "f64") return 8;
  bad = true;
  return 0;
}
// A real that is exactly integral is accepted where an integer is needed (Expr::eval_int).
[[maybe_unused]] inline long long to_int(bool& bad, double x) {
  if (!std::isfinite(x) || std::floor(x) != x || std::fabs(x) >= 9.2e18) { bad = true; return 0; }
  return static_cast<long long>(x);
}
[[maybe_unused]] inline long long to_int(bool&, long long x) { return x; }
)CXX";

}  // namespace

std::string cxx_expr_helpers() {
  // [[maybe_unused]]: a file uses only the helpers its expressions need, and nvcc's front end
  // warns about unreferenced functions with internal linkage.
  return std::string("namespace {\nnamespace kfx {\n") + kIntegerOps + kFunctions + kConversions +
         "}  // namespace kfx\n}  // namespace\n";
}

}  // namespace kf::exporter
