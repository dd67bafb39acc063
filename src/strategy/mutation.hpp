// Evo's mutation: which values a parameter may move to, and moving k parameters of a config at once.
#pragma once
#include <cstddef>
#include <random>
#include <utility>
#include <vector>

#include "space/space.hpp"

namespace kf::strategy_detail {

// The values parameter p may move to from `from`, with their prior weights: every other value of positive
// weight (weight 0 only where no other value has any).
std::vector<std::pair<int, double>> move_targets(const SearchSpace& space, size_t p, int from);

// Moves k distinct parameters of idx. An ordered one usually takes a neighbouring value; with probability
// `jump` it takes any value instead, because performance is often not smooth in a parameter (a power-of-two
// block size beats both of its neighbours). A categorical one always takes any other value: its order
// means nothing.
void mutate_params(const SearchSpace& space, const std::vector<bool>& categorical, double jump,
                   std::vector<int>& idx, size_t k, std::mt19937_64& rng);

}  // namespace kf::strategy_detail
