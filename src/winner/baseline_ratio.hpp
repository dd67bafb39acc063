#pragma once
// A winner's speed-up over each stored baseline backend (cuDNN, FlashAttention, cuBLAS, ...).
//
// A ratio is only as good as the two times behind it: kforge's worker and tools/compare_torch.py time in
// separate processes, at different moments and clocks (a heavy kernel settles below its boost clock under
// sustained load), so a backend's stored time over the winner's stored time can be several percent off the
// ratio both show side by side. A baseline record that carries the winner's time from the same run
// (`side_by_side`: {"config", "kforge_us"}, written by compare_torch --baselines-out) gives the side-by-side
// ratio instead; the others fall back to the stored times, and say so.
#include <string>
#include <vector>

#include "store/store.hpp"

namespace kf {

struct BaselineRatio {
  std::string backend;
  double median_us = 0;      // the backend's typical time (typical_baselines)
  double speedup = 0;        // backend time / winner time: > 1 means the winner is faster
  bool side_by_side = false;  // from records that timed this very config in the same run
};

// One per backend, in the order typical_baselines gives. `config`: the winner's config with every parameter of
// the family (complete_stored_config: a record stored before a parameter existed lacks it, an export has it);
// winner_us: its stored median.
std::vector<BaselineRatio> baseline_ratios(const std::vector<BaselineRecord>& all, const nlohmann::json& config,
                                           double winner_us);

}  // namespace kf
