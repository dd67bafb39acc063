// The spec's "priors": {"MMA": {"simt": 0, "wmma": 0.2}}: a weight per value (others 1); 0 means
// the value is tried only after every other one (docs/family_spec.md, "priors").
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "family/family_loader.hpp"

namespace kf::detail {

void FamilyLoader::load_priors(const Json& priors) {
  object(priors, "/priors");
  for (const auto& [name, weights] : priors.items()) {
    const std::string ptr = child("/priors", name);
    auto it = std::find_if(f_.params.begin(), f_.params.end(), [&](const ParamSpec& p) { return p.name == name; });
    if (it == f_.params.end()) fail(ptr, "unknown parameter '" + name + "'");
    object(weights, ptr);
    it->weights.assign(it->values.size(), 1.0);
    // The values by their spelling: a search per weighted value was quadratic in a long domain.
    std::unordered_map<std::string, size_t> place;
    for (size_t k = 0; k < it->values.size(); ++k) place.emplace(to_string(it->values[k]), k);
    for (const auto& [value, weight] : weights.items()) {
      const std::string vptr = child(ptr, value);
      auto at = place.find(value);
      if (at == place.end()) fail(vptr, "'" + value + "' is not a value of '" + name + "'");
      const size_t k = at->second;
      const double w = number(weight, vptr);
      if (!(w >= 0) || !std::isfinite(w)) fail(vptr, "a prior weight must be a finite number >= 0");
      it->weights[k] = w;
    }
    if (std::all_of(it->weights.begin(), it->weights.end(), [](double w) { return w == 0; }))
      fail(ptr, "every value of '" + name + "' has weight 0: at least one must be positive");
  }
}

}  // namespace kf::detail
