#include "campaign/seeding.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

namespace kf {

double shape_distance(const Family& family, const Shape& shape_a, const Shape& shape_b) {
  // Stored shapes leave out the dims at their defaults: compare them with every dim filled in.
  Shape a, b;
  try {
    a = full_shape(family, shape_a);
    b = full_shape(family, shape_b);
  } catch (const std::exception&) {  // a stored shape the spec no longer accepts is no neighbour
    return std::numeric_limits<double>::infinity();
  }
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
    if (!space.valid(c)) return false;
    if (!seen.insert(to_string(c)).second) return false;
    seeds.push_back(c);
    return true;
  };
  if (sources == Seeding::none) return seeds;
  if (sources == Seeding::defaults) {
    for (const auto& c : family.defaults) add(c);
    return seeds;
  }
  // A shape searched here before: the defaults it never measured lead. A re-search takes half a generation of
  // seeds, and in the turns below the defaults give one a round, so a default added after the shape's first
  // search (the decode defaults, for the decode shapes) was reached only once every default ahead of it had
  // been, and the neighbours' winners took the other places.
  const std::set<std::string> measured = store.evaluated_config_keys(family.name, shape, device);
  if (!measured.empty())
    for (const auto& d : family.defaults)
      if (!measured.count(to_string(complete_stored_config(family, d)))) add(d);
  auto configs_of = [](const std::vector<EvaluationRecord>& results) {
    std::vector<Config> out;
    for (const auto& r : results) out.push_back(r.config);
    return out;
  };
  // The sources, most telling first: this shape here, the nearest shape, this shape on other
  // devices, the family's defaults (curated, one per regime), the next two nearest shapes.
  std::vector<std::vector<Config>> lists;
  lists.push_back(configs_of(store.top(family.name, shape, device, per_source)));
  std::vector<std::pair<double, Shape>> others;
  for (const auto& s : store.shapes(family.name)) {
    if (s == shape) continue;
    const double d = shape_distance(family, shape, s);
    if (std::isfinite(d)) others.emplace_back(d, s);
  }
  std::stable_sort(others.begin(), others.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  auto neighbour = [&](size_t i) {
    return i < others.size() ? configs_of(store.top(family.name, others[i].second, device, per_source))
                             : std::vector<Config>{};
  };
  lists.push_back(neighbour(0));
  // (any device: imported records too, whose configs are data to start from, though never a winner)
  lists.push_back(configs_of(store.top(family.name, shape, std::nullopt, per_source, RecordsFrom::KforgeAndImported)));
  lists.push_back(family.defaults);
  lists.push_back(neighbour(1));
  lists.push_back(neighbour(2));

  // Round robin: each source gives its next new config in turn. Taken one source after the
  // other, a first generation of 8 on a new shape held only the nearest shapes' winners, which
  // are near copies of each other and can all be wrong for it (the mission winners on a sweep
  // shape ran about 13% slower than a default); one of each keeps the start diverse. The defaults
  // come before the farther shapes, whose winners tell least.
  std::vector<size_t> next(lists.size(), 0);
  for (bool more = true; more;) {
    more = false;
    for (size_t i = 0; i < lists.size(); ++i) {
      while (next[i] < lists[i].size() && !add(lists[i][next[i]++])) {
      }
      more = more || next[i] < lists[i].size();
    }
  }
  return seeds;
}

}  // namespace kf
