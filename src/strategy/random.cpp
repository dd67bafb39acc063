// "random": uniform sampling without replacement over the valid configs. The baseline every
// smarter strategy must beat at equal budget. Seeds are ignored on purpose, so the baseline
// stays unbiased.
#include "strategy/common.hpp"
#include "strategy/strategies.hpp"

namespace kf::strategy_detail {
namespace {

class RandomSearch final : public Strategy {
 public:
  explicit RandomSearch(const StrategyContext& ctx)
      : sampler_(*ctx.space), rng_(make_rng(ctx.seed, "random")) {
    Options("random", ctx.options, {});
    for (const auto& o : ctx.known) seen_.insert(o.config);
  }
  std::string name() const override { return "random"; }

  // Never waits for tells: returns min(n, configs left); empty only when exhausted.
  std::vector<Config> ask(size_t n) override {
    std::vector<Config> out;
    while (out.size() < n) {
      auto c = sampler_.draw(rng_, seen_);
      if (!c) break;
      seen_.insert(*c);
      out.push_back(std::move(*c));
    }
    return out;
  }
  void tell(const Observation& o) override { seen_.insert(o.config); }

 private:
  SeenSet seen_;
  UnseenSampler sampler_;
  std::mt19937_64 rng_;
};

}  // namespace

std::unique_ptr<Strategy> make_random(const StrategyContext& ctx) {
  return std::make_unique<RandomSearch>(ctx);
}

}  // namespace kf::strategy_detail
