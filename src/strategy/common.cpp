#include "strategy/common.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "util/hash.hpp"

namespace kf::strategy_detail {

std::mt19937_64 make_rng(uint64_t seed, const std::string& salt) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a of the salt
  for (unsigned char ch : salt) h = (h ^ ch) * 1099511628211ULL;
  return std::mt19937_64(splitmix64(seed ^ h));
}

Options::Options(std::string strategy, const nlohmann::json& options,
                 std::vector<std::string> known)
    : strategy_(std::move(strategy)), options_(options) {
  if (options_.is_null()) options_ = nlohmann::json::object();
  if (!options_.is_object())
    throw std::invalid_argument(strategy_ + ": options must be a JSON object");
  for (const auto& [name, value] : options_.items()) {
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    throw std::invalid_argument(strategy_ + ": unknown option '" + name + "' (known: " +
                                (list.empty() ? "none" : list) + ")");
  }
}

int64_t Options::get_int(const std::string& name, int64_t def, int64_t min, int64_t max) const {
  auto it = options_.find(name);
  if (it == options_.end()) return def;
  if (!it->is_number_integer())
    throw std::invalid_argument(strategy_ + ": option '" + name + "' must be an integer");
  auto v = it->get<int64_t>();
  if (v < min || v > max)
    throw std::invalid_argument(strategy_ + ": option '" + name + "' must be in [" +
                                std::to_string(min) + ", " + std::to_string(max) + "]");
  return v;
}

double Options::get_double(const std::string& name, double def, double min, double max) const {
  auto it = options_.find(name);
  if (it == options_.end()) return def;
  if (!it->is_number())
    throw std::invalid_argument(strategy_ + ": option '" + name + "' must be a number");
  auto v = it->get<double>();
  if (!(v >= min && v <= max))
    throw std::invalid_argument(strategy_ + ": option '" + name + "' must be in [" +
                                std::to_string(min) + ", " + std::to_string(max) + "]");
  return v;
}

ValidIndex::ValidIndex(const SearchSpace& space)
    : configs_(&space.valid_configs()), width_(space.params().size()) {
  encoded_.reserve(configs_->size() * width_);
  by_key_.reserve(configs_->size());
  for (size_t i = 0; i < configs_->size(); ++i) {
    auto idx = space.encode((*configs_)[i]);
    encoded_.insert(encoded_.end(), idx.begin(), idx.end());
    by_key_.emplace(to_string((*configs_)[i]), i);
  }
  seen_.assign(configs_->size(), 0);
}

bool ValidIndex::insert(const Config& c) {
  if (!keys_.insert(c)) return false;
  auto it = by_key_.find(to_string(c));
  if (it != by_key_.end()) seen_[it->second] = 1;
  return true;
}

std::optional<size_t> ValidIndex::nearest_unseen(const std::vector<int>& idx,
                                                 const std::vector<bool>& categorical,
                                                 std::mt19937_64& rng) const {
  std::optional<size_t> chosen;
  long best = std::numeric_limits<long>::max();
  size_t ties = 0;
  for (size_t i = 0; i < size(); ++i) {
    if (seen_[i]) continue;
    const int* e = &encoded_[i * width_];
    long d = 0;
    for (size_t p = 0; p < width_ && d <= best; ++p)
      d += categorical[p] ? (e[p] != idx[p]) : std::abs(e[p] - idx[p]);
    if (d < best) {
      best = d;
      chosen = i;
      ties = 1;
    } else if (d == best && std::uniform_int_distribution<size_t>(0, ties++)(rng) == 0) {
      chosen = i;  // reservoir sampling: each tied config equally likely
    }
  }
  return chosen;
}

std::optional<Config> UnseenSampler::draw(std::mt19937_64& rng, const SeenSet& seen) {
  if (!listing_) {
    for (int i = 0; i < kMaxRejections; ++i) {
      auto c = space_->random_valid(rng);
      if (!c) return std::nullopt;  // the space has no valid config at all
      if (!seen.contains(*c)) return c;
    }
    listing_ = true;
    order_.resize(space_->valid_configs().size());
    std::iota(order_.begin(), order_.end(), size_t{0});
    next_ = 0;
  }
  // Lazy Fisher-Yates: each step picks uniformly among the indices not drawn yet; seen
  // ones are discarded for good (a config never becomes unseen again).
  const auto& all = space_->valid_configs();
  while (next_ < order_.size()) {
    std::uniform_int_distribution<size_t> pick(next_, order_.size() - 1);
    std::swap(order_[next_], order_[pick(rng)]);
    const Config& c = all[order_[next_++]];
    if (!seen.contains(c)) return c;
  }
  return std::nullopt;
}

void take_seeds(const SearchSpace& space, const std::vector<Config>& seeds, SeenSet& seen,
                std::vector<Config>& out, size_t limit) {
  for (const auto& s : seeds) {
    if (out.size() >= limit) return;
    std::optional<Config> c;
    try {
      c = space.valid(s) ? std::optional<Config>(s) : space.repair(s);
    } catch (const std::exception&) {
      continue;  // a seed from another version of the family: names or values unknown here
    }
    if (c && seen.insert(*c)) out.push_back(*c);
  }
}

}  // namespace kf::strategy_detail
