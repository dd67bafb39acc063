// Values and assignments: canonical text, parsing and JSON round trips.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "space/value.hpp"

using namespace kf;

TEST(Value, ToStringOfEachKind) {
  EXPECT_EQ(to_string(Value{int64_t{-42}}), "-42");
  EXPECT_EQ(to_string(Value{std::string("wmma")}), "wmma");
  EXPECT_EQ(to_string(Value{1.5}), "1.5");
  // A real that happens to be integral must not read back as an integer.
  EXPECT_EQ(to_string(Value{2.0}), "2.0");
}

TEST(Value, AssignmentTextIsSortedByName) {
  Assignment a{{"N", int64_t{8}}, {"MMA", std::string("mma")}, {"BLOCK_M", int64_t{64}}};
  EXPECT_EQ(to_string(a), "BLOCK_M=64,MMA=mma,N=8");
  EXPECT_EQ(to_string(Assignment{}), "");
}

TEST(Value, ParseAssignmentTypesAndSpaces) {
  const Assignment a = parse_assignment(" M = 4096, dtype=f16 ,neg=-3,plus=+7,x=1.5");
  ASSERT_EQ(a.size(), 5u);
  EXPECT_EQ(a.at("M"), Value{int64_t{4096}});
  EXPECT_EQ(a.at("dtype"), Value{std::string("f16")});
  EXPECT_EQ(a.at("neg"), Value{int64_t{-3}});
  EXPECT_EQ(a.at("plus"), Value{int64_t{7}});
  EXPECT_EQ(a.at("x"), Value{std::string("1.5")});  // only integers are numbers here
  EXPECT_TRUE(parse_assignment("").empty());
  EXPECT_TRUE(parse_assignment("   ").empty());
}

TEST(Value, ParseAssignmentRoundTripsCanonicalText) {
  const std::string text = "BLOCK_M=64,MMA=wmma,STAGES=2";
  EXPECT_EQ(to_string(parse_assignment(text)), text);
}

TEST(Value, ParseAssignmentErrors) {
  EXPECT_THROW(parse_assignment("M"), std::invalid_argument);
  EXPECT_THROW(parse_assignment("=4"), std::invalid_argument);
  EXPECT_THROW(parse_assignment("M="), std::invalid_argument);
  EXPECT_THROW(parse_assignment("M=1,M=2"), std::invalid_argument);
  EXPECT_THROW(parse_assignment("M=1,"), std::invalid_argument);
  // Too large for int64: stays a string rather than overflowing silently.
  EXPECT_EQ(parse_assignment("M=99999999999999999999").at("M"), Value{std::string("99999999999999999999")});
}

TEST(Value, NumericViews) {
  EXPECT_TRUE(is_int(Value{int64_t{1}}));
  EXPECT_FALSE(is_int(Value{1.0}));
  EXPECT_TRUE(is_string(Value{std::string("a")}));
  EXPECT_DOUBLE_EQ(as_double(Value{int64_t{3}}), 3.0);
  EXPECT_EQ(as_int(Value{2.9}), 2);
  EXPECT_EQ(as_int(Value{-2.9}), -2);
  EXPECT_THROW(as_int(Value{std::string("f16")}), std::invalid_argument);
  EXPECT_THROW(as_double(Value{std::string("f16")}), std::invalid_argument);
  EXPECT_THROW(as_int(Value{1e30}), std::invalid_argument);
}

TEST(Value, JsonRoundTrip) {
  Assignment a{{"B", int64_t{2}}, {"dtype", std::string("bf16")}, {"scale", 0.25}};
  const nlohmann::json j = to_json(a);
  EXPECT_TRUE(j["B"].is_number_integer());
  EXPECT_TRUE(j["scale"].is_number_float());
  EXPECT_EQ(assignment_from_json(j), a);
}

TEST(Value, JsonErrors) {
  EXPECT_THROW(value_from_json(nlohmann::json(true)), std::invalid_argument);
  EXPECT_THROW(value_from_json(nlohmann::json::array()), std::invalid_argument);
  EXPECT_THROW(value_from_json(nlohmann::json(18446744073709551615ull)), std::invalid_argument);
  EXPECT_THROW(assignment_from_json(nlohmann::json::array()), std::invalid_argument);
}
