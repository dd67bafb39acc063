// "evo": an evolutionary search in the style of EvoEngineer. A population of measured configs
// breeds generations of children by tournament selection, uniform crossover and mutation;
// survivors are the best of parents and children (elitist "mu + lambda"), which suits
// budgets of a few hundred evaluations better than full replacement.
//
// Children are repaired to the nearest valid config that has not been seen (a bounded search
// outward from the child, SearchSpace::nearest: a categorical parameter counts 1 per change,
// an ordered one its index steps; seen configs are skipped and ties broken at random), so a
// child never wastes an evaluation on a repeat: a converged population turns into a local
// search around the best configs instead of stalling. The spec's prior shapes mutation (a
// parameter jumps to a value with probability proportional to its weight; values of weight 0
// are left out while others remain) and repair (such a value is taken only where nothing
// else is near).
//
// Each generation also takes the best config's most promising one-parameter moves over each
// parameter's whole range, ranked by the surrogate (model moves): a good value may lie octaves
// from the best's (block 128 against 256 with 16 sizes between), where mutation rarely jumps.
// A run that stalls restarts its population elsewhere (restart.hpp), keeping pair moves around
// its best. Options (ctx.options): evo_settings.hpp.
#include <algorithm>
#include <cmath>
#include <deque>

#include "strategy/common.hpp"
#include "strategy/evo_settings.hpp"
#include "strategy/mutation.hpp"
#include "strategy/pair_moves.hpp"
#include "strategy/pattern.hpp"
#include "strategy/restart.hpp"
#include "strategy/strategies.hpp"
#include "strategy/surrogate.hpp"

namespace kf::strategy_detail {
namespace {

struct Individual {
  std::vector<int> idx;  // SearchSpace::encode(config)
  double score;          // time in us, +inf when failed
  uint64_t order;        // arrival number: ties go to the earlier one, deterministically
};

bool better(const Individual& a, const Individual& b) {
  return a.score < b.score || (a.score == b.score && a.order < b.order);
}

class Evo final : public Strategy {
 public:
  explicit Evo(const StrategyContext& ctx)
      : space_(*ctx.space),
        opt_(parse_evo_settings(ctx.options)),
        sampler_(*ctx.space),
        rng_(make_rng(ctx.seed, "evo")),
        model_(*ctx.space) {
    rate_ = opt_.mutation_rate;
    const size_t initial = opt_.initial;
    screen_after_ = std::min(initial, opt_.population);  // the model needs a first generation to go by
    std::vector<size_t> sizes;
    std::vector<bool> ordered;
    for (const auto& p : space_.params()) {
      categorical_.push_back(std::any_of(p.values.begin(), p.values.end(),
                                         [](const Value& v) { return is_string(v); }));
      sizes.push_back(p.values.size());
      ordered.push_back(!categorical_.back());
    }
    compass_.emplace(sizes, ordered, opt_.pattern_step);
    sizes_ = sizes;
    ordered_ = ordered;
    for (const auto& k : ctx.known) {
      seen_.insert(k.config);
      if (told_.insert(k.config)) add_result(k);
    }
    // First generation: the seeds in priority order, then random valid configs, enough to
    // make a population together with the known successes. Where the known results already
    // fill a population (a shape searched before), the seeds still get half a generation:
    // breeding only from what this shape's earlier campaigns found never tries a default or
    // a neighbour's winner that they missed.
    const size_t open = fresh_.size() >= initial ? 0 : initial - fresh_.size();
    std::vector<Config> gen;
    SeenSet seeded;  // known configs are skipped here, so the next seeds take their places
    for (const auto& k : ctx.known) seeded.insert(k.config);
    take_seeds(space_, ctx.seeds, seeded, gen, std::max(open, opt_.population / 2));
    std::erase_if(gen, [&](const Config& c) { return !seen_.insert(c); });
    fill_random(gen, open);
    pending_.assign(gen.begin(), gen.end());
  }

  std::string name() const override { return "evo"; }

  // Returns at most the rest of the current generation, since the next one is bred from
  // this one's results. When the generation is all proposed, a new one is bred at once from
  // whatever has been told so far (so a caller that asks again before telling still gets
  // work). Empty only when no unseen valid config remains.
  std::vector<Config> ask(size_t n) override {
    if (pending_.empty()) breed();
    std::vector<Config> out;
    while (out.size() < n && !pending_.empty()) {
      out.push_back(std::move(pending_.front()));
      pending_.pop_front();
    }
    return out;
  }

  // A repeated tell of the same config (a retried evaluation echoed twice) is ignored: a
  // second copy in the population would only skew the tournaments.
  void tell(const Observation& o) override {
    seen_.insert(o.config);
    if (told_.insert(o.config)) add_result(o);
  }

