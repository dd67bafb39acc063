#include "pg_test.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "store/sql.hpp"

namespace kf::pgtest {

namespace {
std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  std::string text = s.str();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

std::string admin_url() { return read_file(cluster_dir() + "/url"); }
}  // namespace

std::string cluster_dir() { return KFORGE_PG_TEST_DIR; }

std::string skip_reason() {
  if (!sql::postgres_available()) return "PostgreSQL tests skipped: this build has no libpq";
  const std::string skip = read_file(cluster_dir() + "/skip");
  if (!skip.empty()) return "PostgreSQL tests skipped: " + skip;
  if (admin_url().empty())
    return "PostgreSQL tests skipped: no test cluster at " + cluster_dir() +
           " (run through ctest, whose fixture Pg.ClusterStart starts one)";
  return "";
}

std::string fresh_database(const std::string& hint) {
  static int counter = 0;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = "t" + std::to_string(::getpid()) + "_" + std::to_string(++counter) + "_" +
                     (info ? info->name() : "") + "_" + hint;
  for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '_';
  name.resize(std::min<size_t>(name.size(), 60));
  const std::string admin = admin_url();
  sql::open_postgres(admin, sql::Access::ReadWrite)->exec("CREATE DATABASE " + name);
  return admin.substr(0, admin.rfind('/') + 1) + name;
}

}  // namespace kf::pgtest
