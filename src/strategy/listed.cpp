// The "listed" strategy of `kforge refresh`: exactly the given configs, in order, each once;
// those already known (evaluated with the current kernel) and those the space no longer
// admits are skipped. Not a search: strategy_names() does not list it.
#include <stdexcept>

#include "strategy/common.hpp"
#include "strategy/strategy.hpp"

namespace kf {
namespace {

class Listed final : public Strategy {
 public:
  Listed(std::vector<Config> configs, const StrategyContext& ctx) : space_(*ctx.space), configs_(std::move(configs)) {
    for (const auto& o : ctx.known) seen_.insert(o.config);
  }
  std::string name() const override { return "listed"; }
  std::vector<Config> ask(size_t n) override {
    std::vector<Config> out;
    while (out.size() < n && next_ < configs_.size()) {
      const Config& c = configs_[next_++];
      if (space_.valid(c) && seen_.insert(c)) out.push_back(c);
    }
    return out;
  }
  void tell(const Observation& o) override { seen_.insert(o.config); }

 private:
  const SearchSpace& space_;
  std::vector<Config> configs_;
  strategy_detail::SeenSet seen_;
  size_t next_ = 0;
};

}  // namespace

std::unique_ptr<Strategy> make_listed_strategy(std::vector<Config> configs, const StrategyContext& ctx) {
  if (ctx.space == nullptr) throw std::invalid_argument("make_listed_strategy: no search space");
  return std::make_unique<Listed>(std::move(configs), ctx);
}

}  // namespace kf
