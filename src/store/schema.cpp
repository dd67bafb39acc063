#include "store/schema.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <regex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "store/sqlite_handle.hpp"
#include "store/store.hpp"
#include "store/store_impl.hpp"

namespace kf::schema {

namespace {

// Version 1: the initial schema. Rationale per table in docs/schema.md.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE kforge_meta (
  key   TEXT PRIMARY KEY NOT NULL,
  value TEXT NOT NULL
);

CREATE TABLE devices (
  id       INTEGER PRIMARY KEY,
  name     TEXT NOT NULL,
  cc       INTEGER NOT NULL,
  sm_count INTEGER NOT NULL,
  driver   TEXT NOT NULL,
  UNIQUE (name, cc, sm_count, driver)
);

CREATE TABLE families (
  id        INTEGER PRIMARY KEY,
  name      TEXT NOT NULL UNIQUE,
  spec_hash TEXT NOT NULL DEFAULT ''
);

CREATE TABLE configs (
  id        INTEGER PRIMARY KEY,
  family_id INTEGER NOT NULL REFERENCES families(id),
  key       TEXT NOT NULL,
  json      TEXT NOT NULL,
  UNIQUE (family_id, key)
);

CREATE TABLE shapes (
  id        INTEGER PRIMARY KEY,
  family_id INTEGER NOT NULL REFERENCES families(id),
  key       TEXT NOT NULL,
  json      TEXT NOT NULL,
  UNIQUE (family_id, key)
);

CREATE TABLE kernels (
  id           INTEGER PRIMARY KEY,
  variant_hash TEXT NOT NULL,
  arch         TEXT NOT NULL,
  ok           INTEGER NOT NULL,
  registers    INTEGER NOT NULL,
  smem_static  INTEGER NOT NULL,
  smem_dynamic INTEGER NOT NULL,
  stack_frame  INTEGER NOT NULL,
  spill_stores INTEGER NOT NULL,
  spill_loads  INTEGER NOT NULL,
  compile_ms   REAL NOT NULL,
  log          TEXT NOT NULL,
  UNIQUE (variant_hash, arch)
);

CREATE TABLE campaigns (
  id           INTEGER PRIMARY KEY,
  family_id    INTEGER NOT NULL REFERENCES families(id),
  strategy     TEXT NOT NULL,
  seed         INTEGER NOT NULL,
  shapes_json  TEXT NOT NULL,
  budget_json  TEXT NOT NULL,
  options_json TEXT NOT NULL,
  status       TEXT NOT NULL,
  device_id    INTEGER REFERENCES devices(id),
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL
);
CREATE INDEX campaigns_family ON campaigns (family_id);

CREATE TABLE attempts (
  id          INTEGER PRIMARY KEY,
  campaign_id INTEGER REFERENCES campaigns(id),
  config_id   INTEGER NOT NULL REFERENCES configs(id),
  shape_id    INTEGER NOT NULL REFERENCES shapes(id),
  device_id   INTEGER NOT NULL REFERENCES devices(id),
  state       TEXT NOT NULL CHECK (state IN ('dispatched', 'done', 'interrupted')),
  started_at  TEXT NOT NULL,
  finished_at TEXT
);
-- close_interrupted: the dispatched attempts of one campaign.
CREATE INDEX attempts_campaign_state ON attempts (campaign_id, state);

CREATE TABLE evaluations (
  id               INTEGER PRIMARY KEY,
  attempt_id       INTEGER UNIQUE REFERENCES attempts(id),
  campaign_id      INTEGER REFERENCES campaigns(id),
  config_id        INTEGER NOT NULL REFERENCES configs(id),
  shape_id         INTEGER NOT NULL REFERENCES shapes(id),
  device_id        INTEGER NOT NULL REFERENCES devices(id),
  kernel_id        INTEGER REFERENCES kernels(id),
  status           TEXT NOT NULL,
  error            TEXT NOT NULL,
  max_abs          REAL NOT NULL,
  rel_l2           REAL NOT NULL,
  median_us        REAL,
  p10_us           REAL,
  p90_us           REAL,
  ci_lo_us         REAL,
  ci_hi_us         REAL,
  reps             INTEGER,
  launches_per_rep INTEGER,
  plain_median_us  REAL,
  flops            REAL NOT NULL,
  bytes            REAL NOT NULL,
  created_at       TEXT NOT NULL
);
-- evaluated_config_keys / interrupted_counts / top with a device: (shape, device, status).
CREATE INDEX evaluations_shape_device ON evaluations (shape_id, device_id, status, config_id);
-- top / best over any device: ok rows of one shape, already in median order.
CREATE INDEX evaluations_shape_status_median ON evaluations (shape_id, status, median_us);
-- status_counts and per-campaign listings.
CREATE INDEX evaluations_campaign_status ON evaluations (campaign_id, status);
-- listings by family go through configs(family_id, key) then here.
CREATE INDEX evaluations_config ON evaluations (config_id);

CREATE TABLE baselines (
  id         INTEGER PRIMARY KEY,
  family_id  INTEGER NOT NULL REFERENCES families(id),
  shape_id   INTEGER NOT NULL REFERENCES shapes(id),
  device_id  INTEGER NOT NULL REFERENCES devices(id),
  backend    TEXT NOT NULL,
  median_us  REAL NOT NULL,
  extra_json TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX baselines_shape_device ON baselines (shape_id, device_id, backend);
)sql";

// Version 2: compute-sanitizer runs of finalists (`search --sanitize`). Keyed by the kernel's
// source hash and arch, not by evaluation: a verdict belongs to the code that was checked.
constexpr const char* kSchemaV2 = R"sql(
CREATE TABLE sanitizer_runs (
  id           INTEGER PRIMARY KEY,
  family_id    INTEGER NOT NULL REFERENCES families(id),
  variant_hash TEXT NOT NULL,
  arch         TEXT NOT NULL,
  shape_id     INTEGER NOT NULL REFERENCES shapes(id),
  device_id    INTEGER NOT NULL REFERENCES devices(id),
  campaign_id  INTEGER REFERENCES campaigns(id),
  tool         TEXT NOT NULL,
  passed       INTEGER NOT NULL,
  errors       INTEGER NOT NULL,
  summary      TEXT NOT NULL,
  created_at   TEXT NOT NULL
);
CREATE INDEX sanitizer_runs_kernel ON sanitizer_runs (family_id, variant_hash);
)sql";

