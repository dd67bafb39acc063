#include "importers/tuner_values.hpp"

namespace kf::import_detail {

Value tuner_value(const nlohmann::ordered_json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_boolean()) return std::string(v.get<bool>() ? "True" : "False");
  if (v.is_string()) return v.get<std::string>();
  // Reals (as strings: a domain of 0.5, 1.0, 2.0 is categorical to kforge), and anything
  // else a tuner might put there (null, lists) in its JSON spelling.
  return v.dump();
}

}  // namespace kf::import_detail
