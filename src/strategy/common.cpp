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

std::optional<Config> UnseenSampler::draw(std::mt19937_64& rng, const SeenSet& seen) {
  for (int i = 0; i < kMaxRejections; ++i) {
    auto c = space_->random_valid(rng);
    if (!c) return std::nullopt;  // the space has no valid config at all
    if (!seen.contains(*c)) return c;
  }
  return space_->random_valid(rng, [&](const Config& c) { return !seen.contains(c); });
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
