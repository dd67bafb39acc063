#include "core/objective.hpp"

#include <stdexcept>

namespace kf {

std::string to_string(Objective o) {
  switch (o) {
    case Objective::Time: return "time";
    case Objective::Energy: return "energy";
    case Objective::Edp: return "edp";
  }
  return "?";
}

Objective parse_objective(const std::string& text) {
  if (text == "time") return Objective::Time;
  if (text == "energy") return Objective::Energy;
  if (text == "edp") return Objective::Edp;
  throw std::invalid_argument("unknown objective '" + text + "' (time | energy | edp)");
}

}  // namespace kf
