// How large a family spec may be (docs/family_spec.md, "Limits"). Real specs are far below
// these (sdpa_fwd: 24 KB, 26 parameters of at most 8 values, 15 derived values, 25
// constraints); the bounds keep a generated or corrupt spec from costing minutes or gigabytes
// before it is refused with one line.
#pragma once
#include <cstddef>

namespace kf::spec_limits {

// The spec file: read whole and parsed into a JSON tree of several times its size.
inline constexpr size_t kMaxSpecBytes = 4u << 20;
// Parameters, and values of one parameter. A walk's subtree-size cache keys an index in two
// bytes (space/space_sizes.cpp), so a domain must stay below 65,536 values.
inline constexpr size_t kMaxParams = 1000;
inline constexpr size_t kMaxValuesPerParam = 10000;
// Dimensions, derived values and constraints: each config's check evaluates the derived values
// and constraints once, millions of times in a walk.
inline constexpr size_t kMaxDims = 1000;
inline constexpr size_t kMaxDerived = 1000;
inline constexpr size_t kMaxConstraints = 1000;

}  // namespace kf::spec_limits
