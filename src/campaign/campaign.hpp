// The search loop: strategy -> render -> compile (CPU threads) -> worker (GPU) -> store -> tell.
// Compilation runs ahead of the GPU on a thread pool, so the pipeline is never serial.
#pragma once
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/objective.hpp"
#include "eval/protocol.hpp"
#include "family/family.hpp"
#include "store/store.hpp"

namespace kf {

struct Budget {
  size_t evals_per_shape = 0;  // 0: unlimited (the strategy's space decides)
  double time_s = 0;           // 0: unlimited; wall time for the whole campaign
  size_t plateau = 0;          // 0: off; stop a shape after this many evals without a new best
};

class LoopEvaluator;

// Evaluations that run elsewhere: a distributed campaign's work queue, which agents on other
// nodes serve (src/distributed/coordinator.hpp). The campaign then starts no worker, compiles nothing,
// runs its shapes side by side, and skips the local re-measure and sanitizer steps.
class RemoteEvaluations {
 public:
  virtual ~RemoteEvaluations() = default;
  virtual DeviceLimits device() = 0;  // the device the campaign targets (may wait for it)
  virtual void started(int64_t campaign_id, const std::string& family, const nlohmann::json& options) = 0;
  virtual std::unique_ptr<LoopEvaluator> evaluator(const Family& family, const Shape& shape) = 0;
  virtual size_t depth() = 0;  // configs in flight per shape
  virtual void finished(const std::string& status) = 0;
};

struct CampaignOptions {
  std::string strategy = "evo";
  uint64_t seed = 1;
  // What the search minimises: time, or (where the worker measures it through NVML) energy or energy x time.
  // With energy or edp the finalists' side-by-side re-measure (a ranking by time) is skipped.
  Objective objective = Objective::Time;
  Budget budget;
  TimingOptions timing;
  double eval_timeout_s = 60;  // watchdog per evaluation
  size_t compile_threads = 0;  // 0: hardware concurrency
  std::vector<int> gpus;       // empty: all visible
  int remeasure_top_k = 5;     // re-measured interleaved before a winner is declared
  // Their rounds: 0, until the rule of eval/round_rule knows the answer (at most 21 rounds, and at most
  // max(finalist_min_s, finalist_share x the worker seconds of the shape's search in this run)); N, a
  // fixed N rounds without a time cap (the count before the rule was 21).
  int finalist_rounds = 0;
  double finalist_share = 0.1;
  double finalist_min_s = 3;
  nlohmann::json strategy_options;
  // Non-empty: no search; each shape (key: to_string(shape)) runs exactly these configs, the
  // ones not yet evaluated with their current kernel (`kforge refresh`).
  std::map<std::string, std::vector<Config>> listed;
  // Parameters pinned to one value: the search covers the rest of the space only.
  Config fixed;
  // Where the first configs come from: "store" (stored results, then the family's defaults),
  // "defaults" (defaults only) or "none" (the strategy's own random start: a cold start).
  std::string seeding = "store";
  // Run the top-K finalists of each shape once under compute-sanitizer memcheck and racecheck
  // (also on when the family's spec says "sanitize": true); best / export skip a failed one.
  bool sanitize = false;
  double sanitize_timeout_s = 1800;     // per tool and finalist
  std::filesystem::path cache_dir;      // cubin cache
  std::vector<std::string> worker_argv;  // e.g. {"/path/kforge","worker"}; "--device N" is appended
  // Several shapes: "interleave" searches them at once, sharing the pipeline by expected gain
  // (campaign/suite_run.hpp); "sequential" one after another, each until its own stop.
  std::string schedule = "interleave";
  bool quiet = false;
  std::shared_ptr<RemoteEvaluations> remote;  // set: a distributed campaign (not recorded)
};

nlohmann::json to_json(const CampaignOptions& o);
CampaignOptions campaign_options_from_json(const nlohmann::json& j);

struct ShapeOutcome {
  Shape shape;
  size_t evaluated = 0;  // evaluations run by this campaign for the shape
  bool cut_short = false;  // the time budget or a stop ended it before its own budget did
  std::optional<EvaluationRecord> best;
  // Re-measured top-K, fastest first; tied_with_best: CI overlaps the winner's.
  struct Remeasured {
    Config config;
    TimingStats timing;
    bool tied_with_best = false;
    int rounds = 0;  // rounds it was timed in (fewer than the re-measure's once it was behind)
  };
  std::vector<Remeasured> remeasured;
  // How that re-measure went (rounds 0: none ran).
  struct Remeasure {
    int rounds = 0;
    RoundStop stop = RoundStop::Fixed;  // separated, tie, max rounds, time cap, one kernel; fixed: --finalist-rounds N
    double wall_s = 0;                  // compile, gate and rounds
    double cap_s = 0;                   // its time cap (0: none)
  };
  Remeasure remeasure;
};

struct CampaignOutcome {
  int64_t campaign_id = 0;
  std::string status;  // done | stopped
  std::vector<ShapeOutcome> shapes;
  double wall_s = 0, compile_s = 0, gpu_s = 0;
  size_t compiled = 0, cache_hits = 0;
  std::map<std::string, int> status_counts;
};

// Configs a campaign keeps in flight: two per GPU plus one per compile thread asked for (at
// least 2), so NVRTC runs ahead and a GPU never waits for it. Replay uses the same depth.
size_t campaign_depth(size_t gpus, size_t compile_threads);

// Set by the SIGINT handler: the campaign finishes the evaluation in flight and stops.
extern std::atomic<bool> g_stop_requested;

// Starts a new campaign over shapes, recorded in the store. Throws std::runtime_error with a
// one-line message (e.g. "no CUDA device available") before anything is recorded.
CampaignOutcome run_campaign(Store& store, const Family& family, const std::vector<Shape>& shapes,
                             const CampaignOptions& options);
// Continues a recorded campaign: in-flight attempts become interrupted and are retried once.
// The recorded options apply, except where to find things (workers, cache, GPUs) and, when
// overrides.budget.time_s > 0, the wall-time budget of this run. A recorded time budget counts
// afresh from the resume.
CampaignOutcome resume_campaign(Store& store, const Family& family, int64_t campaign_id,
                                const CampaignOptions& overrides);

}  // namespace kf
