// "exhaustive": every valid config once, in the space's enumeration order. The baseline that
// defines the recorded optimum; also the right choice for spaces small enough to sweep.
#include "strategy/common.hpp"
#include "strategy/strategies.hpp"

namespace kf::strategy_detail {
namespace {

class Exhaustive final : public Strategy {
 public:
  explicit Exhaustive(const StrategyContext& ctx) : space_(*ctx.space) {
    Options("exhaustive", ctx.options, {});
    for (const auto& o : ctx.known) seen_.insert(o.config);
  }
  std::string name() const override { return "exhaustive"; }

  // Never waits for tells: the order does not depend on outcomes, so it always returns
  // min(n, configs left). Empty means every valid config has been proposed or was known.
  std::vector<Config> ask(size_t n) override {
    std::vector<Config> out;
    const auto& all = space_.valid_configs();
    while (out.size() < n && next_ < all.size()) {
      const Config& c = all[next_++];
      if (seen_.insert(c)) out.push_back(c);
    }
    return out;
  }
  void tell(const Observation& o) override { seen_.insert(o.config); }

 private:
  const SearchSpace& space_;
  SeenSet seen_;
  size_t next_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_exhaustive(const StrategyContext& ctx) {
  return std::make_unique<Exhaustive>(ctx);
}

}  // namespace kf::strategy_detail
