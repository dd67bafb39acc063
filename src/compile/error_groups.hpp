// Compile errors grouped by what they say: a spec mistake usually breaks many configs the
// same way, and the author needs each distinct error once, with how many configs it hit.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kf {

class CompileErrorGroups {
 public:
  // A failed config and its compiler log. Logs whose error lines (those naming "error") are
  // the same fall in one group; the first config seen names it.
  void add(const std::string& config, const std::string& log);
  size_t groups() const { return groups_.size(); }
  // [{"config", "log" (first max_log_chars), "more_configs"}], first-seen order, at most max_groups.
  nlohmann::json to_json(size_t max_groups = 5, size_t max_log_chars = 600) const;
  // "  compile error in CONFIG (and N more configs):\nLOG\n" per group, at most max_groups;
  // then a line counting the groups left out.
  std::string format(size_t max_groups = 5, size_t max_log_chars = 600) const;

  // The error lines of a log (the grouping key); the whole log when no line names an error.
  static std::string error_key(const std::string& log);

 private:
  struct Group {
    std::string key, config, log;
    size_t more = 0;
  };
  std::vector<Group> groups_;
};

}  // namespace kf
