// The PostgreSQL cluster the ctest fixture Pg.ClusterStart started (tools/pg_cluster.sh):
// each test gets databases of its own in it.
#pragma once
#include <string>

namespace kf::pgtest {

// "" when the cluster runs; else why the PostgreSQL tests skip.
std::string skip_reason();
// The URL of a new, empty database (named after the running test and hint).
std::string fresh_database(const std::string& hint = "");
// The cluster's folder (url, server log).
std::string cluster_dir();

}  // namespace kf::pgtest

// Skips the calling test (or SetUp) when there is no cluster.
#define KF_REQUIRE_POSTGRES()                                         \
  do {                                                                \
    const std::string kf_pg_why = ::kf::pgtest::skip_reason();        \
    if (!kf_pg_why.empty()) GTEST_SKIP() << kf_pg_why;                \
  } while (0)
