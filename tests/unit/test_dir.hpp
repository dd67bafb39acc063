// A fresh, empty folder for one test, named after the process and the running test, so
// tests run in parallel (ctest -j) never share one.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

inline std::filesystem::path fresh_test_dir(const std::string& prefix) {
  const auto dir = std::filesystem::temp_directory_path() /
                   (prefix + "_" + std::to_string(::getpid()) + "_" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Copies a spec folder's sources (everything but its .json specs; folders whole) into `to`: a
// spec reads templates from its own folder and the trees beside it only
// (family/template_roots.hpp), so a test's copy of a spec needs its templates beside it.
inline void copy_spec_sources(const std::filesystem::path& from, const std::filesystem::path& to) {
  namespace fs = std::filesystem;
  fs::create_directories(to);
  for (const auto& e : fs::directory_iterator(from))
    if (e.is_directory() || e.path().extension() != ".json")
      fs::copy(e.path(), to / e.path().filename(), fs::copy_options::recursive | fs::copy_options::overwrite_existing);
}
