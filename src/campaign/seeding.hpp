// Where a search starts: what the store already knows (the "EvoEngineer" seeding).
#pragma once
#include <vector>

#include "family/family.hpp"
#include "store/store.hpp"

namespace kf {

enum class Seeding { store, defaults, none };
Seeding parse_seeding(const std::string& name);  // throws std::invalid_argument

// Seed configs without duplicates, taken in turns (one new config from each source per round)
// from these sources, in this order: the best stored results for this shape on this device, for
// the nearest other shape on this device, for this shape on other devices, the family's
// defaults, and the next two nearest shapes. Where this shape has results on this device, the
// defaults it never measured come first. Configs invalid for this shape are dropped.
// Seeding::defaults keeps only the defaults, Seeding::none returns nothing.
std::vector<Config> seed_configs(const Store& store, const Family& family, const Shape& shape,
                                 const DeviceKey& device, const SearchSpace& space,
                                 Seeding sources = Seeding::store, size_t per_source = 8);

// Distance between two shapes of a family: sum over int dims of |log2(a/b)|, infinite when an
// enum or specialized dim differs (a kernel specialized for D=64 says nothing about D=128).
double shape_distance(const Family& family, const Shape& a, const Shape& b);

}  // namespace kf
