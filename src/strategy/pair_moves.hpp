// Pair moves for evo: the best config with two parameters changed at once, the moves ranked by
// evo's surrogate. Breeding and compass polls change one parameter at a time, or several at
// random; an optimum whose every one-parameter neighbour is slow (convolution on A100: the
// optimum is one exact block_size_x x block_size_y pair, each single move from it at least
// 21% slower, while the basin evo holds is another pair) is reached from a good config only by
// changing two parameters together. There are few enough such moves (about 90 between
// neighbouring parameters on the convolution spaces, 260 between any two) to rank every one by
// the surrogate and measure the most promising.
#pragma once
#include <cstddef>
#include <functional>
#include <vector>

namespace kf::strategy_detail {

using IdxCheck = std::function<bool(const std::vector<int>&)>;
using IdxRank = std::function<double(const std::vector<int>&)>;

// Up to k targets: center with parameters i < j (j - i <= span; span 0: any two) moved to
// other values, lowest rank first, among those `accept` takes (valid and not yet measured).
// Ties keep parameter and value order. sizes[p]: the number of values of parameter p.
std::vector<std::vector<int>> pair_moves(const std::vector<int>& center, const std::vector<size_t>& sizes,
                                         size_t span, const IdxRank& rank, const IdxCheck& accept, size_t k);

// Up to k targets: center with one parameter moved to any other of its values, lowest rank first, among
// those `accept` takes. A parameter's good values need not neighbour the center's (a block size of 128 two
// octaves from 256, its 16-step range between), so the surrogate, which has seen each value elsewhere,
// ranks the whole range.
std::vector<std::vector<int>> single_moves(const std::vector<int>& center, const std::vector<size_t>& sizes,
                                           const IdxRank& rank, const IdxCheck& accept, size_t k);

}  // namespace kf::strategy_detail
