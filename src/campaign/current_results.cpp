#include "campaign/current_results.hpp"

#include <exception>

#include "family/render.hpp"

namespace kf {

bool KernelSourceCheck::stale(const EvaluationRecord& e, const Config& config) {
  if (!e.kernel || e.kernel->variant_hash.empty()) return false;
  const std::string key = to_string(config);
  auto it = hash_.find(key);
  if (it == hash_.end()) {
    std::string h;
    try {
      h = render_variant(family_, config, shape_).hash;
    } catch (const std::exception&) {  // no longer renders: leave the record as it is
    }
    it = hash_.emplace(key, h).first;
  }
  return !it->second.empty() && it->second != e.kernel->variant_hash;
}

std::optional<BestResult> best_current(const Store& store, const Family& family, const Shape& shape,
                                       const std::optional<DeviceKey>& device) {
  KernelSourceCheck check(family, shape);
  std::optional<BestResult> current, any;
  auto faster = [](const std::optional<BestResult>& b, const EvaluationRecord& e) {
    return !b || e.timing->median_us < b->record.timing->median_us;
  };
  for (const auto& e : store.evaluations(family.name, shape, device)) {
    if (e.status != Status::Ok || !e.timing) continue;
    const bool stale = check.stale(e, complete_stored_config(family, e.config));
    if (!stale && faster(current, e)) current = BestResult{e, false};
    if (faster(any, e)) any = BestResult{e, true};
  }
  return current ? current : any;
}

}  // namespace kf
