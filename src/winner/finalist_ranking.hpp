// A campaign's finalists, re-measured side by side at its end (campaign/finalists), in the order that
// re-measure found. Kept in the campaign's options ("remeasured", by shape key), it decides among the configs it
// measured: a single earlier record of one of them may be faster by the worker's noise (its intervals on the
// heavy shapes are several percent wide at one record a config), while the interleaved re-measure compares them
// in one session. best_current (winner/current_results) applies it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "space/value.hpp"
#include "store/store.hpp"

namespace kf {

struct RankedConfig {
  std::string config;        // canonical key (to_string of the complete config)
  std::string variant_hash;  // the kernel the re-measure timed
  double median_us = 0, ci_lo_us = 0, ci_hi_us = 0;
  int rounds = 0;                // rounds it was timed in (0: not known)
  std::vector<double> round_us;  // its median in each: kept so that a later rule can be checked on real rounds
};

struct FinalistRanking {
  int64_t campaign_id = 0;  // the campaign that re-measured them (its device is the ranking's)
  std::vector<RankedConfig> order;  // fastest first

  // The position of (config, kernel) in the order, or -1.
  int position(const std::string& config, const std::string& variant_hash) const;
};

// Writes the ranking into the campaign's options under "remeasured"/<shape key>.
void record_ranking(Store& store, int64_t campaign_id, const Shape& shape, const std::vector<RankedConfig>& order);

// The newest ranking of the family's shape on `device` (the highest campaign id), if any.
std::optional<FinalistRanking> latest_ranking(const Store& store, const std::string& family, const Shape& shape,
                                              const DeviceKey& device);

}  // namespace kf
