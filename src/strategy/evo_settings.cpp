#include "strategy/evo_settings.hpp"

#include "strategy/common.hpp"

namespace kf::strategy_detail {

EvoSettings parse_evo_settings(const nlohmann::json& options) {
  EvoSettings s;
  Options o("evo", options,
            {"population", "tournament", "elite", "crossover_rate", "mutation_rate",
             "mutation_min", "mutation_max", "grow", "shrink", "jump", "immigrate_after", "screen", "initial", "offspring",
             "pattern", "pattern_step", "pattern_rank",
             "pairs", "pair_span", "pair_after", "pair_centers", "restart_after", "restart_away", "restart_pairs", "restart_alternate", "model_moves"});
  // 8 rather than 16: replays on spaces of 500-6000 configs (tests/unit/test_strategy_quality)
  // reach 1.05x the optimum sooner, most of all where a 10% budget is only ~50 evaluations
  // and a 16-config random first generation would spend a third of it.
  s.population = static_cast<size_t>(o.get_int("population", 8, 2, 100000));
  s.tournament = static_cast<size_t>(o.get_int("tournament", 3, 1, 1000));
  s.elite = static_cast<size_t>(o.get_int("elite", 2, 0, static_cast<int64_t>(s.population)));
  s.crossover_rate = o.get_double("crossover_rate", 0.7, 0.0, 1.0);
  s.mutation_min = o.get_double("mutation_min", 0.1, 0.0, 1.0);
  s.mutation_max = o.get_double("mutation_max", 1.0, s.mutation_min, 1.0);
  s.mutation_rate = o.get_double("mutation_rate", 0.3, s.mutation_min, s.mutation_max);
  s.grow = o.get_double("grow", 1.5, 1.0, 10.0);
  s.shrink = o.get_double("shrink", 0.7, 0.01, 1.0);
  s.jump = o.get_double("jump", 0.3, 0.0, 1.0);
  s.immigrate_after = static_cast<size_t>(o.get_int("immigrate_after", 3, 0, 1000000));
  s.screen = static_cast<size_t>(o.get_int("screen", 4, 1, 1000));
  s.initial = static_cast<size_t>(o.get_int("initial", static_cast<int64_t>(s.population), 1, 100000));
  s.offspring = static_cast<size_t>(o.get_int("offspring", static_cast<int64_t>(s.population), 1, 100000));
  // 4 polls of the full range first: on the six spaces of docs/strategy_comparison.md this
  // halves the evaluations to 1% on pnpoly and cuts them on dedispersion, gemm and attention,
  // where breeding walks a smooth slope one index step at a time; it costs on the two
  // convolution spaces, whose optima are isolated (see the doc).
  s.pattern = static_cast<size_t>(o.get_int("pattern", 4, 0, 1000));
  s.pattern_step = o.get_double("pattern_step", 1.0, 0.0, 1.0);
  s.pattern_rank = o.get_int("pattern_rank", 1, 0, 1) == 1;
  // 4 pair moves of neighbouring parameters once the best has stalled for 2 generations: on
  // the convolution spaces of docs/strategy_comparison.md this takes the median evaluations
  // to 1% from 378 to 167 (A100) and 149.5 to 132.5 (MI250X) over 100 seeds; gemm,
  // dedispersion and pnpoly reach 1% before evo stalls, and do not change (attention S512
  // stalls: 47.5 / 59 against 63.5 / 53 at 30 / 100 seeds). Any two parameters (pair_span 0)
  // were slower: 4 times as many moves to rank, most of them between unrelated parameters.
  s.pairs = static_cast<size_t>(o.get_int("pairs", 4, 0, 1000));
  s.pair_span = static_cast<size_t>(o.get_int("pair_span", 1, 0, 1000));
  s.pair_after = static_cast<size_t>(o.get_int("pair_after", 2, 0, 1000000));
  // Shared between the best 3 members rather than all around the best: the optimum may be a
  // pair away from the runner-up. With model moves, convolution A100 at 200 seeds, evaluations to 1%
  // and runs within 1% after 5% of the space: 2 centers 190 / 54%, 3: 148 / 62%, 4: 159 / 58%; the
  // other spaces of docs/strategy_comparison.md within their intervals.
  s.pair_centers = static_cast<size_t>(o.get_int("pair_centers", 3, 1, 1000));
  s.restart_after = static_cast<size_t>(o.get_int("restart_after", 6, 0, 1000000));
  s.restart_away = static_cast<size_t>(o.get_int("restart_away", 2, 0, 1000));
  s.restart_pairs = o.get_int("restart_pairs", 1, 0, 1) == 1;
  s.restart_alternate = o.get_int("restart_alternate", 1, 0, 1) == 1;
  // 2 moves a generation from the first screened generation on: at 200 seeds, on convolution spaces no
  // strategy was tuned on, the median evaluations to 1% went from 316.5 to 134.5 (A6000) and 132.5 to 77
  // (W7800), 119.5 to 75 on MI250X; A100 176 to 190 (intervals overlap). 3 or 4 a generation, or only
  // moves the surrogate predicts faster than the best, were no better (docs/strategy_comparison.md).
  s.model_moves = static_cast<size_t>(o.get_int("model_moves", 2, 0, 1000));
  return s;
}

}  // namespace kf::strategy_detail