struct Migration {
  int version;                        // the schema version after this step
  const char* sql;                    // run inside the migration's transaction (null: none)
  void (*apply)(sql::Db&) = nullptr;  // then this, in the same transaction (null: none)
};

std::string for_dialect(const char* ddl, sql::Dialect dialect);

bool has_column(sql::Db& db, const std::string& table, const std::string& column) {
  if (db.dialect() == sql::Dialect::Sqlite) {
    sql::Stmt q(db, "SELECT 1 FROM pragma_table_info(?) WHERE name = ?");
    q.bind(1, table).bind(2, column);
    return q.step();
  }
  sql::Stmt q(db, "SELECT 1 FROM information_schema.columns "
                  "WHERE table_schema = current_schema() AND table_name = ? AND column_name = ?");
  q.bind(1, table).bind(2, column);
  return q.step();
}

// ALTER TABLE ... ADD COLUMN, unless the column is there already: a file whose column was added
// but whose version was not bumped (an older build's interrupted step, a copy restored between
// the two, a second process migrating the same file) must migrate, not fail with "duplicate
// column name". decl is in SQLite's types; for_dialect translates it.
void add_column_if_missing(sql::Db& db, const std::string& table, const std::string& column, const std::string& decl) {
  if (has_column(db, table, column)) return;
  const std::string ddl = "ALTER TABLE " + table + " ADD COLUMN " + column + " " + decl;
  db.exec(for_dialect(ddl.c_str(), db.dialect()));
}

// Version 3: a baseline record is stored once (kforge baseline import is idempotent).
// Identical rows imported before are merged first, the oldest kept.
constexpr const char* kSchemaV3 = R"sql(
DELETE FROM baselines WHERE id NOT IN (
  SELECT min(id) FROM baselines
  GROUP BY family_id, shape_id, device_id, backend, median_us, extra_json);
CREATE UNIQUE INDEX baselines_record
  ON baselines (family_id, shape_id, device_id, backend, median_us, extra_json);
)sql";

// Version 4: the timing method of each timed evaluation (kTimingMethod); NULL in older rows reads as 1.
void schema_v4(sql::Db& db) { add_column_if_missing(db, "evaluations", "timing_method", "INTEGER"); }

