// "anneal": simulated annealing over neighbouring configs. Energy is log(time), so the
// temperature means a relative slow-down (T = 0.1 accepts a 10% slower neighbour with
// probability 1/e) whatever the kernel's scale. The temperature falls geometrically per
// result; when it is cold, or the best has not improved for a while, or the current config
// has no unseen neighbour left, the walk restarts from the best config found.
#include <algorithm>
#include <cmath>

#include "strategy/common.hpp"
#include "strategy/strategies.hpp"

namespace kf::strategy_detail {
namespace {

class Anneal final : public Strategy {
 public:
  explicit Anneal(const StrategyContext& ctx)
      : space_(*ctx.space), sampler_(*ctx.space), rng_(make_rng(ctx.seed, "anneal")) {
    Options o("anneal", ctx.options, {"t0", "alpha", "t_min", "patience"});
    t0_ = o.get_double("t0", 0.1, 1e-6, 100.0);
    alpha_ = o.get_double("alpha", 0.95, 0.01, 1.0);
    t_min_ = o.get_double("t_min", 0.002, 0.0, t0_);
    patience_ = static_cast<size_t>(o.get_int("patience", 30, 1, 1000000));
    temp_ = t0_;
    // Known results only place the walk: it starts at the best of them.
    for (const auto& k : ctx.known) {
      seen_.insert(k.config);
      told_.insert(k.config);
      Point p{k.config, energy(k)};
      if (!best_ || p.energy < best_->energy) best_ = p;
    }
    current_ = best_;
    take_seeds(space_, ctx.seeds, seen_, starts_, ctx.seeds.size());
  }

  std::string name() const override { return "anneal"; }

  // Returns up to n unseen neighbours of the current config (normally the caller asks for
  // one and tells it before asking again: the walk depends on each result). First come the
  // seeds, all of them (the walk starts at the best), or one random start without seeds.
  // When the current config's neighbourhood is used up it restarts from the best and,
  // failing that, jumps to a random unseen config, so the answer is empty only when the
  // space is exhausted.
  std::vector<Config> ask(size_t n) override {
    std::vector<Config> out;
    if (n == 0) return out;
    if (!starts_.empty() || !current_) {
      while (!starts_.empty() && out.size() < n) {
        out.push_back(std::move(starts_.front()));
        starts_.erase(starts_.begin());
      }
      if (out.empty()) jump(out);
      starting_ += out.size();
      return out;
    }
    fill_neighbours(*current_, out, n);
    if (out.empty()) {
      restart();
      fill_neighbours(*current_, out, n);
    }
    if (out.empty()) jump(out);
    return out;
  }

  // A repeated tell of the same config is ignored: it would cool the walk for nothing.
  void tell(const Observation& o) override {
    seen_.insert(o.config);
    if (told_.insert(o.config)) consider(o);
  }

 private:
  struct Point {
    Config config;
    double energy;  // log(time_us), +inf when failed
  };

  static double energy(const Observation& o) {
    double s = score(o.time_us);
    return std::isfinite(s) && s > 0 ? std::log(s) : std::numeric_limits<double>::infinity();
  }

  void consider(const Observation& o) {
    Point p{o.config, energy(o)};
    if (!best_ || p.energy < best_->energy) {
      best_ = p;
      since_improvement_ = 0;
    } else {
      ++since_improvement_;
    }
    if (starting_ > 0 || !current_) {
      // A start: the walk begins at the best start, not at whichever was told first.
      if (starting_ > 0) --starting_;
      current_ = best_;
      return;
    }
    // Metropolis rule; a failed config is never accepted, any success replaces a failed one.
    double delta = p.energy - current_->energy;
    bool accept = false;
    if (std::isfinite(p.energy)) {
      accept = !std::isfinite(current_->energy) || delta <= 0 ||
               std::bernoulli_distribution(std::exp(-delta / temp_))(rng_);
    }
    if (accept) current_ = p;
    temp_ *= alpha_;
    if (temp_ < t_min_ || since_improvement_ >= patience_) restart();
  }

  // Back to the best config, warm again: the search around the best so far deserves a
  // second, differently random walk.
  void restart() {
    if (best_) current_ = best_;
    temp_ = t0_;
    since_improvement_ = 0;
  }

  void fill_neighbours(const Point& at, std::vector<Config>& out, size_t n) {
    std::vector<Config> nbrs;
    try {
      nbrs = space_.neighbours(at.config);
    } catch (const std::invalid_argument&) {
      return;  // a known config outside this space
    }
    std::shuffle(nbrs.begin(), nbrs.end(), rng_);
    // The spec's prior: no step onto a value it tries last; the walk reaches those only
    // through its random jumps, which take them after everything else.
    const size_t here = last_values(at.config);
    std::erase_if(nbrs, [&](const Config& c) { return last_values(c) > here; });
    for (auto& c : nbrs) {
      if (out.size() >= n) break;
      if (seen_.insert(c)) out.push_back(std::move(c));
    }
  }

  size_t last_values(const Config& c) const {
    size_t n = 0;
    for (const auto& p : space_.params()) {
      auto it = c.find(p.name);
      if (it == c.end()) continue;
      for (size_t v = 0; v < p.values.size(); ++v)
        if (p.values[v] == it->second) n += tried_last(p, v) ? 1 : 0;
    }
    return n;
  }

  void jump(std::vector<Config>& out) {
    auto c = sampler_.draw(rng_, seen_);
    if (!c) return;
    seen_.insert(*c);
    out.push_back(std::move(*c));
  }

  const SearchSpace& space_;
  UnseenSampler sampler_;
  std::mt19937_64 rng_;
  double t0_, alpha_, t_min_, temp_;
  size_t patience_;
  SeenSet seen_;
  SeenSet told_;  // configs whose outcome is known
  std::vector<Config> starts_;  // seeds not yet proposed
  size_t starting_ = 0;          // start configs proposed, not yet told
  std::optional<Point> current_, best_;
  size_t since_improvement_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_anneal(const StrategyContext& ctx) {
  return std::make_unique<Anneal>(ctx);
}

}  // namespace kf::strategy_detail
