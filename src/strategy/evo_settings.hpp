// evo's options, parsed and range-checked in one place (the strategy itself: evo.cpp).
//
// Options (ctx.options): population (8), tournament (3), elite (2: one neighbour child of
// each of the best two per generation), crossover_rate (0.7), mutation_rate (0.3, adapted
// within mutation_min 0.1 .. mutation_max 1.0 by grow 1.5 / shrink 0.7), jump (0.3: chance
// that a mutated ordered parameter takes any value instead of a neighbouring one),
// immigrate_after (3 stalled generations; 0 turns immigrants off), screen (4: candidate
// children bred per place in a generation, the one the surrogate predicts fastest kept; 1
// turns the surrogate off), initial (population: random configs in the first generation, besides
// seeds), offspring (population: configs bred per later generation), pattern (4: compass polls
// around the best per generation, pattern.hpp; 0 turns them off), pattern_step (1.0: the
// poll's first step as a fraction of each ordered parameter's range, so the first round tries
// both ends of each), pattern_rank (1: the surrogate orders each round's polls; 0: parameter order),
// pairs (4: pair moves per generation once the best has stalled for pair_after 2 generations,
// pair_moves.hpp; 0 turns them off), pair_centers (2: shared between the best 2 members),
// pair_span (1: only parameters next to each other in the spec's order move together; 0: any two),
// restart_after (6 stalled generations: the population restarts from measured configs away from
// the basins it settled in, restart.hpp; 0 turns restarts off), restart_away (2: parameters a
// restart point differs in from every such basin's best).
#pragma once
#include <nlohmann/json.hpp>

#include <cstddef>

namespace kf::strategy_detail {

struct EvoSettings {
  size_t population, tournament, elite;
  double crossover_rate, mutation_min, mutation_max, mutation_rate, grow, shrink, jump;
  size_t immigrate_after, screen, initial, offspring;
  size_t pattern;
  double pattern_step;
  bool pattern_rank;
  size_t pairs, pair_span, pair_after, pair_centers;
  size_t restart_after, restart_away;
  bool restart_pairs, restart_alternate;
  size_t model_moves;  // one-parameter moves of the best over each parameter's whole range, by the surrogate
};

// Throws std::invalid_argument on an unknown option or a value out of its range.
EvoSettings parse_evo_settings(const nlohmann::json& options);

}  // namespace kf::strategy_detail
