// Restarts for evo: where a run has stalled, its population moves to other basins of the space.
// Evo's mu + lambda population converges on one basin; once the best has not improved for a
// while, breeding, polls and pair moves only search that basin's neighbourhood again (on the
// RTX 2080 Ti convolution space about half of the runs stay in a basin at 1.5-2% for hundreds of
// evaluations). A restart keeps every result (the best-so-far never gets worse) but breeds from
// the best measured configs that lie away from every basin the run has settled in before:
// configs the run already paid for, so the new population starts from good places, not random.
#pragma once
#include <cstddef>
#include <vector>

namespace kf::strategy_detail {

// The number of parameters in which two index vectors differ.
size_t hamming(const std::vector<int>& a, const std::vector<int>& b);

// Indices into ranked (measured configs, best first) of up to k restart points, in rank order:
// each differs from every center in at least `away` parameters and from each earlier pick in at
// least `apart` parameters.
std::vector<size_t> diverse_picks(const std::vector<std::vector<int>>& ranked,
                                  const std::vector<std::vector<int>>& centers, size_t away, size_t apart, size_t k);

}  // namespace kf::strategy_detail
