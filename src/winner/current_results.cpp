#include "winner/current_results.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <vector>

#include "family/render.hpp"
#include "winner/finalist_ranking.hpp"

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

namespace {

std::string kernel_hash(const EvaluationRecord& e) { return e.kernel ? e.kernel->variant_hash : std::string(); }

// The winner by the newest finalist ranking that timed `fastest` (the fastest current record): the first config
// of that ranking that still has a current record of the kernel it timed (its fastest such record); nullopt where
// no ranking timed it.
template <class Current>
std::optional<BestResult> ranked_winner(const Store& store, const Family& family, const Shape& shape,
                                        const EvaluationRecord& fastest, const std::vector<EvaluationRecord>& ok,
                                        const Current& current) {
  const auto ranking = latest_ranking(store, family.name, shape, fastest.device);
  if (!ranking || ranking->position(to_string(complete_stored_config(family, fastest.config)),
                                    kernel_hash(fastest)) < 0)
    return std::nullopt;
  for (const auto& r : ranking->order)
    for (const auto& e : ok)  // (fastest first)
      if (kernel_hash(e) == r.variant_hash && to_string(complete_stored_config(family, e.config)) == r.config &&
          current(e)) {
        BestResult b{e, false, false, {}, 0};
        if (e.id != fastest.id) b.ranked_by = ranking->campaign_id;
        return b;
      }
  return std::nullopt;
}

}  // namespace

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
                                       const std::optional<DeviceKey>& device, Objective objective) {
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
    if (e.gate_passed() && e.timing && std::isfinite(objective_value(*e.timing, objective))) ok.push_back(std::move(e));
  std::stable_sort(ok.begin(), ok.end(), [objective](const EvaluationRecord& a, const EvaluationRecord& b) {
    return objective_value(*a.timing, objective) < objective_value(*b.timing, objective);
  });
  // Fastest first: the first current kernel that did not fail sanitizing wins; failing ones
  // passed on the way were faster. If the newest side-by-side re-measure of the shape's finalists
  // (winner/finalist_ranking) timed that kernel, its order decides among the kernels it timed instead.
  std::optional<BestResult> fastest_stale;
  size_t rejected = 0;
  auto current = [&](const EvaluationRecord& e) {
    return verdict_of(e).state != SanitizerVerdict::State::Failed &&
           !check.stale(e, complete_stored_config(family, e.config));
  };
  for (const auto& e : ok) {
    const SanitizerVerdict v = verdict_of(e);
    if (v.state == SanitizerVerdict::State::Failed) {
      ++rejected;
      continue;
    }
    const Config config = complete_stored_config(family, e.config);
    if (!check.stale(e, config)) {
      if (objective != Objective::Time) return BestResult{e, false, false, v, rejected};
      if (auto ranked = ranked_winner(store, family, shape, e, ok, current)) {
        ranked->sanitizer = verdict_of(ranked->record);
        ranked->sanitizer_rejected = rejected;
        return ranked;
      }
      return BestResult{e, false, false, v, rejected};
    }
    if (!fastest_stale) fastest_stale = BestResult{e, true, check.source_stale(e, config), v, 0};
  }
  if (fastest_stale) fastest_stale->sanitizer_rejected = rejected;
  return fastest_stale;
}

std::vector<EvaluationRecord> pareto_front(const Store& store, const Family& family, const Shape& shape,
                                           const std::optional<DeviceKey>& device) {
  KernelSourceCheck check(family, shape);
  std::vector<EvaluationRecord> measured;
  for (auto& e : store.evaluations(family.name, shape, device)) {
    if (!e.gate_passed() || !e.timing || e.timing->power_w <= 0) continue;
    if (check.stale(e, complete_stored_config(family, e.config))) continue;
    const std::string hash = e.kernel ? e.kernel->variant_hash : "";
    if (!hash.empty() && sanitizer_verdict(store, family.name, hash).state == SanitizerVerdict::State::Failed) continue;
    measured.push_back(std::move(e));
  }
  std::stable_sort(measured.begin(), measured.end(), [](const EvaluationRecord& a, const EvaluationRecord& b) {
    return a.timing->median_us < b.timing->median_us ||
           (a.timing->median_us == b.timing->median_us && a.timing->energy_uj < b.timing->energy_uj);
  });
  // Fastest first: a record is on the front when it uses less energy than every faster one.
  std::vector<EvaluationRecord> front;
  for (auto& e : measured)
    if (front.empty() || e.timing->energy_uj < front.back().timing->energy_uj) front.push_back(std::move(e));
  return front;
}

ImportedRecords imported_records(const Store& store, const Family& family, const Shape& shape,
                                 const std::optional<DeviceKey>& device) {
  ImportedRecords out;
  for (auto& e : store.evaluations(family.name, shape, device)) {
    if (e.provenance != Provenance::Imported || e.status != Status::Ok || !e.timing) continue;
    ++out.timed;
    if (!out.fastest || e.timing->median_us < out.fastest->timing->median_us) out.fastest = std::move(e);
  }
  return out;
}

std::optional<EvaluationRecord> gated_record(const Store& store, const Family& family, const Shape& shape,
                                             const Config& config, const std::optional<DeviceKey>& device) {
  KernelSourceCheck check(family, shape);
  const std::string key = to_string(config);
  std::optional<EvaluationRecord> out;
  const auto better = [](const EvaluationRecord& a, const EvaluationRecord& b) {
    const bool a_now = a.timing->method == kTimingMethod, b_now = b.timing->method == kTimingMethod;
    return a_now != b_now ? a_now : a.timing->median_us < b.timing->median_us;
  };
  for (auto& e : store.evaluations(family.name, shape, device)) {
    // The gate vouches for the kernel it ran: one of the config's current source, compiled and timed here.
    if (!e.gate_passed() || !e.timing || !e.kernel || e.kernel->variant_hash.empty()) continue;
    if (to_string(complete_stored_config(family, e.config)) != key || check.source_stale(e, config)) continue;
    if (sanitizer_verdict(store, family.name, e.kernel->variant_hash).state == SanitizerVerdict::State::Failed)
      continue;
    if (!out || better(e, *out)) out = std::move(e);
  }
  return out;
}

}  // namespace kf
