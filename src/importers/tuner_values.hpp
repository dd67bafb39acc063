// Conversion of other tuners' JSON parameter values to kforge Values. Internal to importers/.
#pragma once
#include <nlohmann/json.hpp>

#include "space/value.hpp"

namespace kf::import_detail {

// Integers stay integers; true/false become "True"/"False" (Python's spelling, as in Kernel
// Tuner cache keys); reals keep their JSON spelling as a string ("2.45"); strings stay.
Value tuner_value(const nlohmann::ordered_json& v);

}  // namespace kf::import_detail
