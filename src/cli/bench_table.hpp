// The table `kforge bench` prints for one shape (and its JSON), apart from the GPU work so it can
// be tested: config, median us, 95% CI, rounds timed, TFLOP/s, ratio to the first config, status; the
// heading says how many rounds ran and, with --rounds auto, why they stopped.
#pragma once
#include <string>
#include <vector>

#include "cli/table.hpp"
#include "sidebyside/side_by_side.hpp"

namespace kf::cli {

struct BenchReport {
  Table table;
  std::string heading;     // text output: family, shape, device, rounds
  nlohmann::json envelope;  // JSON output: the same, the rows go under "rows"
};

// Ratios are to the first contender's median (none when it has no time). A contender that failed
// the gate (or did not compile, or violates a constraint) shows its status and no time.
BenchReport bench_report(const Family& f, const Shape& shape, const std::string& device,
                         const SideBySideOptions& options, const std::vector<Contender>& contenders,
                         const SideBySideRun& run);

}  // namespace kf::cli