 private:
  void add_result(const Observation& o) {
    try {
      fresh_.push_back({space_.encode(o.config), score(o.time_us), arrivals_++});
      model_.add(fresh_.back().idx, o.time_us);
      if (std::isfinite(fresh_.back().score)) {
        archive_.push_back(fresh_.back());
        if (!best_ || archive_.back().score < best_->score) best_ = archive_.back();
      }
    } catch (const std::invalid_argument&) {
      // Outside this space (e.g. a stale record): remembered as seen, never bred from.
    }
  }

  // Survivors: the best opt_.population of the population and the results told since the last
  // breeding. Failed ones stay only while nothing better fills the population.
  void select() {
    population_.insert(population_.end(), std::make_move_iterator(fresh_.begin()),
                       std::make_move_iterator(fresh_.end()));
    fresh_.clear();
    std::stable_sort(population_.begin(), population_.end(), better);
    if (population_.size() > opt_.population) population_.resize(opt_.population);
  }

  // Grow the mutation rate while the best does not improve (explore further from the
  // parents), shrink it when it does (exploit the neighbourhood of the new best); count the
  // generations without improvement (immigrants, in breed()).
  void adapt() {
    double best = population_.empty() ? std::numeric_limits<double>::infinity()
                                      : population_.front().score;
    if (best < last_best_) {
      rate_ = std::max(opt_.mutation_min, rate_ * opt_.shrink);
      stagnant_ = 0;
    } else {
      rate_ = std::min(opt_.mutation_max, rate_ * opt_.grow);
      ++stagnant_;
    }
    last_best_ = best;
  }

  const Individual& tournament() {
    std::uniform_int_distribution<size_t> pick(0, population_.size() - 1);
    size_t best = pick(rng_);
    for (size_t i = 1; i < opt_.tournament; ++i) best = std::min(best, pick(rng_));  // sorted
    return population_[best];
  }

  void mutate(std::vector<int>& idx, size_t k) { mutate_params(space_, categorical_, opt_.jump, idx, k, rng_); }

  // A child's index vector: crossover of two tournament winners (or a copy of one), then a
  // mutation of one or two parameters unless crossover alone produced something new.
  std::vector<int> make_child() {
    std::bernoulli_distribution coin_cross(opt_.crossover_rate), coin_rate(rate_),
        coin_second(rate_ / 2);
    const Individual& a = tournament();
    std::vector<int> child = a.idx;
    bool new_mix = false;
    if (population_.size() > 1 && coin_cross(rng_)) {
      const Individual* b = &tournament();
      for (int i = 0; i < 3 && b == &a; ++i) b = &tournament();
      std::bernoulli_distribution half(0.5);
      for (size_t i = 0; i < child.size(); ++i)
        if (half(rng_)) child[i] = b->idx[i];
      new_mix = child != a.idx && child != b->idx;
    }
    if (!new_mix || coin_rate(rng_)) mutate(child, coin_second(rng_) ? 2 : 1);
    return child;
  }

  // The best of opt_.screen children by the surrogate's prediction, once it has a population's
  // worth of outcomes to go by: a child predicted slow costs nothing until it is measured.
  std::vector<int> screened_child() {
    std::vector<int> best = make_child();
    if (opt_.screen <= 1 || model_.size() < screen_after_) return best;
    double best_predicted = model_.predict(best);
    for (size_t k = 1; k < opt_.screen; ++k) {
      std::vector<int> child = make_child();
      const double predicted = model_.predict(child);
      if (predicted < best_predicted) {
        best_predicted = predicted;
        best = std::move(child);
      }
    }
    return best;
  }

  // Adds the unseen valid config nearest to idx; false when the space is exhausted.
  // Where the bounded search finds nothing near (a sparse corner of the space), a random
  // unseen config takes the child's place.
  bool add_nearest(const std::vector<int>& idx, std::vector<Config>& out) {
    SearchSpace::NearestQuery q;
    q.target = idx;
    q.categorical = categorical_;
    q.accept = [&](const Config& c) { return !seen_.contains(c); };
    q.max_checks = kNearestChecks;
    auto c = space_.nearest(q, &rng_);
    if (!c) c = sampler_.draw(rng_, seen_);
    if (!c) return false;
    seen_.insert(*c);
    out.push_back(std::move(*c));
    return true;
  }

  void fill_random(std::vector<Config>& out, size_t limit) {
    while (out.size() < limit) {
      auto c = sampler_.draw(rng_, seen_);
      if (!c) return;
      seen_.insert(*c);
      out.push_back(std::move(*c));
    }
  }

