// What "best" means: the time of a launch (the default), its energy, or their product (energy-delay). A
// record whose energy was not measured (TimingStats.power_w 0) has no energy or energy-delay value.
#pragma once
#include <limits>
#include <string>

#include "core/vocabulary.hpp"

namespace kf {

enum class Objective { Time, Energy, Edp };

std::string to_string(Objective o);                    // "time", "energy", "edp"
Objective parse_objective(const std::string& text);   // throws std::invalid_argument naming the choices

// The value to minimise: us, uJ, or uJ x us; +infinity where the record has no energy measured.
inline double objective_value(const TimingStats& t, Objective o) {
  if (o == Objective::Time) return t.median_us;
  if (t.power_w <= 0) return std::numeric_limits<double>::infinity();
  return o == Objective::Energy ? t.energy_uj : t.energy_uj * t.median_us;
}

}  // namespace kf
