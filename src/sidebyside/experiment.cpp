#include "sidebyside/experiment.hpp"

#include <fstream>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace kf {

namespace {

std::vector<std::string> string_list(const nlohmann::json& j, const char* key) {
  if (!j.is_array()) throw std::runtime_error(std::string("\"") + key + "\" must be a list of strings");
  std::vector<std::string> out;
  for (const auto& v : j) {
    if (!v.is_string()) throw std::runtime_error(std::string("\"") + key + "\" must be a list of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

std::string text_field(const nlohmann::json& j, const char* key, bool required) {
  if (!j.contains(key)) {
    if (required) throw std::runtime_error(std::string("missing \"") + key + "\"");
    return "";
  }
  if (!j[key].is_string()) throw std::runtime_error(std::string("\"") + key + "\" must be a string");
  return j[key].get<std::string>();
}

Experiment parse(const nlohmann::json& j) {
  if (!j.is_object()) throw std::runtime_error("an experiment is a JSON object");
  static const std::set<std::string> known{"name", "family", "question", "doc", "shapes",
                                           "suite", "configs", "defines", "rounds"};
  for (const auto& [key, value] : j.items())
    if (!known.count(key)) throw std::runtime_error("unknown key \"" + key + "\"");
  Experiment e;
  e.name = text_field(j, "name", true);
  e.family = text_field(j, "family", true);
  e.question = text_field(j, "question", false);
  e.doc = text_field(j, "doc", false);
  e.suite = text_field(j, "suite", false);
  if (j.contains("shapes")) e.shapes = string_list(j["shapes"], "shapes");
  if (e.shapes.empty() == e.suite.empty()) throw std::runtime_error("give either \"shapes\" or \"suite\"");
  if (!j.contains("configs")) throw std::runtime_error("missing \"configs\"");
  e.configs = string_list(j["configs"], "configs");
  if (e.configs.empty()) throw std::runtime_error("\"configs\" is empty");
  if (j.contains("defines")) {
    try {
      e.defines = assignment_from_json(j["defines"]);
    } catch (const std::exception& ex) {
      throw std::runtime_error(std::string("\"defines\": ") + ex.what());
    }
  }
  if (j.contains("rounds")) {
    if (j["rounds"] == "auto") {
      e.rounds = 0;
    } else {
      if (!j["rounds"].is_number_integer() || j["rounds"].get<int64_t>() < 1 || j["rounds"].get<int64_t>() > 1000)
        throw std::runtime_error("\"rounds\" must be \"auto\" or a whole number from 1 to 1000");
      e.rounds = j["rounds"].get<int>();
    }
  }
  return e;
}

}  // namespace

Experiment load_experiment(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error(file.string() + ": cannot read the experiment file");
  try {
    return parse(nlohmann::json::parse(in));
  } catch (const nlohmann::json::exception& ex) {
    throw std::runtime_error(file.string() + ": not valid JSON: " + ex.what());
  } catch (const std::runtime_error& ex) {
    throw std::runtime_error(file.string() + ": " + ex.what());
  }
}

}  // namespace kf
