#include "store/store_impl.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "store/schema.hpp"
#include "store/sqlite_handle.hpp"

namespace kf {

std::string now_utc() {
  using namespace std::chrono;
  auto now = system_clock::now();
  auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::time_t t = system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[96];  // room for any int the compiler imagines in the fields
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

DeviceKey device_key(const DeviceLimits& d) { return {d.name, d.cc(), d.sm_count, d.driver}; }

DeviceKey imported_device(const std::string& name) { return {name, 0, 0, "imported"}; }

const char* to_string(Provenance p) {
  switch (p) {
    case Provenance::Kforge: return "kforge";
    case Provenance::Imported: return "imported";
    case Provenance::Unmeasured: return "unmeasured";
  }
  return "?";
}

Provenance Store::Impl::parse_provenance(const std::string& text) const {
  if (text == "kforge") return Provenance::Kforge;
  if (text == "imported") return Provenance::Imported;
  fail("unknown evaluation provenance '" + text + "'");
}

namespace {
// Only a command that writes new results may create a database: the others must not leave an
// empty one behind a mistyped --db.
std::unique_ptr<sql::Db> connect(const std::filesystem::path& p, Store::Access access) {
  const auto a = access == Store::Access::ReadOnly ? sql::Access::ReadOnly : sql::Access::ReadWrite;
  const std::string location = p.string();
  if (sql::is_postgres_url(location)) return sql::open_postgres(location, a);
  const bool may_create = access == Store::Access::ReadWrite;
  std::error_code ec;
  if (!may_create && !std::filesystem::exists(p, ec)) throw StoreError(location + ": no such database (check --db)");
  return std::make_unique<sqlite::Db>(location, location, a, may_create);
}
}  // namespace

Store::Impl::Impl(const std::filesystem::path& p, Store::Access access)
    : connection(connect(p, access)), db(*connection) {
  path = db.label();
  if (access == Store::Access::ReadOnly) {
    schema_version = schema::open_read_only(db);
  } else {
    schema::open(db);
    schema_version = schema::current_version();
  }
}

void Store::Impl::fail(const std::string& what) const { throw StoreError(db.label() + ": " + what); }

nlohmann::json Store::Impl::parse_json(const std::string& text, const char* what) const {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail(std::string("stored ") + what + " is not valid JSON (" + e.what() + ")");
  }
}

Assignment Store::Impl::parse_assignment(const std::string& text, const char* what) const {
  auto j = parse_json(text, what);
  try {
    return assignment_from_json(j);
  } catch (const std::exception& e) {
    fail(std::string("stored ") + what + " is malformed (" + e.what() + ")");
  }
}

Status Store::Impl::parse_status(const std::string& text) const {
  try {
    return status_from_string(text);
  } catch (const std::exception&) {
    fail("unknown evaluation status '" + text + "'");
  }
}

// ---- ids ----

std::optional<int64_t> Store::Impl::find_family(const std::string& family) {
  sql::Stmt q(db, "SELECT id FROM families WHERE name = ?");
  q.bind(1, family);
  if (!q.step()) return std::nullopt;
  return q.int64(0);
}

std::optional<int64_t> Store::Impl::find_shape(const std::string& family, const Shape& s) {
  sql::Stmt q(db,
                 "SELECT s.id FROM shapes s JOIN families f ON f.id = s.family_id "
                 "WHERE f.name = ? AND s.key = ?");
  q.bind(1, family).bind(2, to_string(s));
  if (!q.step()) return std::nullopt;
  return q.int64(0);
}

std::optional<int64_t> Store::Impl::find_device(const DeviceKey& d) {
  sql::Stmt q(db,
                 "SELECT id FROM devices WHERE name = ? AND cc = ? AND sm_count = ? AND driver = ?");
  q.bind(1, d.name).bind(2, d.cc).bind(3, d.sm_count).bind(4, d.driver);
  if (!q.step()) return std::nullopt;
  return q.int64(0);
}

int64_t Store::Impl::family_id(const std::string& family) {
  sql::Stmt ins(db, "INSERT INTO families (name) VALUES (?) ON CONFLICT (name) DO NOTHING");
  ins.bind(1, family).run();
  return *find_family(family);
}

namespace {
// Shared by configs and shapes: both are (family, canonical key, json) rows.
int64_t assignment_id(sql::Db& db, const char* table, int64_t family, const Assignment& a) {
  const std::string key = to_string(a);
  std::string t = table;
  sql::Stmt ins(db, "INSERT INTO " + t +
                           " (family_id, key, json) VALUES (?, ?, ?) "
                           "ON CONFLICT (family_id, key) DO NOTHING");
  ins.bind(1, family).bind(2, key).bind(3, to_json(a).dump()).run();
  sql::Stmt q(db, "SELECT id FROM " + t + " WHERE family_id = ? AND key = ?");
  q.bind(1, family).bind(2, key);
  q.step();
  return q.int64(0);
}
}  // namespace

int64_t Store::Impl::config_id(int64_t family, const Config& c) {
  return assignment_id(db, "configs", family, c);
}

int64_t Store::Impl::shape_id(int64_t family, const Shape& s) {
  return assignment_id(db, "shapes", family, s);
}

int64_t Store::Impl::device_id(const DeviceKey& d) {
  sql::Stmt ins(db,
                   "INSERT INTO devices (name, cc, sm_count, driver) VALUES (?, ?, ?, ?) "
                   "ON CONFLICT DO NOTHING");
  ins.bind(1, d.name).bind(2, d.cc).bind(3, d.sm_count).bind(4, d.driver).run();
  return *find_device(d);
}

int64_t Store::Impl::kernel_id(const KernelRecord& k) {
  // Newest wins: (hash, arch) names the same source and options, so a recompile differs
  // only if the toolkit changed, and then the newest numbers describe what runs now.
  sql::Stmt ins(db, R"sql(
    INSERT INTO kernels (variant_hash, arch, ok, registers, smem_static, smem_dynamic,
                         stack_frame, spill_stores, spill_loads, compile_ms, log)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (variant_hash, arch) DO UPDATE SET
      ok = excluded.ok, registers = excluded.registers, smem_static = excluded.smem_static,
      smem_dynamic = excluded.smem_dynamic, stack_frame = excluded.stack_frame,
      spill_stores = excluded.spill_stores, spill_loads = excluded.spill_loads,
      compile_ms = excluded.compile_ms, log = excluded.log)sql");
  ins.bind(1, k.variant_hash).bind(2, k.arch).bind(3, k.ok ? 1 : 0).bind(4, k.registers);
  ins.bind(5, k.smem_static).bind(6, k.smem_dynamic).bind(7, k.stack_frame);
  ins.bind(8, k.spill_stores).bind(9, k.spill_loads).bind(10, k.compile_ms).bind(11, k.log);
  ins.run();
  sql::Stmt q(db, "SELECT id FROM kernels WHERE variant_hash = ? AND arch = ?");
  q.bind(1, k.variant_hash).bind(2, k.arch);
  q.step();
  return q.int64(0);
}

// ---- evaluations ----

int64_t Store::Impl::insert_evaluation(const EvalIds& ids, const EvaluationRecord& e) {
  // A config nobody ran has no outcome to keep; stored, its status would read as a measurement.
  if (e.provenance == Provenance::Unmeasured)
    fail("config " + to_string(e.config) + " was never measured: nothing to store");
  sql::Stmt ins(db, R"sql(
    INSERT INTO evaluations (attempt_id, campaign_id, config_id, shape_id, device_id, kernel_id,
      status, error, max_abs, rel_l2, median_us, p10_us, p90_us, ci_lo_us, ci_hi_us, reps,
      launches_per_rep, plain_median_us, flops, bytes, created_at, timing_method, provenance, power_w, energy_uj)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?))sql");
  ins.bind(1, ids.attempt).bind(2, ids.campaign).bind(3, ids.config).bind(4, ids.shape);
  ins.bind(5, ids.device).bind(6, ids.kernel).bind(7, to_string(e.status)).bind(8, e.error);
  ins.bind(9, e.max_abs).bind(10, e.rel_l2);
  if (e.timing) {
    const TimingStats& t = *e.timing;
    ins.bind(11, t.median_us).bind(12, t.p10_us).bind(13, t.p90_us).bind(14, t.ci_lo_us);
    ins.bind(15, t.ci_hi_us).bind(16, t.reps).bind(17, t.launches_per_rep);
    ins.bind(18, t.plain_median_us).bind(22, t.method);
  } else {  // the timing columns stay NULL, which is how "not timed" reads back
    ins.bind_null(22);  // (PostgreSQL needs every parameter up to the last one bound)
  }
  ins.bind(19, e.flops).bind(20, e.bytes);
  ins.bind(21, e.created_at.empty() ? now_utc() : e.created_at);
  ins.bind(23, to_string(e.provenance));
  if (e.timing && e.timing->power_w > 0) {  // (0: not measured, stored as NULL)
    ins.bind(24, e.timing->power_w).bind(25, e.timing->energy_uj);
  } else {
    ins.bind_null(24).bind_null(25);
  }
  ins.run();
  return db.last_insert_rowid();
}

