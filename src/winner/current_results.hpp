// A stored result belongs to the kernel it timed. When a family's template changes, the results recorded with the
// old source no longer describe the kernel their config renders to now: campaigns run such configs again, and
// `best` / `export` prefer results of the current kernels.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/objective.hpp"
#include "family/family.hpp"
#include "store/store.hpp"

namespace kf {

// Compares a record's kernel hash with its config's kernel as rendered now (one render per config, cached).
class KernelSourceCheck {
 public:
  KernelSourceCheck(const Family& family, const Shape& shape) : family_(family), shape_(shape) {}
  // True when the record was measured with another kernel source, or timed with another timing method
  // (kTimingMethod). Records without a kernel (never compiled, imported) and configs that no longer render are
  // not stale: nothing newer can replace them.
  bool stale(const EvaluationRecord& e, const Config& config);
  // True only when the record's kernel source differs from the config's kernel now: its gate no longer vouches
  // for that kernel. (A record stale only by its timing method timed the same, gated kernel.)
  bool source_stale(const EvaluationRecord& e, const Config& config);

 private:
  const Family& family_;
  Shape shape_;
  std::map<std::string, std::string> hash_;  // config key -> current kernel hash ("" if it does not render)
};

// What compute-sanitizer said about a kernel (`search --sanitize`): any failed run of any tool
// on any shape fails it; it passes when memcheck and racecheck both ran clean.
struct SanitizerVerdict {
  enum class State { NotRun, Partial, Passed, Failed } state = State::NotRun;
  std::string summary;  // the failed run's "tool: summary", or ""
};
SanitizerVerdict sanitizer_verdict(const Store& store, const std::string& family, const std::string& variant_hash);
const char* to_string(SanitizerVerdict::State s);  // "not run" | "partial" | "passed" | "failed"

struct BestResult {
  EvaluationRecord record;
  bool stale = false;         // no current result exists; this one timed an older source or with another method
  bool source_stale = false;  // stale, and its kernel source is not the current one (it must be gated again)
  SanitizerVerdict sanitizer;
  size_t sanitizer_rejected = 0;  // faster results skipped because their kernel failed sanitizing
  int64_t ranked_by = 0;  // the campaign whose finalists' side-by-side ranking put this one over a faster record
};

// The fastest gated result for the shape (on `device`, or any) among those of current kernels; if there are
// none, the fastest of all, marked stale. Only records kforge's gate passed compete: an imported one
// (Provenance::Imported) never wins. A kernel that failed a compute-sanitizer run never wins. Where the
// newest side-by-side re-measure of the shape's finalists on that device timed the fastest current kernel, its
// order decides among the kernels it timed (winner/finalist_ranking): its first one still current wins.
// With another objective than time (energy, edp), the record of the least such value wins among the current
// ones that measured energy (the finalists' side-by-side order is a ranking by time, so it does not apply);
// records without energy never win it (nullopt where no record has any).
std::optional<BestResult> best_current(const Store& store, const Family& family, const Shape& shape,
                                       const std::optional<DeviceKey>& device, Objective objective = Objective::Time);

// The current gated records of the shape on the time/energy Pareto front: none of them both slower and using
// more energy a launch than another. Fastest first; empty where no current record measured energy.
std::vector<EvaluationRecord> pareto_front(const Store& store, const Family& family, const Shape& shape,
                                           const std::optional<DeviceKey>& device);

// The shape's timed records of other tools (`import --store`), which `best` lists apart and never picks.
struct ImportedRecords {
  size_t timed = 0;                       // ok records with a time
  std::optional<EvaluationRecord> fastest;
};
ImportedRecords imported_records(const Store& store, const Family& family, const Shape& shape,
                                 const std::optional<DeviceKey>& device);

// A record in which kforge's gate passed `config`'s current kernel at `shape` (on `device`, or any) and which
// no compute-sanitizer run failed: the fastest of the current timing method, else the fastest; nullopt where
// there is none (`export --config` then gates the config first, or refuses).
std::optional<EvaluationRecord> gated_record(const Store& store, const Family& family, const Shape& shape,
                                             const Config& config, const std::optional<DeviceKey>& device);

}  // namespace kf
