// The expression language: precedence, C integer semantics, types, functions and errors.
#include <gtest/gtest.h>

#include <cmath>

#include "space/expr.hpp"

using namespace kf;

namespace {

Value ev(const std::string& text, const Scope& scope = {}) { return Expr::parse(text).eval(scope); }
int64_t evi(const std::string& text, const Scope& scope = {}) { return Expr::parse(text).eval_int(scope); }
double evd(const std::string& text, const Scope& scope = {}) { return Expr::parse(text).eval_double(scope); }

// The message of the ExprError thrown by f, or "" if none was thrown.
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const ExprError& e) {
    return e.what();
  }
  return "";
}

std::string parse_error(const std::string& text) {
  return error_of([&] { Expr::parse(text); });
}
std::string eval_error(const std::string& text, const Scope& scope = {}) {
  return error_of([&] { Expr::parse(text).eval(scope); });
}

}  // namespace

TEST(Expr, Precedence) {
  EXPECT_EQ(evi("1 + 2 * 3"), 7);
  EXPECT_EQ(evi("(1 + 2) * 3"), 9);
  EXPECT_EQ(evi("10 - 4 - 3"), 3);  // left associative
  EXPECT_EQ(evi("100 / 10 / 5"), 2);
  EXPECT_EQ(evi("2 + 3 < 6"), 1);
  EXPECT_EQ(evi("1 < 2 == 1"), 1);  // relational binds tighter than equality
  EXPECT_EQ(evi("1 || 0 && 0"), 1);  // && binds tighter than ||
  EXPECT_EQ(evi("-2 * -3"), 6);
  EXPECT_EQ(evi("!0 + 1"), 2);
  EXPECT_EQ(evi("!!5"), 1);
  EXPECT_EQ(evi("1 ? 2 : 0 ? 3 : 4"), 2);  // right associative
  EXPECT_EQ(evi("0 ? 2 : 0 ? 3 : 4"), 4);
  EXPECT_EQ(evi("1 != 2 != 0"), 1);
  EXPECT_EQ(evi("3 >= 3 && 3 <= 3 && !(3 > 3) && !(3 < 3)"), 1);
}

TEST(Expr, IntegerDivisionFollowsC) {
  EXPECT_EQ(evi("7 / 2"), 3);
  EXPECT_EQ(evi("-7 / 2"), -3);  // truncation toward zero
  EXPECT_EQ(evi("7 % -3"), 1);
  EXPECT_EQ(evi("-7 % 3"), -1);
  EXPECT_TRUE(is_int(ev("6 / 3")));
}

TEST(Expr, MixedArithmeticGivesReals) {
  EXPECT_TRUE(std::holds_alternative<double>(ev("1 + 0.5")));
  EXPECT_DOUBLE_EQ(evd("7 / 2.0"), 3.5);
  EXPECT_DOUBLE_EQ(evd(".5 * 4"), 2.0);
  EXPECT_DOUBLE_EQ(evd("1e3 + 1.5E-1"), 1000.15);
  EXPECT_DOUBLE_EQ(evd("7.5 % 2"), 1.5);
  EXPECT_EQ(evi("2.0 * 3"), 6);  // an integral real is accepted where an int is wanted
  EXPECT_THROW(Expr::parse("2.5").eval_int({}), ExprError);
}

TEST(Expr, Functions) {
  EXPECT_EQ(evi("min(3, 1, 2)"), 1);
  EXPECT_EQ(evi("max(3, 7)"), 7);
  EXPECT_TRUE(std::holds_alternative<double>(ev("max(1, 2.5)")));
  EXPECT_EQ(evi("ceil_div(10, 3)"), 4);
  EXPECT_EQ(evi("ceil_div(9, 3)"), 3);
  EXPECT_EQ(evi("ceil_div(-7, 2)"), -3);
  EXPECT_EQ(evi("ceil_div(0, 5)"), 0);
  EXPECT_DOUBLE_EQ(evd("sqrt(16)"), 4.0);
  EXPECT_DOUBLE_EQ(evd("rsqrt(64)"), 0.125);
  EXPECT_DOUBLE_EQ(evd("log2(1024)"), 10.0);
  EXPECT_DOUBLE_EQ(evd("pow(2, 10)"), 1024.0);
  EXPECT_EQ(evi("abs(-5)"), 5);
  EXPECT_DOUBLE_EQ(evd("abs(-2.5)"), 2.5);
  EXPECT_DOUBLE_EQ(evd("floor(-1.5)"), -2.0);
  EXPECT_DOUBLE_EQ(evd("ceil(1.2)"), 2.0);
  EXPECT_TRUE(is_int(ev("floor(7)")));
  EXPECT_EQ(evi("sizeof_dtype('f16') + sizeof_dtype(\"bf16\") + sizeof_dtype('f32') + "
                "sizeof_dtype('i32') + sizeof_dtype('f64')"),
            2 + 2 + 4 + 4 + 8);
}

