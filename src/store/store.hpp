// The results database: a SQLite file (WAL; the default) or a PostgreSQL database (`--db
// postgresql://...`, see store/sql.hpp). Schema and its rationale: docs/schema.md.
// Every write is its own committed transaction, so a killed process loses at most what
// was in flight.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/vocabulary.hpp"

namespace kf {

// One line, names the file: "results.db: not a kforge database (no kforge_meta table)".
struct StoreError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A shared database's connection was lost during a write, which was not committed (it may be
// sent again: the next statement re-opens the connection, or fails with StoreError for good).
struct ConnectionLost : StoreError {
  using StoreError::StoreError;
};

struct DeviceKey {
  std::string name;
  int cc = 0;  // 90
  int sm_count = 0;
  std::string driver;
};
DeviceKey device_key(const DeviceLimits& d);
// The device key of records another tool measured (`kforge import --store`): cc 0 and driver "imported", so
// no measured device is ever mistaken for it.
DeviceKey imported_device(const std::string& name);

// Where an evaluation's outcome comes from, and so what it vouches for.
//  Kforge: kforge's worker ran the record (or its compiler/constraints refused it): an ok status means
//          kforge's gate passed the kernel on the record's device.
//  Imported: another tool's measurement (`kforge import --store`): no gate ran. Data for replay and
//          seeding only: never `best`, never exported, never a finalist.
//  Unmeasured: a config nobody ran (`export --config --ungated`); never stored.
enum class Provenance { Kforge, Imported, Unmeasured };
const char* to_string(Provenance p);  // "kforge" | "imported" | "unmeasured"

struct CampaignRecord {
  int64_t id = 0;
  std::string family;
  std::string strategy;
  uint64_t seed = 0;
  std::vector<Shape> shapes;
  nlohmann::json budget;   // {"evals":N,"time_s":T,"plateau":P}
  nlohmann::json options;  // everything needed to resume (arch, timing, ...)
  std::string status;      // "running" | "done" | "stopped"
  std::optional<DeviceKey> device;
  std::string created_at, updated_at;
};

struct KernelRecord {
  std::string variant_hash;
  std::string arch;
  bool ok = false;
  int registers = 0, smem_static = 0, smem_dynamic = 0, stack_frame = 0;
  int spill_stores = 0, spill_loads = 0;
  double compile_ms = 0;
  std::string log;
};

struct EvaluationRecord {
  int64_t id = 0;
  int64_t campaign_id = 0;  // 0: none (e.g. a replayed or imported result)
  std::string family;
  Config config;
  Shape shape;
  DeviceKey device;
  Status status = Status::Ok;
  std::string error;
  double max_abs = 0, rel_l2 = 0;
  std::optional<TimingStats> timing;
  std::optional<KernelRecord> kernel;
  double flops = 0, bytes = 0;  // from the family's cost expressions, for TFLOP/s and GB/s
  std::string created_at;
  Provenance provenance = Provenance::Kforge;
  // kforge's gate passed this kernel on `device`.
  bool gate_passed() const { return provenance == Provenance::Kforge && status == Status::Ok; }
};

// Which records a ranking query reads: kforge's own (its gate passed them), or those and imported ones (seeding).
enum class RecordsFrom { Kforge, KforgeAndImported };

// One compute-sanitizer run of a kernel (a finalist's gate under memcheck or racecheck).
struct SanitizerRecord {
  std::string family;
  std::string variant_hash, arch;  // the kernel checked
  Shape shape;                     // the campaign shape it was gated on
  DeviceKey device;
  int64_t campaign_id = 0;         // 0: none
  std::string tool;                // "memcheck" | "racecheck"
  bool passed = false;             // no error reported and the gate passed
  int64_t errors = 0;              // errors (racecheck: hazards) the tool reported
  std::string summary;             // one line: the tool's summary, or why the run failed
  std::string created_at;
};

struct BaselineRecord {
  std::string family;
  Shape shape;
  DeviceKey device;
  std::string backend;  // "torch.flash", "torch.cudnn", "cublas", ...
  double median_us = 0;
  nlohmann::json extra;
  std::string created_at;
};

// Safe to share between threads (calls are serialised) and to open from several processes
// at once: readers see committed data while a campaign writes.
class Store {
 public:
  // ReadWrite: opens or creates the database (checks it with quick_check, applies
  // migrations). ReadOnly (show, best, export, replay, ...): opens an existing database
  // without writing to it, also when the file or its folder is read-only; a path that does
  // not exist is an error, not a new empty database. ReadWriteExisting (resume, refresh): like
  // ReadWrite, but for a database that exists already (a missing file is an error, as for
  // ReadOnly). Throws StoreError if the file is missing, not a kforge database or corrupt, with a
  // one-line message naming the file.
  enum class Access { ReadWrite, ReadOnly, ReadWriteExisting };
  // A location that starts with postgresql:// or postgres:// is a PostgreSQL database (a
  // ReadOnly session there runs read-only transactions); anything else is a file.
  explicit Store(const std::filesystem::path& path, Access access = Access::ReadWrite);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;
  // The file, or the database URL with its password masked.
  const std::filesystem::path& path() const;