void Store::Impl::require_campaign(int64_t id) {
  sql::Stmt q(db, "SELECT 1 FROM campaigns WHERE id = ?");
  q.bind(1, id);
  if (!q.step()) fail("no campaign " + std::to_string(id));
}

void Store::Impl::touch_campaign(int64_t campaign_id, const std::string& when) {
  sql::Stmt q(db, "UPDATE campaigns SET updated_at = ? WHERE id = ?");
  q.bind(1, when).bind(2, campaign_id).run();
}

namespace {
// The evaluation columns and joins; timing_col is e.timing_method, or NULL for a file older than schema 4;
// provenance_col is e.provenance, or for a file older than schema 5 the rule its migration applies.
std::string select_evaluations(const char* timing_col, const char* provenance_col, const char* energy_cols) {
  std::string sql = R"sql(
  SELECT e.id, e.campaign_id, f.name, c.json, s.json, d.name, d.cc, d.sm_count, d.driver,
         e.status, e.error, e.max_abs, e.rel_l2,
         e.median_us, e.p10_us, e.p90_us, e.ci_lo_us, e.ci_hi_us, e.reps, e.launches_per_rep,
         e.plain_median_us, e.flops, e.bytes, e.created_at,
         k.variant_hash, k.arch, k.ok, k.registers, k.smem_static, k.smem_dynamic,
         k.stack_frame, k.spill_stores, k.spill_loads, k.compile_ms, k.log, @TIMING_METHOD@, @PROVENANCE@,
         @ENERGY@
  FROM evaluations e
  JOIN configs c ON c.id = e.config_id
  JOIN families f ON f.id = c.family_id
  JOIN shapes s ON s.id = e.shape_id
  JOIN devices d ON d.id = e.device_id
  LEFT JOIN kernels k ON k.id = e.kernel_id
)sql";
  for (const auto& [mark, col] : {std::pair<std::string, const char*>{"@TIMING_METHOD@", timing_col},
                                   {"@PROVENANCE@", provenance_col}, {"@ENERGY@", energy_cols}})
    sql.replace(sql.find(mark), mark.size(), col);
  return sql;
}
}  // namespace