TEST(Expr, StringsCompareForEquality) {
  const Scope s{{"dtype", std::string("f16")}, {"MMA", std::string("wgmma")}};
  EXPECT_EQ(evi("dtype == 'f16'", s), 1);
  EXPECT_EQ(evi("dtype != \"f16\"", s), 0);
  EXPECT_EQ(Expr::parse("MMA == 'wgmma' ? 'a' : ''").eval_string(s), "a");
  EXPECT_EQ(evi("sizeof_dtype(dtype) * 8", s), 16);
  EXPECT_EQ(Expr::parse("\"it's\"").eval_string({}), "it's");  // the other quote needs no escape
  EXPECT_THROW(Expr::parse("'it''s'"), ExprError);  // no escapes: two adjacent literals
}

TEST(Expr, DottedIdentifiersAndScope) {
  const Scope s{{"device.smem_optin", int64_t{232448}}, {"BLOCK_M", int64_t{128}}, {"STAGES", int64_t{3}}};
  EXPECT_EQ(evi("STAGES * BLOCK_M * 64 * 2 <= device.smem_optin", s), 1);
  EXPECT_TRUE(Expr::parse("device.smem_optin > 0").eval_bool(s));
}

TEST(Expr, ShortCircuitSkipsErrors) {
  // The unevaluated side would divide by zero / read an unknown name.
  EXPECT_EQ(evi("0 && 1 / 0"), 0);
  EXPECT_EQ(evi("1 || missing"), 1);
  EXPECT_EQ(evi("1 ? 2 : 1 / 0"), 2);
}

TEST(Expr, IdentifiersListsNamesNotFunctions) {
  const Expr e = Expr::parse("ceil_div(N, BLOCK_N) * max(M, device.sm_count) + N");
  EXPECT_EQ(e.identifiers(), (std::vector<std::string>{"N", "BLOCK_N", "M", "device.sm_count"}));
  EXPECT_TRUE(Expr::parse("sqrt(4) + 'x' == 'y'").identifiers().empty());
  EXPECT_TRUE(Expr().empty());
  EXPECT_FALSE(e.empty());
  EXPECT_EQ(e.text(), "ceil_div(N, BLOCK_N) * max(M, device.sm_count) + N");
}

TEST(Expr, ParseErrorsNameTextAndPosition) {
  EXPECT_EQ(parse_error("BLOCK_M +"), "in 'BLOCK_M +': expected a number, name, string or '(' at the end (at column 10)");
  EXPECT_EQ(parse_error("(1 + 2"), "in '(1 + 2': expected ')' at the end (at column 7)");
  EXPECT_EQ(parse_error("1 2"), "in '1 2': unexpected '2' (at column 3)");
  EXPECT_NE(parse_error("").find("empty expression"), std::string::npos);
  EXPECT_NE(parse_error("foo(1)").find("unknown function 'foo'"), std::string::npos);
  EXPECT_NE(parse_error("min(1)").find("min() takes at least 2 arguments, got 1"), std::string::npos);
  EXPECT_NE(parse_error("sqrt(1, 2)").find("sqrt() takes 1 argument, got 2"), std::string::npos);
  EXPECT_NE(parse_error("'abc").find("unterminated string"), std::string::npos);
  EXPECT_NE(parse_error("a = 1").find("unexpected '='"), std::string::npos);
  EXPECT_NE(parse_error("a & b").find("unexpected '&'"), std::string::npos);
  EXPECT_NE(parse_error("device.").find("malformed name"), std::string::npos);
  EXPECT_NE(parse_error("12abc").find("after a number"), std::string::npos);
  EXPECT_NE(parse_error("99999999999999999999").find("too large"), std::string::npos);
  EXPECT_NE(parse_error(std::string(500, '(') + "1" + std::string(500, ')')).find("nested too deeply"),
            std::string::npos);
  EXPECT_EQ(parse_error("1 ? 2 :").find("in '1 ? 2 :': "), 0u);
}

