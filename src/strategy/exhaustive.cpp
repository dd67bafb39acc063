// "exhaustive": every valid config once, in the order of a depth-first walk of the space
// (lexicographic by index; values the spec's prior tries last come after all the others).
// The baseline that defines the recorded optimum; also the right choice for spaces small
// enough to sweep. The walk is streamed: constant memory, the first config at once.
#include "strategy/common.hpp"
#include "strategy/strategies.hpp"

namespace kf::strategy_detail {
namespace {

class Exhaustive final : public Strategy {
 public:
  explicit Exhaustive(const StrategyContext& ctx) : walk_(*ctx.space, /*prefer_priors=*/true) {
    Options("exhaustive", ctx.options, {});
    for (const auto& o : ctx.known) seen_.insert(o.config);
  }
  std::string name() const override { return "exhaustive"; }

  // Never waits for tells: the order does not depend on outcomes, so it always returns
  // min(n, configs left). Empty means every valid config has been proposed or was known.
  std::vector<Config> ask(size_t n) override {
    std::vector<Config> out;
    while (out.size() < n) {
      auto c = walk_.next();
      if (!c) break;
      if (seen_.insert(*c)) out.push_back(std::move(*c));
    }
    return out;
  }
  void tell(const Observation& o) override { seen_.insert(o.config); }

 private:
  SpaceWalker walk_;
  SeenSet seen_;
};

}  // namespace

std::unique_ptr<Strategy> make_exhaustive(const StrategyContext& ctx) {
  return std::make_unique<Exhaustive>(ctx);
}

}  // namespace kf::strategy_detail
