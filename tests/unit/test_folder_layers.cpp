// The folders of src/ stand in layers: a folder may include those below it, never one that
// (directly or through others) includes it back. Each folder, a subfolder such as eval/worker/
// too, is one node; an arrow A -> B is a file of A with `#include "B/..."` naming a file that
// exists under src/. The test fails on any cycle of folders and names the includes that make it.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "test_dir.hpp"

namespace fs = std::filesystem;

namespace {

// from folder -> to folder -> the includes ("file -> included") that draw the arrow.
using FolderArrows = std::map<std::string, std::map<std::string, std::vector<std::string>>>;

FolderArrows folder_arrows(const fs::path& root) {
  static const std::regex include_line(R"re(^\s*#\s*include\s*"([^"]+)")re");
  FolderArrows arrows;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    const std::string ext = entry.path().extension().string();
    if (ext != ".cpp" && ext != ".hpp" && ext != ".h") continue;
    const std::string file = fs::relative(entry.path(), root).generic_string();
    const std::string from = fs::path(file).parent_path().generic_string();
    std::ifstream in(entry.path());
    std::string line;
    std::smatch m;
    while (std::getline(in, line)) {
      if (!std::regex_search(line, m, include_line)) continue;
      const std::string included = m[1].str();
      if (!fs::is_regular_file(root / included)) continue;  // a system or same-folder header
      const std::string to = fs::path(included).parent_path().generic_string();
      if (to != from) arrows[from][to].push_back(file + " -> " + included);
    }
  }
  return arrows;
}

// The strongly connected components of more than one folder (Tarjan).
std::vector<std::vector<std::string>> folder_cycles(const FolderArrows& arrows) {
  std::set<std::string> nodes;
  for (const auto& [from, tos] : arrows) {
    nodes.insert(from);
    for (const auto& [to, why] : tos) nodes.insert(to);
  }
  std::map<std::string, int> index, low;
  std::vector<std::string> stack;
  std::set<std::string> on_stack;
  std::vector<std::vector<std::string>> cycles;
  int next = 0;
  std::function<void(const std::string&)> visit = [&](const std::string& v) {
    index[v] = low[v] = next++;
    stack.push_back(v);
    on_stack.insert(v);
    if (auto it = arrows.find(v); it != arrows.end())
      for (const auto& [w, why] : it->second) {
        if (!index.count(w)) {
          visit(w);
          low[v] = std::min(low[v], low[w]);
        } else if (on_stack.count(w)) {
          low[v] = std::min(low[v], index[w]);
        }
      }
    if (low[v] != index[v]) return;
    std::vector<std::string> component;
    std::string w;
    do {
      w = stack.back();
      stack.pop_back();
      on_stack.erase(w);
      component.push_back(w);
    } while (w != v);
    if (component.size() > 1) {
      std::sort(component.begin(), component.end());
      cycles.push_back(component);
    }
  };
  for (const std::string& v : nodes)
    if (!index.count(v)) visit(v);
  return cycles;
}

std::string describe(const FolderArrows& arrows, const std::vector<std::string>& cycle) {
  std::string out = "folders in a cycle:";
  for (const std::string& f : cycle) out += " " + f + "/";
  out += "\n";
  for (const std::string& from : cycle)
    for (const std::string& to : cycle)
      if (auto a = arrows.find(from); a != arrows.end())
        if (auto b = a->second.find(to); b != a->second.end())
          for (const std::string& why : b->second) out += "  " + why + "\n";
  return out;
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

}  // namespace

TEST(FolderLayers, NoFolderOfSrcIncludesOneThatIncludesItBack) {
  const fs::path src = fs::path(KFORGE_SOURCE_DIR) / "src";
  ASSERT_TRUE(fs::is_directory(src)) << src;
  const FolderArrows arrows = folder_arrows(src);
  ASSERT_GT(arrows.size(), 5u) << "no includes read under " << src;
  std::string report;
  for (const auto& cycle : folder_cycles(arrows)) report += describe(arrows, cycle);
  EXPECT_TRUE(report.empty()) << report;
}

// The check itself finds a cycle: two folders that include each other, and a subfolder that
// includes its parent while the parent includes it.
TEST(FolderLayers, TheCheckFindsACycleInASmallTree) {
  const fs::path root = fresh_test_dir("kforge_folder_layers") / "src";
  write(root / "low/a.hpp", "#pragma once\n#include \"high/b.hpp\"\n#include <vector>\n");
  write(root / "high/b.hpp", "#pragma once\n#include \"low/a.hpp\"\n");
  write(root / "top/c.cpp", "#include \"low/a.hpp\"\n#include \"top/sub/d.hpp\"\n");
  write(root / "top/sub/d.hpp", "#pragma once\n#include \"top/c.cpp\"\n");
  write(root / "apart/e.cpp", "#include \"low/a.hpp\"\n#include \"missing/x.hpp\"\n");
  const FolderArrows arrows = folder_arrows(root);
  const auto cycles = folder_cycles(arrows);
  ASSERT_EQ(cycles.size(), 2u);
  const std::set<std::vector<std::string>> found(cycles.begin(), cycles.end());
  EXPECT_TRUE(found.count({"high", "low"}));
  EXPECT_TRUE(found.count({"top", "top/sub"}));
  EXPECT_NE(describe(arrows, {"high", "low"}).find("low/a.hpp -> high/b.hpp"), std::string::npos);
  EXPECT_FALSE(arrows.count("apart") && arrows.at("apart").count("missing"));
}
