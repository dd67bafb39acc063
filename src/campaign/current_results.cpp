#include "campaign/current_results.hpp"

#include <algorithm>
#include <exception>
#include <vector>

#include "family/render.hpp"

namespace kf {

bool KernelSourceCheck::stale(const EvaluationRecord& e, const Config& config) {
  const bool has_kernel = e.kernel && !e.kernel->variant_hash.empty();
  if (has_kernel && e.timing && e.timing->method != kTimingMethod) return true;  // times of two methods do not compare
  return source_stale(e, config);
}

bool KernelSourceCheck::source_stale(const EvaluationRecord& e, const Config& config) {
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

SanitizerVerdict sanitizer_verdict(const Store& store, const std::string& family, const std::string& variant_hash) {
  SanitizerVerdict v;
  bool memcheck = false, racecheck = false;
  for (const auto& r : store.sanitizer_runs(family, variant_hash)) {
    if (!r.passed) {
      v.state = SanitizerVerdict::State::Failed;
      v.summary = r.tool + ": " + r.summary;
      return v;
    }
    memcheck |= r.tool == "memcheck";
    racecheck |= r.tool == "racecheck";
  }
  if (memcheck && racecheck) v.state = SanitizerVerdict::State::Passed;
  else if (memcheck || racecheck) v.state = SanitizerVerdict::State::Partial;
  return v;
}

const char* to_string(SanitizerVerdict::State s) {
  switch (s) {
    case SanitizerVerdict::State::NotRun: return "not run";
    case SanitizerVerdict::State::Partial: return "partial";
    case SanitizerVerdict::State::Passed: return "passed";
    case SanitizerVerdict::State::Failed: return "failed";
  }
  return "?";
}

std::optional<BestResult> best_current(const Store& store, const Family& family, const Shape& shape,
                                       const std::optional<DeviceKey>& device) {
  KernelSourceCheck check(family, shape);
  std::map<std::string, SanitizerVerdict> verdicts;  // by kernel hash: one lookup each
  auto verdict_of = [&](const EvaluationRecord& e) {
    const std::string hash = e.kernel ? e.kernel->variant_hash : "";
    if (hash.empty()) return SanitizerVerdict{};
    auto it = verdicts.find(hash);
    if (it == verdicts.end()) it = verdicts.emplace(hash, sanitizer_verdict(store, family.name, hash)).first;
    return it->second;
  };
  std::vector<EvaluationRecord> ok;
  for (auto& e : store.evaluations(family.name, shape, device))
    if (e.status == Status::Ok && e.timing) ok.push_back(std::move(e));
  std::stable_sort(ok.begin(), ok.end(), [](const EvaluationRecord& a, const EvaluationRecord& b) {
    return a.timing->median_us < b.timing->median_us;
  });
  // Fastest first: the first current kernel that did not fail sanitizing wins; failing ones
  // passed on the way were faster.
  std::optional<BestResult> fastest_stale;
  size_t rejected = 0;
  for (const auto& e : ok) {
    const SanitizerVerdict v = verdict_of(e);
    if (v.state == SanitizerVerdict::State::Failed) {
      ++rejected;
      continue;
    }
    const Config config = complete_stored_config(family, e.config);
    if (!check.stale(e, config)) return BestResult{e, false, false, v, rejected};
    if (!fastest_stale) fastest_stale = BestResult{e, true, check.source_stale(e, config), v, 0};
  }
  if (fastest_stale) fastest_stale->sanitizer_rejected = rejected;
  return fastest_stale;
}

}  // namespace kf