// Version 5: where each evaluation comes from ('kforge': its status is kforge's own verdict, an ok one the gate's
// pass; 'imported': another tool's measurement, which no gate ran). Rows stored before were imported exactly
// when `import --store` wrote them, on its device key (cc 0, driver 'imported': store.hpp imported_device).
// The backfill sets the same rows again when the step is re-run, so it needs no guard.
void schema_v5(sql::Db& db) {
  add_column_if_missing(db, "evaluations", "provenance", "TEXT NOT NULL DEFAULT 'kforge'");
  db.exec(for_dialect(R"sql(
UPDATE evaluations SET provenance = 'imported'
  WHERE device_id IN (SELECT id FROM devices WHERE cc = 0 AND driver = 'imported');
)sql", db.dialect()));
}

// Version 6: the energy of each timed evaluation (gpu/energy_meter.hpp): mean board power (W) and energy per
// launch (uJ); NULL where it was not measured (every row before it, a machine without NVML).
void schema_v6(sql::Db& db) {
  add_column_if_missing(db, "evaluations", "power_w", "REAL");
  add_column_if_missing(db, "evaluations", "energy_uj", "REAL");
}

// Append only: what a released step does is never changed (guarding it against a re-run is not a
// change), a change is a new step.
constexpr Migration kMigrations[] = {
    {1, kSchemaV1},
    {2, kSchemaV2},
    {3, kSchemaV3},
    {4, nullptr, schema_v4},
    {5, nullptr, schema_v5},
    {6, nullptr, schema_v6},
};

// Waiting this long for another connection's write lock covers any single write (they
// are milliseconds) and a WAL checkpoint, while still reporting a truly stuck writer.
constexpr int kBusyTimeoutMs = 30000;

// The migrations are written in SQLite's types; PostgreSQL gets the same tables with its own:
// 64-bit identity keys (ids and seeds are 64-bit in SQLite) and double precision.
std::string for_dialect(const char* ddl, sql::Dialect dialect) {
  if (dialect == sql::Dialect::Sqlite) return ddl;
  std::string out = std::regex_replace(ddl, std::regex(R"(\bINTEGER PRIMARY KEY\b)"), "BIGSERIAL PRIMARY KEY");
  out = std::regex_replace(out, std::regex(R"(\bINTEGER\b)"), "BIGINT");
  return std::regex_replace(out, std::regex(R"(\bREAL\b)"), "DOUBLE PRECISION");
}

std::optional<std::string> meta(sql::Db& db, const char* key) {
  sql::Stmt q(db, "SELECT value FROM kforge_meta WHERE key = ?");
  q.bind(1, key);
  if (!q.step()) return std::nullopt;
  return q.text(0);
}

void set_meta(sql::Db& db, const char* key, const std::string& value) {
  sql::Stmt q(db, "INSERT INTO kforge_meta (key, value) VALUES (?, ?) "
                     "ON CONFLICT (key) DO UPDATE SET value = excluded.value");
  q.bind(1, key).bind(2, value).run();
}

// Version of an existing kforge database; throws if it is not one or is too new.
int existing_version(sql::Db& db) {
  auto by = meta(db, "created_by");
  auto ver = meta(db, "schema_version");
  if (!by || *by != "kforge" || !ver) {
    throw StoreError(db.label() + ": not a kforge database (kforge_meta has no kforge schema_version)");
  }
  int v = 0;
  try {
    size_t used = 0;
    v = std::stoi(*ver, &used);
    if (used != ver->size() || v < 1) throw std::invalid_argument("");
  } catch (const std::exception&) {
    throw StoreError(db.label() + ": not a kforge database (bad schema_version '" + *ver + "')");
  }
  if (v > current_version()) {
    throw StoreError(db.label() + ": schema version " + std::to_string(v) +
                     " is newer than this kforge supports (" + std::to_string(current_version()) +
                     "); use a newer kforge");
  }
  return v;
}

std::string switch_to_wal(sqlite::Db& db) {
  sql::Stmt wal(db, "PRAGMA journal_mode = WAL");
  return wal.step() ? wal.text(0) : "";
}

// Several connections that open one new file at once all find it in rollback mode and all
// switch it to WAL, which needs the EXCLUSIVE lock: each holds SHARED and waits for the
// others, and SQLite breaks that deadlock by refusing one at once, without the busy handler.
// The refused one retries until the busy timeout; by then the file is WAL and the switch a no-op.
std::string switch_to_wal_retrying(sqlite::Db& db) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (auto pause = std::chrono::milliseconds(1);; pause = std::min(2 * pause, std::chrono::milliseconds(100))) {
    try {
      return switch_to_wal(db);
    } catch (const StoreError&) {
      if (!db.last_failure_was_lock() || std::chrono::steady_clock::now() >= deadline) throw;
    }
    std::this_thread::sleep_for(pause);
  }
}

