// `kforge ablate`: from a shape's stored winner on the worker's device, every one-parameter
// change (sidebyside/side_by_side: one_parameter_changes), timed interleaved next to the winner in
// one worker session.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "sidebyside/side_by_side.hpp"
#include "store/store.hpp"

namespace kf {

struct Ablation {
  Config winner;
  std::string device;    // the worker's device name
  double winner_us = 0;  // re-measured in this session
  bool stale = false;    // the stored winner was timed with an older kernel source
  struct Variation {
    std::string param, value;
    ContenderResult result;
  };
  std::vector<Variation> variations;  // in the family's parameter and value order
};

// Throws std::runtime_error (one line) when the shape has no gated result on the device, or the
// winner fails when re-measured.
Ablation ablate_winner(const Store& store, const Family& f, const Shape& shape, WorkerClient& worker,
                       CubinCache& cache, const SideBySideOptions& options);

}  // namespace kf
