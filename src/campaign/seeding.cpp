#include "campaign/seeding.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

namespace kf {

double shape_distance(const Family& family, const Shape& a, const Shape& b) {
  double d = 0;
  for (const auto& dim : family.dims) {
    auto ia = a.find(dim.name), ib = b.find(dim.name);
    if (ia == a.end() || ib == b.end()) return std::numeric_limits<double>::infinity();
    const bool specialized = std::find(family.specialize.begin(), family.specialize.end(),
                                       dim.name) != family.specialize.end();
    if (dim.is_enum || specialized) {
      if (ia->second != ib->second) return std::numeric_limits<double>::infinity();
      continue;
    }
    const double va = std::max(1.0, as_double(ia->second));
    const double vb = std::max(1.0, as_double(ib->second));
    d += std::abs(std::log2(va / vb));
  }
  return d;
}

Seeding parse_seeding(const std::string& name) {
  if (name == "store") return Seeding::store;
  if (name == "defaults") return Seeding::defaults;
  if (name == "none") return Seeding::none;
  throw std::invalid_argument("unknown seeding '" + name + "' (store | defaults | none)");
}

std::vector<Config> seed_configs(const Store& store, const Family& family, const Shape& shape,
                                 const DeviceKey& device, const SearchSpace& space,
                                 Seeding sources, size_t per_source) {
  std::vector<Config> seeds;
  std::set<std::string> seen;
  auto add = [&](const Config& stored) {
    const Config c = complete_stored_config(family, stored);
    if (!space.valid(c)) return;
    if (seen.insert(to_string(c)).second) seeds.push_back(c);
  };
  if (sources == Seeding::none) return seeds;
  if (sources == Seeding::defaults) {
    for (const auto& c : family.defaults) add(c);
    return seeds;
  }
  for (const auto& e : store.top(family.name, shape, device, per_source)) add(e.config);

  std::vector<std::pair<double, Shape>> others;
  for (const auto& s : store.shapes(family.name)) {
    if (s == shape) continue;
    const double d = shape_distance(family, shape, s);
    if (std::isfinite(d)) others.emplace_back(d, s);
  }
  std::stable_sort(others.begin(), others.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  for (size_t i = 0; i < others.size() && i < 3; ++i)
    for (const auto& e : store.top(family.name, others[i].second, device, per_source)) add(e.config);

  for (const auto& e : store.top(family.name, shape, std::nullopt, per_source)) add(e.config);
  for (const auto& c : family.defaults) add(c);
  return seeds;
}

}  // namespace kf