  // The spec hash a family's results were produced with (newest wins); "" if never set,
  // nullopt for a family the database has not seen.
  void set_family_spec_hash(const std::string& family, const std::string& spec_hash);
  std::optional<std::string> family_spec_hash(const std::string& family) const;

  int64_t create_campaign(const CampaignRecord& c);
  std::optional<CampaignRecord> campaign(int64_t id) const;
  std::vector<CampaignRecord> campaigns() const;
  void set_campaign_status(int64_t id, const std::string& status);
  void set_campaign_device(int64_t id, const DeviceKey& d);
  // Replaces the campaign's options (a campaign records its finalists' side-by-side ranking there).
  void set_campaign_options(int64_t id, const nlohmann::json& options);

  // Written (and committed) before a request is dispatched to a worker.
  int64_t begin_attempt(int64_t campaign_id, const std::string& family, const Config& c,
                        const Shape& s, const DeviceKey& d);
  // Records the evaluation and closes the attempt, in one transaction. The attempt decides
  // campaign, config, shape and device; a record that names a family must match them.
  // Throws StoreError for an unknown attempt or one already done or interrupted.
  int64_t finish_attempt(int64_t attempt_id, const EvaluationRecord& e);
  // Records an evaluation that needs no attempt (invalid / compile_error before dispatch, an import).
  // Throws StoreError for an Unmeasured record: only a measurement is stored.
  int64_t add_evaluation(const EvaluationRecord& e);
  // campaign_id 0 (here and in begin_attempt) means "no campaign".
  // Attempts of a campaign that never finished become evaluations with status interrupted;
  // returns them (family, config, shape) so the campaign can retry each at most once.
  std::vector<EvaluationRecord> close_interrupted(int64_t campaign_id);

  std::vector<EvaluationRecord> evaluations(const std::string& family,
                                            const std::optional<Shape>& shape = std::nullopt,
                                            const std::optional<DeviceKey>& device = std::nullopt,
                                            std::optional<int64_t> campaign_id = std::nullopt) const;
  // Fastest ok evaluation per config of the newest timing method it has, the configs of the newest method
  // first, each method's ascending by median; at most k. device nullopt: any. Only records kforge's gate
  // passed unless `from` lets imported ones compete too (seeding: they are data, not winners).
  std::vector<EvaluationRecord> top(const std::string& family, const Shape& shape,
                                    const std::optional<DeviceKey>& device, size_t k,
                                    RecordsFrom from = RecordsFrom::Kforge) const;
  // top's first: never an imported record.
  std::optional<EvaluationRecord> best(const std::string& family, const Shape& shape,
                                       const std::optional<DeviceKey>& device) const;
  // Canonical config keys already evaluated (any final status except interrupted) for a
  // family, shape and device: what a campaign must not re-run.
  std::set<std::string> evaluated_config_keys(const std::string& family, const Shape& shape,
                                              const DeviceKey& device) const;
  // Number of interrupted evaluations per config key (to retry at most once).
  std::map<std::string, int> interrupted_counts(const std::string& family, const Shape& shape,
                                                const DeviceKey& device) const;
  // Shapes known for a family (from campaigns, attempts, evaluations, baselines), first seen first.
  std::vector<Shape> shapes(const std::string& family) const;
  std::vector<DeviceKey> devices() const;
  // Status name -> count, for one campaign.
  std::map<std::string, int> status_counts(int64_t campaign_id) const;

  void add_sanitizer_run(const SanitizerRecord& r);
  // Every run of a family's kernel (any shape, device, tool), newest first.
  std::vector<SanitizerRecord> sanitizer_runs(const std::string& family, const std::string& variant_hash) const;

  // Stores a baseline unless the same record (family, shape, device, backend, time, extra) is
  // already stored; returns whether it was new.
  bool add_baseline(const BaselineRecord& b);
  // All or nothing, in one transaction; returns how many were new.
  size_t add_baselines(const std::vector<BaselineRecord>& records);
  // Every measurement kept; ordered by backend, newest first within a backend.
  std::vector<BaselineRecord> baselines(const std::string& family, const Shape& shape,
                                        const std::optional<DeviceKey>& device) const;

  // The connection and its lock, for the store layer's own extensions (store_copy.cpp, the
  // distributed work queue in src/distributed/): include store/store_impl.hpp to use it.
  struct Impl;
  Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// One row per backend and device: the median of its stored measurements (one import is one
// process; a single noisy run should not set the ratio `kforge best` shows), dated by the newest.
std::vector<BaselineRecord> typical_baselines(const std::vector<BaselineRecord>& all);


}  // namespace kf
