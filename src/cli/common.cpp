#include "cli/common.hpp"
#include "store/sql.hpp"
#include "util/shell_quote.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

namespace kf::cli {

namespace {
std::map<const CLI::App*, Action>& actions() {
  static std::map<const CLI::App*, Action> a;
  return a;
}
}  // namespace

void set_action(CLI::App* cmd, Action action) { actions()[cmd] = std::move(action); }

namespace {
void print_error_line(std::string msg) {
  if (auto nl = msg.find('\n'); nl != std::string::npos) msg.resize(nl);
  std::fprintf(stderr, "kforge: %s\n", msg.c_str());
}
}  // namespace

int usage_error(const std::string& message) {
  print_error_line(message);
  return kExitUsage;
}

int run_selected(CLI::App& app) {
  // The deepest chosen subcommand carries the action ("baseline import").
  const CLI::App* chosen = &app;
  while (!chosen->get_subcommands().empty()) chosen = chosen->get_subcommands().front();
  if (auto it = actions().find(chosen); it != actions().end()) {
    try {
      it->second();
      return 0;
    } catch (const UsageError& e) {
      // A value the option validators could not judge alone (a duration, a --gpus list).
      return usage_error(e.what());
    } catch (const ReportedFailure&) {
      return kExitFailure;
    } catch (const std::exception& e) {
      print_error_line(e.what());
      return kExitFailure;
    }
  }
  std::fputs(chosen->help().c_str(), stderr);
  return 2;
}

std::string kforge_command(const Globals& g) {
  const std::string db = sql::is_postgres_url(g.db) ? sql::redact_url(g.db) : g.db;
  std::string cmd = "kforge --db " + shell_quote(db);
  if (!g.spec_dir.empty()) cmd += " --spec-dir " + shell_quote(g.spec_dir);
  return cmd;
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
  if (sql::is_postgres_url(g.db)) return std::filesystem::absolute(".kforge-cache");  // the node's own
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

namespace {
constexpr double kMaxSeconds = 366.0 * 24 * 3600;

// Digits, an optional fraction and exponent: what strtod accepts minus its extras (leading
// space, hex, "inf", "nan"), which no one means on a command line.
bool plain_number_prefix(const std::string& text, size_t& used) {
  size_t i = 0, digits = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i, ++digits;
  if (i < text.size() && text[i] == '.')
    for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]));) ++i, ++digits;
  if (digits == 0) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    size_t j = i + 1;
    if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
    if (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) {
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
      i = j;
    }
  }
  used = i;
  return true;
}
}  // namespace

double parse_duration(const std::string& text) {
  const std::string example = " (e.g. 8h, 30m, 90s)";
  size_t used = 0;
  if (!plain_number_prefix(text, used)) throw UsageError("bad duration '" + text + "'" + example);
  double v = std::strtod(text.substr(0, used).c_str(), nullptr);
  const std::string unit = text.substr(used);
  if (unit == "m" || unit == "min")
    v *= 60;
  else if (unit == "h")
    v *= 3600;
  else if (!unit.empty() && unit != "s")
    throw UsageError("bad duration '" + text + "': unknown unit '" + unit + "'" + example);
  if (!std::isfinite(v) || v <= 0)
    throw UsageError("bad duration '" + text + "': must be positive" + example);
  if (v > kMaxSeconds) throw UsageError("bad duration '" + text + "': longer than a year");
  return v;
}

CLI::Validator whole_number(int64_t min, int64_t max) {
  const std::string range = max >= (int64_t{1} << 40) ? "a whole number >= " + std::to_string(min)
                                                      : "a whole number from " + std::to_string(min) +
                                                            " to " + std::to_string(max);
  return CLI::Validator(
      [min, max, range](std::string& text) -> std::string {
        int64_t v = 0;
        const char* end = text.data() + text.size();
        auto [ptr, ec] = std::from_chars(text.data(), end, v);
        if (text.empty() || ec != std::errc() || ptr != end || v < min || v > max)
          return "expected " + range + ", got '" + text + "'";
        return "";
      },
      range.substr(2));
}

CLI::Validator rounds_or_auto() {
  const CLI::Validator count = whole_number(1, 1000);
  return CLI::Validator(
      [count](std::string& text) -> std::string {
        if (text == "auto") return "";
        std::string copy = text;
        return count(copy).empty() ? "" : "expected auto or a whole number from 1 to 1000, got '" + text + "'";
      },
      "auto|N");
}

int parse_rounds(const std::string& text) {
  if (text == "auto") return 0;
  int v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || v < 1 || v > 1000)
    throw UsageError("rounds: expected auto or a whole number from 1 to 1000, got '" + text + "'");
  return v;
}

CLI::Validator duration() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          parse_duration(text);
          return "";
        } catch (const UsageError& e) {
          return e.what();
        }
      },
      "DURATION");
}

CLI::Validator positive_seconds() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        size_t used = 0;
        if (!plain_number_prefix(text, used) || used != text.size())
          return "expected a number of seconds, got '" + text + "'";
        const double v = std::strtod(text.c_str(), nullptr);
        if (!std::isfinite(v) || v <= 0 || v > kMaxSeconds)
          return "expected a positive number of seconds (at most a year), got '" + text + "'";
        return "";
      },
      "seconds > 0");
}

namespace {
// The text with each control character written as \n, \t or \xNN: one line, whatever it holds.
std::string escape_controls(const std::string& text) {
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

std::string join_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}
}  // namespace

CLI::Validator printable_text() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        for (char c : text) {
          const auto u = static_cast<unsigned char>(c);
          if (u < 0x20 || u == 0x7f)
            return "control character in '" + escape_controls(text) + "' (one line expected)";
        }
        return "";
      },
      "TEXT");
}

CLI::Validator one_of(std::vector<std::string> words) {
  const std::string accepted = join_words(words);
  return CLI::Validator(
      [words = std::move(words), accepted](std::string& text) -> std::string {
        for (const auto& w : words)
          if (text == w) return "";
        return "expected one of " + accepted + "; got '" + escape_controls(text) + "'";
      },
      accepted);
}

CLI::Validator list_of(std::vector<std::string> words) {
  const std::string accepted = join_words(words);
  return CLI::Validator(
      [words = std::move(words), accepted](std::string& text) -> std::string {
        std::stringstream items(text);
        size_t count = 0;
        for (std::string item; std::getline(items, item, ',');) {
          if (item.empty()) continue;
          ++count;
          if (std::find(words.begin(), words.end(), item) == words.end())
            return "unknown '" + escape_controls(item) + "' (expected a comma-separated list of " + accepted + ")";
        }
        if (count == 0) return "expected a comma-separated list of " + accepted + ", got '" + escape_controls(text) + "'";
        return "";
      },
      "LIST");
}

CLI::Validator known_arch() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          (void)DeviceLimits::for_arch(text);
          return "";
        } catch (const std::exception& e) {
          return escape_controls(e.what());
        }
      },
      "ARCH");
}

CLI::Validator number_in(double min, double max) {
  char range[64];
  std::snprintf(range, sizeof range, "a number from %g to %g", min, max);
  const std::string want = range;
  return CLI::Validator(
      [min, max, want](std::string& text) -> std::string {
        size_t used = 0;
        if (!plain_number_prefix(text, used) || used != text.size()) return "expected " + want + ", got '" + escape_controls(text) + "'";
        const double v = std::strtod(text.c_str(), nullptr);
        if (!std::isfinite(v) || v < min || v > max) return "expected " + want + ", got '" + escape_controls(text) + "'";
        return "";
      },
      want.substr(2));
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
