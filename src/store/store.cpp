// The Store's write side. Each public method is one IMMEDIATE transaction, committed before
// it returns: a killed process loses only the evaluations it had not yet handed over.
#include <string>

#include "store/store_impl.hpp"

namespace kf {

using Lock = std::lock_guard<std::mutex>;

Store::Store(const std::filesystem::path& path, Access access)
    : impl_(std::make_unique<Impl>(path, access)) {}
Store::~Store() = default;
const std::filesystem::path& Store::path() const { return impl_->path; }

void Store::set_family_spec_hash(const std::string& family, const std::string& spec_hash) {
  Lock lock(impl_->mu);
  sql::Transaction tx(impl_->db);
  int64_t fam = impl_->family_id(family);
  sql::Stmt q(impl_->db, "UPDATE families SET spec_hash = ? WHERE id = ?");
  q.bind(1, spec_hash).bind(2, fam).run();
  tx.commit();
}

// ---- campaigns ----

int64_t Store::create_campaign(const CampaignRecord& c) {
  Lock lock(impl_->mu);
  auto& db = impl_->db;
  sql::Transaction tx(db);
  int64_t fam = impl_->family_id(c.family);
  nlohmann::json shapes = nlohmann::json::array();
  for (const auto& s : c.shapes) {
    shapes.push_back(to_json(s));
    impl_->shape_id(fam, s);  // so shapes(family) lists a campaign's shapes from the start
  }
  std::optional<int64_t> dev;
  if (c.device) dev = impl_->device_id(*c.device);
  const std::string created = c.created_at.empty() ? now_utc() : c.created_at;
  const std::string updated = c.updated_at.empty() ? created : c.updated_at;
  sql::Stmt ins(db, R"sql(
    INSERT INTO campaigns (family_id, strategy, seed, shapes_json, budget_json, options_json,
                           status, device_id, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?))sql");
  // The seed is stored as its 64-bit pattern: SQLite integers are signed.
  ins.bind(1, fam).bind(2, c.strategy).bind(3, static_cast<int64_t>(c.seed));
  ins.bind(4, shapes.dump()).bind(5, c.budget.dump()).bind(6, c.options.dump());
  ins.bind(7, c.status.empty() ? std::string("running") : c.status).bind(8, dev);
  ins.bind(9, created).bind(10, updated);
  ins.run();
  int64_t id = db.last_insert_rowid();
  tx.commit();
  return id;
}

void Store::set_campaign_status(int64_t id, const std::string& status) {
  Lock lock(impl_->mu);
  sql::Transaction tx(impl_->db);
  sql::Stmt q(impl_->db, "UPDATE campaigns SET status = ?, updated_at = ? WHERE id = ?");
  q.bind(1, status).bind(2, now_utc()).bind(3, id).run();
  if (impl_->db.changes() == 0) impl_->fail("no campaign " + std::to_string(id));
  tx.commit();
}

void Store::set_campaign_device(int64_t id, const DeviceKey& d) {
  Lock lock(impl_->mu);
  sql::Transaction tx(impl_->db);
  int64_t dev = impl_->device_id(d);
  sql::Stmt q(impl_->db, "UPDATE campaigns SET device_id = ?, updated_at = ? WHERE id = ?");
  q.bind(1, dev).bind(2, now_utc()).bind(3, id).run();
  if (impl_->db.changes() == 0) impl_->fail("no campaign " + std::to_string(id));
  tx.commit();
}

void Store::set_campaign_options(int64_t id, const nlohmann::json& options) {
  Lock lock(impl_->mu);
  sql::Transaction tx(impl_->db);
  sql::Stmt q(impl_->db, "UPDATE campaigns SET options_json = ?, updated_at = ? WHERE id = ?");
  q.bind(1, options.dump()).bind(2, now_utc()).bind(3, id).run();
  if (impl_->db.changes() == 0) impl_->fail("no campaign " + std::to_string(id));
  tx.commit();
}

// ---- attempts and evaluations ----

namespace {
std::optional<int64_t> campaign_or_null(int64_t id) {
  return id == 0 ? std::nullopt : std::optional<int64_t>(id);
}
}  // namespace

int64_t Store::begin_attempt(int64_t campaign_id, const std::string& family, const Config& c,
                             const Shape& s, const DeviceKey& d) {
  Lock lock(impl_->mu);
  sql::Transaction tx(impl_->db);
  const int64_t id = impl_->begin_attempt(campaign_id, family, c, s, d);
  tx.commit();
  return id;
}

int64_t Store::Impl::begin_attempt(int64_t campaign_id, const std::string& family, const Config& c,
                                   const Shape& s, const DeviceKey& d) {
  if (campaign_id != 0) require_campaign(campaign_id);
  int64_t fam = family_id(family);
  sql::Stmt ins(db, R"sql(
    INSERT INTO attempts (campaign_id, config_id, shape_id, device_id, state, started_at)
    VALUES (?, ?, ?, ?, 'dispatched', ?))sql");
  ins.bind(1, campaign_or_null(campaign_id)).bind(2, config_id(fam, c));
  ins.bind(3, shape_id(fam, s)).bind(4, device_id(d)).bind(5, now_utc());
  ins.run();
  return db.last_insert_rowid();
}

int64_t Store::finish_attempt(int64_t attempt_id, const EvaluationRecord& e) {
  Lock lock(impl_->mu);
  sql::Transaction tx(impl_->db);
  const int64_t id = impl_->finish_attempt(attempt_id, e);
  tx.commit();
  return id;
}

int64_t Store::Impl::finish_attempt(int64_t attempt_id, const EvaluationRecord& e) {
  sql::Stmt a(db, R"sql(
    SELECT a.campaign_id, a.config_id, a.shape_id, a.device_id, a.state,
           f.name, c.key, s.key, d.name, d.cc, d.sm_count, d.driver
    FROM attempts a
    JOIN configs c ON c.id = a.config_id
    JOIN families f ON f.id = c.family_id
    JOIN shapes s ON s.id = a.shape_id
    JOIN devices d ON d.id = a.device_id
    WHERE a.id = ?)sql");
  a.bind(1, attempt_id);
  const std::string name = "attempt " + std::to_string(attempt_id);
  if (!a.step()) fail("no " + name);
  if (a.text(4) != "dispatched") fail(name + " is already " + a.text(4));
  // The attempt says what was dispatched; a record that names something else is a bug in
  // the caller, and storing it would attach a result to the wrong config.
  if (!e.family.empty()) {
    DeviceKey ad{a.text(8), a.int32(9), a.int32(10), a.text(11)};
    bool same = e.family == a.text(5) && to_string(e.config) == a.text(6) &&
                to_string(e.shape) == a.text(7) && e.device.name == ad.name &&
                e.device.cc == ad.cc && e.device.sm_count == ad.sm_count &&
                e.device.driver == ad.driver;
    if (!same) fail("evaluation does not match " + name + " (family, config, shape or device)");
  }
  EvalIds ids;
  ids.attempt = attempt_id;
  ids.campaign = a.opt_int64(0);
  if (e.campaign_id != 0 && e.campaign_id != ids.campaign.value_or(0)) {
    fail("evaluation names campaign " + std::to_string(e.campaign_id) + " but " + name +
                " belongs to another");
  }
  ids.config = a.int64(1);
  ids.shape = a.int64(2);
  ids.device = a.int64(3);
  if (e.kernel) ids.kernel = kernel_id(*e.kernel);
  int64_t id = insert_evaluation(ids, e);
  const std::string now = now_utc();
  sql::Stmt done(db, "UPDATE attempts SET state = 'done', finished_at = ? WHERE id = ?");
  done.bind(1, now).bind(2, attempt_id).run();
  if (ids.campaign) touch_campaign(*ids.campaign, now);
  return id;
}

int64_t Store::add_evaluation(const EvaluationRecord& e) {
  Lock lock(impl_->mu);
  sql::Transaction tx(impl_->db);
  const int64_t id = impl_->add_evaluation(e);
  tx.commit();
  return id;
}

int64_t Store::Impl::add_evaluation(const EvaluationRecord& e) {
  EvalIds ids;
  ids.campaign = campaign_or_null(e.campaign_id);
  if (ids.campaign) require_campaign(*ids.campaign);
  int64_t fam = family_id(e.family);
  ids.config = config_id(fam, e.config);
  ids.shape = shape_id(fam, e.shape);
  ids.device = device_id(e.device);
  if (e.kernel) ids.kernel = kernel_id(*e.kernel);
  int64_t id = insert_evaluation(ids, e);
  if (ids.campaign) touch_campaign(*ids.campaign, now_utc());
  return id;
}

std::vector<EvaluationRecord> Store::close_interrupted(int64_t campaign_id) {
  Lock lock(impl_->mu);
  auto& db = impl_->db;
  sql::Transaction tx(db);
  const std::string now = now_utc();
  std::vector<std::pair<int64_t, Impl::EvalIds>> open;
  {
    sql::Stmt q(db, std::string("SELECT id, campaign_id, config_id, shape_id, device_id FROM attempts WHERE ") +
                        (campaign_id == 0 ? "campaign_id IS NULL" : "campaign_id = ?") +
                        " AND state = 'dispatched' ORDER BY id");
    if (campaign_id != 0) q.bind(1, campaign_id);
    while (q.step()) {
      Impl::EvalIds ids;
      ids.attempt = q.int64(0);
      ids.campaign = q.opt_int64(1);
      ids.config = q.int64(2);
      ids.shape = q.int64(3);
      ids.device = q.int64(4);
      open.emplace_back(q.int64(0), ids);
    }
  }
  std::vector<EvaluationRecord> out;
  for (const auto& [attempt, ids] : open) out.push_back(impl_->interrupt_attempt(ids, now));
  if (!open.empty() && campaign_id != 0) impl_->touch_campaign(campaign_id, now);
  tx.commit();
  return out;
}

EvaluationRecord Store::Impl::interrupt_attempt(const EvalIds& ids, const std::string& now) {
  EvaluationRecord marker;
  marker.status = Status::Interrupted;
  marker.error = "interrupted: the process stopped before this evaluation finished";
  marker.created_at = now;
  const int64_t eval = insert_evaluation(ids, marker);
  sql::Stmt up(db, "UPDATE attempts SET state = 'interrupted', finished_at = ? WHERE id = ?");
  up.bind(1, now).bind(2, *ids.attempt).run();
  sql::Stmt r(db, evaluation_select() + " WHERE e.id = ?");
  r.bind(1, eval);
  r.step();
  return read_evaluation(r);
}

// ---- baselines ----

bool Store::add_baseline(const BaselineRecord& b) { return add_baselines({b}) == 1; }

size_t Store::add_baselines(const std::vector<BaselineRecord>& records) {
  Lock lock(impl_->mu);
  auto& db = impl_->db;
  sql::Transaction tx(db);
  size_t added = 0;
  for (const BaselineRecord& b : records) {
    int64_t fam = impl_->family_id(b.family);
    // The unique index baselines_record makes a repeated record a no-op (schema v2).
    sql::Stmt ins(db, R"sql(
      INSERT INTO baselines (family_id, shape_id, device_id, backend, median_us, extra_json, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING)sql");
    ins.bind(1, fam).bind(2, impl_->shape_id(fam, b.shape)).bind(3, impl_->device_id(b.device));
    ins.bind(4, b.backend).bind(5, b.median_us).bind(6, b.extra.dump());
    ins.bind(7, b.created_at.empty() ? now_utc() : b.created_at);
    ins.run();
    added += db.changes() > 0;
  }
  tx.commit();
  return added;
}

}  // namespace kf
