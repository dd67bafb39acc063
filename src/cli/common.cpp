#include "cli/common.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>

namespace kf::cli {

namespace {
std::map<const CLI::App*, Action>& actions() {
  static std::map<const CLI::App*, Action> a;
  return a;
}
}  // namespace

void set_action(CLI::App* cmd, Action action) { actions()[cmd] = std::move(action); }

int run_selected(CLI::App& app) {
  // The deepest chosen subcommand carries the action ("baseline import").
  const CLI::App* chosen = &app;
  while (!chosen->get_subcommands().empty()) chosen = chosen->get_subcommands().front();
  if (auto it = actions().find(chosen); it != actions().end()) {
    try {
      it->second();
      return 0;
    } catch (const std::exception& e) {
      std::string msg = e.what();
      if (auto nl = msg.find('\n'); nl != std::string::npos) msg.resize(nl);
      std::fprintf(stderr, "kforge: %s\n", msg.c_str());
      return 1;
    }
  }
  std::fputs(chosen->help().c_str(), stderr);
  return 2;
}

std::filesystem::path data_dir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const fs::path bin = exe.parent_path();
  // Installed: <prefix>/bin/kforge and <prefix>/share/kforge/{search_spaces,kernel_templates}.
  const fs::path installed = (bin / ".." / "share" / "kforge").lexically_normal();
  if (fs::is_directory(installed / "search_spaces", ec)) return installed;
  // Build tree: CMake writes the source folder into a file beside the binary, so no path is
  // compiled in and a moved or installed binary never reaches back into the sources.
  std::ifstream marker(bin / "kforge-data-dir.txt");
  std::string line;
  if (marker && std::getline(marker, line) && fs::is_directory(fs::path(line) / "search_spaces", ec))
    return line;
  return {};
}

std::filesystem::path spec_dir(const Globals& g) {
  if (!g.spec_dir.empty()) return g.spec_dir;
  if (std::filesystem::is_directory("search_spaces")) return "search_spaces";
  const auto data = data_dir();
  if (data.empty())
    throw std::runtime_error("no search_spaces/ here or beside the kforge binary (../share/kforge); give --spec-dir");
  return data / "search_spaces";
}

std::filesystem::path cache_dir(const Globals& g) {
  if (!g.cache_dir.empty()) return g.cache_dir;
  auto parent = std::filesystem::absolute(g.db).parent_path();
  return parent / ".kforge-cache";
}

Family load_family(const Globals& g, const std::string& name) {
  if (name.empty()) throw std::runtime_error("--family is required (see `kforge list`)");
  return load_family_named(name, spec_dir(g));
}

std::vector<Shape> select_shapes(const Family& f, const std::vector<std::string>& shape_args,
                                 const std::string& suite) {
  if (!shape_args.empty() && !suite.empty())
    throw std::runtime_error("give --shape or --suite, not both");
  std::vector<Shape> shapes;
  for (const auto& s : shape_args) shapes.push_back(parse_shape(f, s));
  if (shapes.empty()) shapes = suite_shapes(f, suite.empty() ? "default" : suite);
  return shapes;
}

std::string self_exe() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("kforge") : p.string();
}

double parse_duration(const std::string& text) {
  if (text.empty()) throw std::invalid_argument("empty duration");
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument("bad duration '" + text + "' (e.g. 8h, 30m, 90s)");
  }
  const std::string unit = text.substr(used);
  if (unit.empty() || unit == "s") return v;
  if (unit == "m" || unit == "min") return v * 60;
  if (unit == "h") return v * 3600;
  throw std::invalid_argument("bad duration '" + text + "' (e.g. 8h, 30m, 90s)");
}

void print_json(const nlohmann::json& j) { std::cout << j.dump(2) << std::endl; }

std::string fmt_us(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, us < 100 ? "%.2f" : "%.1f", us);
  return buf;
}

void add_shape_options(CLI::App* cmd, std::vector<std::string>& shapes, std::string& suite) {
  cmd->add_option("--shape", shapes, "Shape, e.g. M=4096,N=4096,K=4096,dtype=f16 (repeatable)");
  cmd->add_option("--suite", suite, "Named shape suite of the family (default: \"default\")");
}

}  // namespace kf::cli
