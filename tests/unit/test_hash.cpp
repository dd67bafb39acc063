#include <gtest/gtest.h>

#include "util/hash.hpp"

TEST(ContentHash, StableAndSensitive) {
  EXPECT_EQ(kf::content_hash("abc"), kf::content_hash("abc"));
  EXPECT_NE(kf::content_hash("abc"), kf::content_hash("abd"));
  EXPECT_EQ(kf::content_hash("").size(), 32u);
}