const char* Store::Impl::provenance_of_older_rows() {
  return "CASE WHEN d.cc = 0 AND d.driver = 'imported' THEN 'imported' ELSE 'kforge' END";
}

const std::string& Store::Impl::evaluation_select() const {
  static const std::string v6 = select_evaluations("e.timing_method", "e.provenance", "e.power_w, e.energy_uj");
  static const std::string v5 = select_evaluations("e.timing_method", "e.provenance", "NULL, NULL");
  static const std::string v4 = select_evaluations("e.timing_method", provenance_of_older_rows(), "NULL, NULL");
  static const std::string v3 = select_evaluations("NULL", provenance_of_older_rows(), "NULL, NULL");
  return schema_version >= 6 ? v6 : schema_version >= 5 ? v5 : schema_version >= 4 ? v4 : v3;
}

EvaluationRecord Store::Impl::read_evaluation(const sql::Stmt& q) const {
  EvaluationRecord e;
  e.id = q.int64(0);
  e.campaign_id = q.opt_int64(1).value_or(0);
  e.family = q.text(2);
  e.config = parse_assignment(q.text(3), "config");
  e.shape = parse_assignment(q.text(4), "shape");
  e.device = {q.text(5), q.int32(6), q.int32(7), q.text(8)};
  e.status = parse_status(q.text(9));
  e.error = q.text(10);
  e.max_abs = q.real(11);
  e.rel_l2 = q.real(12);
  if (!q.is_null(13)) {
    TimingStats t;
    t.median_us = q.real(13);
    t.p10_us = q.real(14);
    t.p90_us = q.real(15);
    t.ci_lo_us = q.real(16);
    t.ci_hi_us = q.real(17);
    t.reps = q.int32(18);
    t.launches_per_rep = q.int32(19);
    t.plain_median_us = q.real(20);
    t.method = q.is_null(35) ? 1 : q.int32(35);  // (rows from before schema 4: method 1)
    t.power_w = q.is_null(37) ? 0 : q.real(37);     // (rows from before schema 6, or not measured: 0)
    t.energy_uj = q.is_null(38) ? 0 : q.real(38);
    e.timing = t;
  }
  e.flops = q.real(21);
  e.bytes = q.real(22);
  e.created_at = q.text(23);
  if (!q.is_null(24)) {
    KernelRecord k;
    k.variant_hash = q.text(24);
    k.arch = q.text(25);
    k.ok = q.int64(26) != 0;
    k.registers = q.int32(27);
    k.smem_static = q.int32(28);
    k.smem_dynamic = q.int32(29);
    k.stack_frame = q.int32(30);
    k.spill_stores = q.int32(31);
    k.spill_loads = q.int32(32);
    k.compile_ms = q.real(33);
    k.log = q.text(34);
    e.kernel = k;
  }
  e.provenance = parse_provenance(q.text(36));
  return e;
}

}  // namespace kf
