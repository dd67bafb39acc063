// Whether a time read from another tool's file can be a measurement. Internal to importers/.
#pragma once
#include <string>

namespace kf::import_detail {

// The shortest time a recorded kernel can have taken: one nanosecond, about one clock cycle of any GPU (a
// launch alone costs microseconds). Below it, a "time" is a placeholder (0, -0.0, a denormal such as
// 1e-320), not a measurement; stored, it would be the fastest record of its shape by any margin.
constexpr double kMinRecordedTimeUs = 1e-3;

// "" when `us` (microseconds) can be a measured time; else why not ("not a finite number", "below one
// nanosecond"), for the caller's message naming the record and the time as its file wrote it.
std::string bad_recorded_time(double us);

// The number as a message shows it: shortest round-trip form ("0.001", "-0", "1e-320").
std::string time_text(double value);

}  // namespace kf::import_detail
