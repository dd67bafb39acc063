// The spec's "priors": {"MMA": {"simt": 0, "wmma": 0.2}}: a weight per value (others 1); 0 means
// the value is tried only after every other one (docs/family_spec.md, "priors").
#include <algorithm>
#include <cmath>

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
    for (const auto& [value, weight] : weights.items()) {
      const std::string vptr = child(ptr, value);
      size_t k = 0;
      while (k < it->values.size() && to_string(it->values[k]) != value) ++k;
      if (k == it->values.size()) fail(vptr, "'" + value + "' is not a value of '" + name + "'");
      const double w = number(weight, vptr);
      if (!(w >= 0) || !std::isfinite(w)) fail(vptr, "a prior weight must be a finite number >= 0");
      it->weights[k] = w;
    }
    if (std::all_of(it->weights.begin(), it->weights.end(), [](double w) { return w == 0; }))
      fail(ptr, "every value of '" + name + "' has weight 0: at least one must be positive");
  }
}

}  // namespace kf::detail