TEST(Expr, EvalErrorsNameTextAndProblem) {
  const Scope s{{"BLOCK_M", int64_t{64}}, {"dtype", std::string("f16")}};
  EXPECT_EQ(eval_error("BLOCK_M % 0", s), "in 'BLOCK_M % 0': division by zero (at column 9)");
  EXPECT_NE(eval_error("1 / 0").find("division by zero"), std::string::npos);
  EXPECT_NE(eval_error("1.0 / 0").find("division by zero"), std::string::npos);
  EXPECT_NE(eval_error("ceil_div(4, 0)").find("division by zero"), std::string::npos);
  EXPECT_EQ(eval_error("WARPS * 2", s), "in 'WARPS * 2': unknown name 'WARPS' (at column 1)");
  EXPECT_NE(eval_error("dtype + 1", s).find("cannot apply '+'"), std::string::npos);
  EXPECT_NE(eval_error("dtype < 'f32'", s).find("strings support only == and !="), std::string::npos);
  EXPECT_NE(eval_error("dtype == 16", s).find("cannot apply '=='"), std::string::npos);
  EXPECT_NE(eval_error("dtype && 1", s).find("not a condition"), std::string::npos);
  EXPECT_NE(eval_error("sizeof_dtype('f8')").find("unknown dtype 'f8'"), std::string::npos);
  EXPECT_NE(eval_error("sizeof_dtype(2)").find("needs a string"), std::string::npos);
  EXPECT_NE(eval_error("sqrt(-1)").find("negative"), std::string::npos);
  EXPECT_NE(eval_error("log2(0)").find("non-positive"), std::string::npos);
  EXPECT_NE(eval_error("9223372036854775807 + 1").find("integer overflow"), std::string::npos);
  EXPECT_NE(eval_error("-dtype", s).find("needs a number"), std::string::npos);
  EXPECT_THROW(Expr::parse("1").eval_string({}), ExprError);
  EXPECT_THROW(Expr::parse("'a'").eval_double({}), ExprError);
  EXPECT_THROW(Expr::parse("'a'").eval_bool({}), ExprError);
  EXPECT_THROW(Expr().eval({}), ExprError);
}

TEST(Expr, ErrorsAreOneLine) {
  for (const std::string& msg : {parse_error("(1 +"), eval_error("x / 0", {{"x", int64_t{1}}})})
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

// A generated chain builds a tree one level per operator; walking it recursively used to
// overflow the stack (SIGSEGV). Now the parser refuses it with a short, one-line error.
TEST(Expr, LongChainsAreRefusedNotACrash) {
  std::string sum = "1";
  for (int i = 1; i < 20000; ++i) sum += "+1";
  std::string conj = "1";
  for (int i = 1; i < 100000; ++i) conj += " && 1";
  for (const std::string* text : {&sum, &conj}) {
    const std::string msg = parse_error(*text);
    EXPECT_NE(msg.find("too deep"), std::string::npos) << msg.substr(0, 200);
    EXPECT_EQ(msg.find('\n'), std::string::npos);
    EXPECT_LT(msg.size(), 300u) << "the error quotes the expression cut short";
    EXPECT_EQ(msg.rfind("in '1", 0), 0u) << msg;
  }
}

TEST(Expr, ChainsBelowTheLimitStillEvaluate) {
  std::string sum = "1";
  for (int i = 1; i < 900; ++i) sum += "+1";
  EXPECT_EQ(evi(sum), 900);
  std::string conj = "1";
  for (int i = 1; i < 900; ++i) conj += " && x";
  EXPECT_EQ(evi(conj, {{"x", int64_t{1}}}), 1);
}
