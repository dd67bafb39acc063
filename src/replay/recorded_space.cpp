#include "replay/recorded_space.hpp"

#include <memory>
#include <set>
#include <stdexcept>
#include <unordered_set>

namespace kf {

namespace {

// Checks a point against the domains (`domains`: each parameter's values, for look-ups: a
// search per point was quadratic in a long domain), so that lookups by canonical key cannot miss
// because of a type mismatch (an int64 recorded where the domain holds a string, say).
void check_point(const std::vector<ParamSpec>& params, const std::vector<std::set<Value>>& domains, const Config& c) {
  if (c.size() != params.size())
    throw std::invalid_argument("recorded config " + to_string(c) + " has " +
                                std::to_string(c.size()) + " parameters, the space " +
                                std::to_string(params.size()));
  for (size_t i = 0; i < params.size(); ++i) {
    const ParamSpec& p = params[i];
    auto it = c.find(p.name);
    if (it == c.end())
      throw std::invalid_argument("recorded config " + to_string(c) + " lacks '" + p.name + "'");
    if (!domains[i].count(it->second))
      throw std::invalid_argument("recorded config " + to_string(c) + ": value " +
                                  to_string(it->second) + " is not in the domain of '" +
                                  p.name + "'");
  }
}

std::pair<std::vector<RecordedPoint>, std::shared_ptr<std::unordered_map<std::string, size_t>>>
merge_points(const std::vector<ParamSpec>& params, std::vector<RecordedPoint> in) {
  std::vector<RecordedPoint> out;
  auto index = std::make_shared<std::unordered_map<std::string, size_t>>();
  std::vector<std::set<Value>> domains;
  for (const auto& p : params) domains.emplace_back(p.values.begin(), p.values.end());
  for (auto& p : in) {
    check_point(params, domains, p.config);
    if (p.time_us && !(*p.time_us >= 0))
      throw std::invalid_argument("recorded config " + to_string(p.config) +
                                  " has a negative or NaN time");
    auto [it, added] = index->emplace(to_string(p.config), out.size());
    if (added) {
      out.push_back(std::move(p));
    } else if (p.time_us) {
      auto& kept = out[it->second].time_us;
      if (!kept || *p.time_us < *kept) kept = p.time_us;
    }
  }
  return {std::move(out), std::move(index)};
}

// The first `depth` values of c, in parameter order.
std::string prefix_key(const std::vector<ParamSpec>& params, const Config& c, size_t depth) {
  std::string key;
  for (size_t i = 0; i < depth; ++i) key += to_string(c.at(params[i].name)) + '\x1f';
  return key;
}

}  // namespace

RecordedSpace::RecordedSpace(std::vector<ParamSpec> params, std::vector<RecordedPoint> points,
                             std::string name, nlohmann::json info)
    : name_(std::move(name)),
      info_(std::move(info)),
      space_(params, nullptr) {
  auto [merged, index] = merge_points(params, std::move(points));
  points_ = std::move(merged);
  index_ = index;
  // Every recorded prefix, so that walks and samplers never descend into a subtree that
  // holds no recorded config (the same configs, found without trying the dead ends).
  auto prefixes = std::make_shared<std::vector<std::unordered_set<std::string>>>(params.size());
  for (const auto& pt : points_) {
    // Each prefix's key extends the one before (a key per depth from scratch was quadratic in
    // the number of parameters).
    std::string key;
    for (size_t d = 1; d < params.size(); ++d) {
      key += to_string(pt.config.at(params[d - 1].name)) + '\x1f';
      (*prefixes)[d].insert(key);
    }
  }
  auto ps = std::make_shared<const std::vector<ParamSpec>>(params);
  space_ = SearchSpace(
      std::move(params), [index = index_](const Config& c) { return index->count(to_string(c)) != 0; },
      [prefixes, ps](const Config& prefix, size_t depth) {
        return (*prefixes)[depth].count(prefix_key(*ps, prefix, depth)) != 0;
      });
  for (size_t i = 0; i < points_.size(); ++i) {
    const auto& t = points_[i].time_us;
    if (!t) {
      ++failed_;
      continue;
    }
    if (!optimum_ || *t < *points_[*optimum_].time_us) optimum_ = i;
    if (!worst_us_ || *t > *worst_us_) worst_us_ = *t;
  }
}

const RecordedPoint* RecordedSpace::find(const Config& c) const {
  auto it = index_->find(to_string(c));
  return it == index_->end() ? nullptr : &points_[it->second];
}

}  // namespace kf