void apply_pragmas(sqlite::Db& db) {
  // WAL: readers (kforge best/report) never block the campaign's writer nor the reverse.
  std::string mode = switch_to_wal_retrying(db);
  if (mode != "wal") {
    spdlog::warn("{}: WAL journal unavailable (journal_mode is '{}'); readers may block the writer",
                 db.label(), mode);
  }
  // FULL: see docs/schema.md, "Durability". One fsync per evaluation is negligible next to
  // compiling and timing a kernel, and it also survives a node that hangs and reboots.
  db.exec("PRAGMA synchronous = FULL");
  db.exec("PRAGMA foreign_keys = ON");
}

void migrate(sql::Db& db) {
  sql::Transaction tx(db);
  // PostgreSQL: processes that open a new database at once create its tables one after the
  // other (SQLite's BEGIN IMMEDIATE already does that).
  if (db.dialect() == sql::Dialect::Postgres) sql::Stmt(db, "SELECT pg_advisory_xact_lock(7363001)").run();
  // Re-read under the write lock: another process may have created or migrated the file
  // between our first look and now.
  int from = 0;
  auto tables = db.tables();
  if (tables.count("kforge_meta")) {
    from = existing_version(db);
  } else if (!tables.empty()) {
    throw StoreError(db.label() + ": not a kforge database (no kforge_meta table)");
  }
  if (from == current_version()) return;  // rolled back: nothing was written
  for (const auto& m : kMigrations) {
    if (m.version <= from) continue;
    if (m.sql) db.exec(for_dialect(m.sql, db.dialect()));
    if (m.apply) m.apply(db);
    if (m.version == 1) {
      set_meta(db, "created_by", "kforge");
      set_meta(db, "created_at", now_utc());
    }
    set_meta(db, "schema_version", std::to_string(m.version));
  }
  set_meta(db, "kforge_version", KFORGE_VERSION);
  tx.commit();
}

}  // namespace

int current_version() { return kMigrations[std::size(kMigrations) - 1].version; }

namespace {
// 0 for a new (empty) file; throws for a foreign or too new one.
int classify(sql::Db& db) {
  auto tables = db.tables();
  if (tables.count("kforge_meta")) return existing_version(db);
  if (!tables.empty()) throw StoreError(db.label() + ": not a kforge database (no kforge_meta table)");
  return 0;
}

void quick_check(sqlite::Db& db) {
  std::string problem;
  try {
    sql::Stmt q(db, "PRAGMA quick_check(1)");
    problem = q.step() ? q.text(0) : "no answer";
  } catch (const StoreError& e) {
    problem = e.what();
    const std::string prefix = db.label() + ": ";
    if (problem.rfind(prefix, 0) == 0) problem.erase(0, prefix.size());
  }
  if (problem == "ok") return;
  if (auto nl = problem.find('\n'); nl != std::string::npos) problem.resize(nl);
  throw StoreError(db.label() + ": database is corrupt (quick_check: " + problem +
                   "); restore a copy or use another --db");
}
}  // namespace

void open(sql::Db& db) {
  if (auto* file = dynamic_cast<sqlite::Db*>(&db)) {
    file->busy_timeout(kBusyTimeoutMs);
    // Classify before any pragma: journal_mode = WAL rewrites the header, and a foreign file
    // must be left exactly as it was.
    const int version = classify(db);
    if (version > 0) quick_check(*file);
    apply_pragmas(*file);
    if (version < current_version()) migrate(db);
    return;
  }
  if (classify(db) < current_version()) migrate(db);
}

int open_read_only(sql::Db& db) {
  if (auto* file = dynamic_cast<sqlite::Db*>(&db)) file->busy_timeout(kBusyTimeoutMs);
  const int version = classify(db);
  if (version == 0) throw StoreError(db.label() + ": not a kforge database (no tables)");
  if (db.dialect() == sql::Dialect::Sqlite) db.exec("PRAGMA query_only = ON");
  return version;
}

}  // namespace kf::schema
