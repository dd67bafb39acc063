#include "compile/error_groups.hpp"

#include <sstream>

namespace kf {

std::string CompileErrorGroups::error_key(const std::string& log) {
  std::istringstream in(log);
  std::string key;
  for (std::string line; std::getline(in, line);)
    if (line.find("error") != std::string::npos) key += line + "\n";
  return key.empty() ? log : key;
}

void CompileErrorGroups::add(const std::string& config, const std::string& log) {
  const std::string key = error_key(log);
  for (auto& g : groups_)
    if (g.key == key) {
      ++g.more;
      return;
    }
  groups_.push_back({key, config, log, 0});
}

nlohmann::json CompileErrorGroups::to_json(size_t max_groups, size_t max_log_chars) const {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < groups_.size() && i < max_groups; ++i)
    out.push_back({{"config", groups_[i].config}, {"log", groups_[i].log.substr(0, max_log_chars)},
                   {"more_configs", groups_[i].more}});
  return out;
}

std::string CompileErrorGroups::format(size_t max_groups, size_t max_log_chars) const {
  std::string out;
  for (const auto& g : to_json(max_groups, max_log_chars)) {
    const size_t more = g["more_configs"].get<size_t>();
    out += "  compile error in " + g["config"].get<std::string>() +
           (more ? " (and " + std::to_string(more) + " more config" + (more == 1 ? "" : "s") + ")" : "") +
           ":\n" + g["log"].get<std::string>() + "\n";
  }
  if (groups_.size() > max_groups)
    out += "  (" + std::to_string(groups_.size() - max_groups) + " more distinct compile errors not shown)\n";
  return out;
}

}  // namespace kf
