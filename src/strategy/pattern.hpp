// Compass search (a pattern search) in index space, for evo's local step around the best
// config. Breeding moves a parameter by one index step at a time, or anywhere at random: on a
// smooth landscape (pnpoly's tile_size falls steadily towards its largest value) that needs
// many generations to walk downhill. A compass poll tries the best config with one ordered
// parameter moved by a step that starts at a fraction of its range and halves after each full
// round of polls (every direction once), as a derivative-free local minimiser (COBYLA in
// Kernel Tuner's dual annealing) shrinks its step in a continuous space.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

namespace kf::strategy_detail {

class CompassPoll {
 public:
  // sizes[p]: the number of values of parameter p; ordered[p]: whether its order means
  // anything (categorical ones are left to crossover and mutation). first_step: the first step
  // of each parameter as a fraction of its index range (at least 1).
  CompassPoll(const std::vector<size_t>& sizes, const std::vector<bool>& ordered, double first_step);

  // The next poll target around center: center with one ordered parameter moved up or down
  // by its step (clamped to the domain). A new center carries on with the round's remaining
  // directions at the current steps. Targets `fresh` rejects (already measured) are skipped. Among the
  // round's remaining targets the one `rank` scores lowest comes first (evo's surrogate: on a
  // space of 24 parameters a round is 48 polls, most of them predictably slow); without rank,
  // parameter order, down before up. A round that went all the way round halves every step;
  // nullopt once a round at step 1 is done, until the center changes.
  using Check = std::function<bool(const std::vector<int>&)>;
  using Rank = std::function<double(const std::vector<int>&)>;
  std::optional<std::vector<int>> next(const std::vector<int>& center, const Check& fresh, const Rank& rank = {});

  const std::vector<int>& steps() const { return steps_; }

 private:
  // Target j of a round (parameter j / 2, down when j is even); nullopt where the move is not
  // possible (categorical, single value, already at that end of the domain).
  std::optional<std::vector<int>> target(const std::vector<int>& center, size_t j) const;
  // Ends the round: halves the steps, or marks the poll done where they were all 1.
  void end_round();

  std::vector<int> sizes_, steps_, center_;
  std::vector<bool> ordered_;
  std::vector<bool> used_;  // targets of this round already proposed or skipped: 2 per parameter
  bool done_ = false;       // a round at step 1 went round without a new center
};

}  // namespace kf::strategy_detail