  // Immigrants: each the best of opt_.screen random unseen configs by the surrogate, so that
  // sampling the space at large still favours the values that measured well.
  void fill_screened_random(std::vector<Config>& out, size_t limit) {
    if (opt_.screen <= 1 || model_.size() < screen_after_) return fill_random(out, limit);
    while (out.size() < limit) {
      std::optional<Config> best;
      double best_predicted = 0;
      for (size_t k = 0; k < opt_.screen; ++k) {
        auto c = sampler_.draw(rng_, seen_);
        if (!c) break;
        const double predicted = model_.predict(space_.encode(*c));
        if (!best || predicted < best_predicted) {
          best_predicted = predicted;
          best = std::move(c);
        }
      }
      if (!best) return;
      seen_.insert(*best);
      out.push_back(std::move(*best));
    }
  }

  // Up to opt_.pattern compass polls around the best (pattern.hpp), each the nearest unseen valid
  // config to its target (the target itself where that is valid).
  void add_polls(std::vector<Config>& gen) {
    if (opt_.pattern == 0 || !std::isfinite(population_.front().score)) return;
    auto fresh = [&](const std::vector<int>& idx) { return !seen_.contains(space_.decode(idx)); };
    CompassPoll::Rank rank;
    if (opt_.pattern_rank && opt_.screen > 1 && model_.size() >= screen_after_)
      rank = [&](const std::vector<int>& idx) { return model_.predict(idx); };
    for (size_t k = 0; k < opt_.pattern; ++k) {
      auto target = compass_->next(population_.front().idx, fresh, rank);
      if (!target || !add_nearest(*target, gen)) return;
    }
  }

  // Up to opt_.model_moves one-parameter moves of the best, over each parameter's whole range, ranked by the
  // surrogate (pair_moves.hpp, single_moves); exact targets only, valid and never measured.
  void add_model_moves(std::vector<Config>& gen) {
    if (opt_.model_moves == 0 || !std::isfinite(population_.front().score) || model_.size() < screen_after_) return;
    auto accept = [&](const std::vector<int>& idx) {
      const Config c = space_.decode(idx);
      return !seen_.contains(c) && space_.valid(c);
    };
    for (auto& idx : single_moves(population_.front().idx, sizes_,
                                  [&](const std::vector<int>& i) { return model_.predict(i); }, accept,
                                  opt_.model_moves)) {
      Config c = space_.decode(idx);
      seen_.insert(c);
      gen.push_back(std::move(c));
    }
  }

  // Up to opt_.pairs pair moves around the best opt_.pair_centers members, shared out in rank order
  // (pair_moves.hpp), once the best has stalled for opt_.pair_after generations: its one-parameter
  // neighbourhood (elite children, polls) has had its chance by then. They take places of bred
  // children; exact targets only (a repaired pair move would be a different move), valid and
  // never measured.
  void add_pairs(std::vector<Config>& gen) {
    // After a restart the run's best keeps its share of the moves (opt_.restart_pairs): the
    // basin it left may be a pair move away from the optimum (convolution A100), and a pair move
    // costs one evaluation where regaining the basin by breeding costs generations.
    std::vector<const std::vector<int>*> centers;
    if (opt_.restart_pairs && !basins_.empty() && best_) centers.push_back(&best_->idx);
    const bool stalled = stagnant_ >= opt_.pair_after && std::isfinite(population_.front().score);
    const size_t limit = centers.size() + opt_.pair_centers;
    for (size_t n = 0; stalled && n < population_.size() && centers.size() < limit; ++n)
      if (std::isfinite(population_[n].score)) centers.push_back(&population_[n].idx);
    if (opt_.pairs == 0 || centers.empty()) return;
    auto accept = [&](const std::vector<int>& idx) {
      const Config c = space_.decode(idx);
      return !seen_.contains(c) && space_.valid(c);
    };
    IdxRank rank;  // without the surrogate (screen 1): parameter and value order
    if (opt_.screen > 1 && model_.size() >= screen_after_)
      rank = [&](const std::vector<int>& idx) { return model_.predict(idx); };
    for (size_t n = 0, added = 0; n < centers.size() && added < opt_.pairs; ++n) {
      const size_t k = (opt_.pairs - added + (centers.size() - n) - 1) / (centers.size() - n);
      for (auto& idx : pair_moves(*centers[n], sizes_, opt_.pair_span, rank, accept, k)) {
        Config c = space_.decode(idx);
        seen_.insert(c);
        gen.push_back(std::move(c));
        ++added;
      }
    }
  }

