#include "importers/recorded_time.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace kf::import_detail {

std::string bad_recorded_time(double us) {
  if (!std::isfinite(us)) return "not a finite number";
  if (!(us >= kMinRecordedTimeUs)) return "below one nanosecond";
  return "";
}

std::string time_text(double value) {
  char text[32];
  for (int digits = 1; digits <= 17; ++digits) {  // the fewest digits that read back as the same double
    std::snprintf(text, sizeof text, "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value || std::isnan(value)) break;
  }
  return text;
}

}  // namespace kf::import_detail
