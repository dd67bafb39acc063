#include "cli/unknown_command.hpp"

#include <algorithm>

namespace kf::cli {

size_t edit_distance(const std::string& a, const std::string& b) {
  // Optimal string alignment distance: Levenshtein plus the swap of two adjacent letters, the
  // commonest typing slip.
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

namespace {
// Whether the top-level option spelled `arg` ("--db", "-v") takes a value from the next word.
bool takes_next_value(const CLI::App& app, const std::string& arg) {
  if (arg.find('=') != std::string::npos) return false;  // --db=x
  for (const CLI::Option* o : app.get_options())
    if (o->check_name(arg)) return o->get_expected_max() != 0;  // a flag expects none
  return false;
}
}  // namespace

std::optional<std::string> unknown_command(const CLI::App& app, const std::vector<std::string>& args) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") return std::nullopt;
    if (arg.size() > 1 && arg[0] == '-') {
      if (takes_next_value(app, arg)) ++i;
      continue;
    }
    if (std::find(names.begin(), names.end(), arg) != names.end()) return std::nullopt;
    std::string best;
    size_t best_distance = 0;
    for (const auto& n : names) {
      const size_t dist = edit_distance(arg, n);
      if (best.empty() || dist < best_distance) best = n, best_distance = dist;
    }
    const std::string msg = "unknown command '" + arg + "'";
    // A suggestion only for a near miss: at most two edits, and fewer than half the word.
    if (!best.empty() && best_distance <= 2 && 2 * best_distance < arg.size())
      return msg + "; did you mean '" + best + "'?";
    return msg + "; see kforge --help";
  }
  return std::nullopt;
}

}  // namespace kf::cli