  // After opt_.restart_after generations without a new best (never within the first generations
  // of a live search: 6 stalled generations are 56 evaluations at the earliest), the population
  // is replaced by the best measured configs at least opt_.restart_away parameters from every
  // basin the run settled in (restart.hpp), half a population of them, 2 parameters apart from
  // each other; the next generation adds half a generation of screened random configs. The
  // stalled basin stays measured: the run's best never gets worse.
  bool restart() {
    if (opt_.restart_after == 0 || stagnant_ < opt_.restart_after || population_.empty()) return false;
    basins_.push_back(population_.front().idx);
    std::stable_sort(archive_.begin(), archive_.end(), better);
    std::vector<std::vector<int>> ranked;
    for (const auto& a : archive_) ranked.push_back(a.idx);
    std::vector<Individual> next;
    // Every other restart one parameter further away: near restarts suit an optimum next to the
    // basins found (MI50 convolution), far ones a needle apart from them (W6600).
    const size_t away = opt_.restart_away + (opt_.restart_alternate && basins_.size() % 2 == 0 ? 1 : 0);
    for (size_t i : diverse_picks(ranked, basins_, away, 2, std::max<size_t>(1, opt_.population / 2)))
      next.push_back(archive_[i]);
    population_ = std::move(next);
    stagnant_ = 0;
    rate_ = opt_.mutation_rate;
    last_best_ = population_.empty() ? std::numeric_limits<double>::infinity() : population_.front().score;
    compass_.emplace(sizes_, ordered_, opt_.pattern_step);
    return true;
  }

  void breed() {
    select();
    adapt();
    const bool restarted = restart();
    std::vector<Config> gen;
    if (restarted) fill_screened_random(gen, opt_.offspring / 2);
    if (population_.empty()) {
      // Nothing told yet (a caller asked ahead), or a restart found no point away from the basins.
      if (restarted)
        fill_screened_random(gen, opt_.population);
      else
        fill_random(gen, opt_.population);
    } else {
      // One child next to each of the best opt_.elite configs: local exploitation that does
      // not depend on the luck of the tournament.
      for (size_t e = 0; e < opt_.elite && e < population_.size(); ++e)
        if (std::isfinite(population_[e].score) && !add_nearest(population_[e].idx, gen)) break;
      add_polls(gen);
      add_model_moves(gen);
      add_pairs(gen);
      // Random immigrants once the best has stalled for opt_.immigrate_after generations, one
      // more per further such stretch, up to half a generation. A converged population
      // only refines its own basin; an optimum elsewhere whose neighbours are all slow
      // (MI50 convolution: block 128x2 beats each of its neighbours by 30% or more) is found only by
      // sampling the space at large. On that space this halves the evaluations needed to
      // get within 1%, without slowing the approach to 5%.
      if (opt_.immigrate_after > 0 && stagnant_ >= opt_.immigrate_after)
        fill_screened_random(gen, gen.size() + std::min(opt_.offspring / 2, stagnant_ / opt_.immigrate_after));
      while (gen.size() < opt_.offspring && add_nearest(screened_child(), gen)) {
      }
    }
    pending_.assign(gen.begin(), gen.end());
  }

  static constexpr size_t kNearestChecks = 20000;
  const SearchSpace& space_;
  const EvoSettings opt_;  // the options (evo_settings.hpp)
  SeenSet seen_;  // proposed, told or known: never proposed again
  UnseenSampler sampler_;
  SeenSet told_;      // configs whose outcome is known
  std::mt19937_64 rng_;
  double rate_;  // the mutation rate, adapted between opt_.mutation_min and mutation_max
  std::vector<bool> categorical_;
  std::vector<Individual> population_;  // sorted best first after select()
  std::vector<Individual> fresh_;       // told since the last select()
  std::deque<Config> pending_;          // bred, not yet proposed
  uint64_t arrivals_ = 0;
  double last_best_ = std::numeric_limits<double>::infinity();
  size_t screen_after_ = 8;
  std::optional<CompassPoll> compass_;
  std::vector<size_t> sizes_;  // values per parameter
  std::vector<bool> ordered_;  // whether a parameter's order means anything (not categorical)
  std::vector<Individual> archive_;      // every successful result, for restarts
  std::optional<Individual> best_;       // the run's best result
  std::vector<std::vector<int>> basins_;  // the best of each stalled population, for restarts
  AdditiveSurrogate model_;
  size_t stagnant_ = 0;  // breedings since the best last improved
};

}  // namespace

std::unique_ptr<Strategy> make_evo(const StrategyContext& ctx) { return std::make_unique<Evo>(ctx); }

}  // namespace kf::strategy_detail
