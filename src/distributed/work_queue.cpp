#include "distributed/work_queue.hpp"

#include "distributed/queue_schema.hpp"
#include "eval/protocol.hpp"
#include "store/store_impl.hpp"

namespace kf {

namespace {

using Lock = std::lock_guard<std::mutex>;

// An item claimed this many times had its lease expire on every claimer but the last: given up.
constexpr int64_t kMaxClaims = 3;

}  // namespace

std::string device_text(const DeviceKey& d) {
  return d.name + "|" + std::to_string(d.cc) + "|" + std::to_string(d.sm_count) + "|" + d.driver;
}

WorkQueue::WorkQueue(Store& store) : store_(store) {
  auto& impl = store.impl();
  Lock lock(impl.mu);
  if (impl.db.dialect() != sql::Dialect::Postgres)
    throw StoreError(impl.db.label() +
                     ": distributed campaigns need a shared PostgreSQL database (--db postgresql://...)");
  sql::Transaction tx(impl.db);
  sql::Stmt(impl.db, "SELECT pg_advisory_xact_lock(7363002)").run();  // several agents start at once
  impl.db.exec(kQueueSchema);
  tx.commit();
}

// ---- coordinator ----

void WorkQueue::open_campaign(int64_t campaign_id, const std::string& family, const nlohmann::json& options) {
  auto& impl = store_.impl();
  Lock lock(impl.mu);
  sql::Transaction tx(impl.db);
  sql::Stmt q(impl.db, "INSERT INTO dist_campaigns (campaign_id, family, options_json, state) VALUES (?, ?, ?, 'running') "
                       "ON CONFLICT (campaign_id) DO UPDATE SET state = 'running', heartbeat = now()");
  q.bind(1, campaign_id).bind(2, family).bind(3, options.dump()).run();
  tx.commit();
}

std::optional<DeviceLimits> WorkQueue::campaign_device(int64_t campaign_id) {
  auto& impl = store_.impl();
  Lock lock(impl.mu);
  sql::Stmt q(impl.db, "SELECT device_json FROM dist_campaigns WHERE campaign_id = ?");
  q.bind(1, campaign_id);
  if (!q.step() || q.is_null(0)) return std::nullopt;
  return device_limits_from_json(impl.parse_json(q.text(0), "campaign device"));
}

void WorkQueue::set_campaign_device(int64_t campaign_id, const DeviceLimits& d) {
  auto& impl = store_.impl();
  Lock lock(impl.mu);
  sql::Transaction tx(impl.db);
  sql::Stmt q(impl.db, "UPDATE dist_campaigns SET device_json = ? WHERE campaign_id = ?");
  q.bind(1, to_json(d).dump()).bind(2, campaign_id).run();
  tx.commit();
}

std::optional<DeviceLimits> WorkQueue::live_agent_device(double stale_s) {
  auto& impl = store_.impl();
  Lock lock(impl.mu);
  sql::Stmt q(impl.db, "SELECT device_json FROM dist_agents WHERE state = 'serving' AND "
                       "heartbeat > now() - make_interval(secs => CAST(? AS DOUBLE PRECISION)) "
                       "ORDER BY started_at LIMIT 1");
  q.bind(1, stale_s);
  if (!q.step()) return std::nullopt;
  return device_limits_from_json(impl.parse_json(q.text(0), "agent device"));
}

namespace {

// `aggregate` (an SQL aggregate over dist_agents) over the agents serving with a heartbeat
// newer than stale_s seconds.
size_t over_live_agents(Store::Impl& impl, const char* aggregate, double stale_s) {
  Lock lock(impl.mu);
  sql::Stmt q(impl.db, std::string("SELECT ") + aggregate +
                           " FROM dist_agents WHERE state = 'serving' AND "
                           "heartbeat > now() - make_interval(secs => CAST(? AS DOUBLE PRECISION))");
  q.bind(1, stale_s);
  return q.step() ? static_cast<size_t>(q.int64(0)) : 0;
}

}  // namespace

size_t WorkQueue::live_agents(double stale_s) { return over_live_agents(store_.impl(), "count(*)", stale_s); }

size_t WorkQueue::live_gpus(double stale_s) { return over_live_agents(store_.impl(), "COALESCE(SUM(gpus), 0)", stale_s); }

int64_t WorkQueue::publish(int64_t campaign_id, const std::string& family, const Shape& s, const Config& c,
                           const std::string& variant_hash, const DeviceKey& d) {
  auto& impl = store_.impl();
  Lock lock(impl.mu);
  sql::Transaction tx(impl.db);
  sql::Stmt q(impl.db, R"sql(
    INSERT INTO dist_work (campaign_id, family, shape_key, shape_json, config_json, variant_hash, device_key)
    VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id)sql");
  q.bind(1, campaign_id).bind(2, family).bind(3, to_string(s)).bind(4, to_json(s).dump());
  q.bind(5, to_json(c).dump()).bind(6, variant_hash).bind(7, device_text(d));
  q.step();
  const int64_t id = q.int64(0);
  tx.commit();
  return id;
}

std::vector<WorkResult> WorkQueue::take_finished(int64_t campaign_id, const Shape& s) {
  auto& impl = store_.impl();
  Lock lock(impl.mu);
  sql::Transaction tx(impl.db);
  std::vector<WorkResult> out;
  std::vector<int64_t> evaluations;
  {
    sql::Stmt q(impl.db, R"sql(
      UPDATE dist_work SET delivered = TRUE
      WHERE campaign_id = ? AND shape_key = ? AND state IN ('done', 'abandoned') AND NOT delivered
      RETURNING id, state, evaluation_id)sql");
    q.bind(1, campaign_id).bind(2, to_string(s));
    while (q.step()) {
      WorkResult r;
      r.item = q.int64(0);
      r.abandoned = q.text(1) == "abandoned";
      out.push_back(r);
      evaluations.push_back(q.is_null(2) ? 0 : q.int64(2));
    }
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (!evaluations[i]) continue;
    sql::Stmt r(impl.db, impl.evaluation_select() + " WHERE e.id = ?");
    r.bind(1, evaluations[i]);
    if (r.step()) out[i].evaluation = impl.read_evaluation(r);
  }
  tx.commit();
  return out;
}

void WorkQueue::heartbeat_campaign(int64_t campaign_id) {
  auto& impl = store_.impl();
  Lock lock(impl.mu);
  sql::Transaction tx(impl.db);
  sql::Stmt(impl.db, "UPDATE dist_campaigns SET heartbeat = now() WHERE campaign_id = ?").bind(1, campaign_id).run();
  tx.commit();
}

void WorkQueue::close_campaign(int64_t campaign_id, const std::string& state) {
  auto& impl = store_.impl();
  Lock lock(impl.mu);
  sql::Transaction tx(impl.db);
  sql::Stmt(impl.db, "UPDATE dist_campaigns SET state = ? WHERE campaign_id = ?").bind(1, state).bind(2, campaign_id).run();
  sql::Stmt(impl.db, "UPDATE dist_work SET state = 'withdrawn', finished_at = now() "
                     "WHERE campaign_id = ? AND state = 'pending'")
      .bind(1, campaign_id)
      .run();
  tx.commit();
}

// ---- agent ----

void WorkQueue::register_agent(const std::string& agent, const DeviceLimits& d, size_t gpus) {
  auto& impl = store_.impl();
  Lock lock(impl.mu);
  sql::Transaction tx(impl.db);
  sql::Stmt q(impl.db, "INSERT INTO dist_agents (id, device_json, device_key, gpus, state) VALUES (?, ?, ?, ?, 'serving')");
  q.bind(1, agent).bind(2, to_json(d).dump()).bind(3, device_text(device_key(d))).bind(4, static_cast<int64_t>(gpus));
  q.run();
  tx.commit();
}

namespace {

// An item this agent just leased, before its previous claimer's attempt is settled.
struct ClaimedRow {
  WorkItem item;
  int64_t claims = 0;
  std::optional<int64_t> old_attempt;  // the previous claimer's, if it left one open
  std::string options;                 // the campaign's, as stored
};

// Leases up to n claimable items for device d: pending ones, and leased ones whose lease expired.
std::vector<ClaimedRow> lease_items(Store::Impl& impl, const std::string& agent, const DeviceKey& d, size_t n,
                                    double lease_s, int64_t campaign_id) {
  // SKIP LOCKED: agents claiming at once each get other rows instead of waiting for each other.
  std::string sql = R"sql(
      UPDATE dist_work w SET state = 'leased', claims = w.claims + 1, lease_agent = ?,
        lease_token = CAST(? AS TEXT) || ':' || CAST(w.claims + 1 AS TEXT),
        lease_expires = now() + make_interval(secs => CAST(? AS DOUBLE PRECISION))
      FROM dist_campaigns c
      WHERE c.campaign_id = w.campaign_id AND w.id IN (
        SELECT id FROM dist_work
        WHERE device_key = ? AND (state = 'pending' OR (state = 'leased' AND lease_expires < now()))
          AND campaign_id IN (SELECT campaign_id FROM dist_campaigns WHERE state = 'running'))sql";
  if (campaign_id) sql += " AND campaign_id = ?";
  sql += R"sql(
        ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED)
      RETURNING w.id, w.campaign_id, w.family, w.shape_json, w.config_json, w.variant_hash, w.lease_token,
                w.claims, w.attempt_id, c.options_json)sql";
  sql::Stmt q(impl.db, sql);
  q.bind(1, agent);
  q.bind(2, agent);
  q.bind(3, lease_s);
  q.bind(4, device_text(d));
  if (campaign_id) q.bind(5, campaign_id);
  q.bind(campaign_id ? 6 : 5, static_cast<int64_t>(n));
  std::vector<ClaimedRow> out;
  while (q.step()) {
    ClaimedRow c;
    c.item.id = q.int64(0);
    c.item.campaign_id = q.int64(1);
    c.item.family = q.text(2);
    c.item.shape = impl.parse_assignment(q.text(3), "work item shape");
    c.item.config = impl.parse_assignment(q.text(4), "work item config");
    c.item.variant_hash = q.text(5);
    c.item.lease_token = q.text(6);
    c.claims = q.int64(7);
    c.old_attempt = q.opt_int64(8);
    c.options = q.text(9);
    out.push_back(std::move(c));
  }
  return out;
}

// The previous claimer's lease expired: its attempt ends as interrupted, like a killed local
// campaign's, and the item no longer points at it.
void close_expired_attempt(Store::Impl& impl, int64_t attempt_id, int64_t item_id, const std::string& now) {
  sql::Stmt a(impl.db, "SELECT campaign_id, config_id, shape_id, device_id FROM attempts WHERE id = ? AND state = 'dispatched'");
  a.bind(1, attempt_id);
  if (a.step()) {
    Store::Impl::EvalIds ids;
    ids.attempt = attempt_id;
    ids.campaign = a.opt_int64(0);
    ids.config = a.int64(1);
    ids.shape = a.int64(2);
    ids.device = a.int64(3);
    impl.interrupt_attempt(ids, now);
  }
  sql::Stmt(impl.db, "UPDATE dist_work SET attempt_id = NULL WHERE id = ?").bind(1, item_id).run();
}

}  // namespace

std::vector<WorkItem> WorkQueue::claim(const std::string& agent, const DeviceKey& d, size_t n, double lease_s,
                                       int64_t campaign_id) {
  auto& impl = store_.impl();
  Lock lock(impl.mu);
  sql::Transaction tx(impl.db);
  std::vector<ClaimedRow> claimed = lease_items(impl, agent, d, n, lease_s, campaign_id);
  std::vector<WorkItem> out;
  const std::string now = now_utc();
  for (auto& c : claimed) {
    // An expired lease: the item runs again, or, after kMaxClaims, never.
    if (c.old_attempt) close_expired_attempt(impl, *c.old_attempt, c.item.id, now);
    if (c.claims >= kMaxClaims) {
      sql::Stmt(impl.db, "UPDATE dist_work SET state = 'abandoned', finished_at = now(), lease_agent = NULL, "
                         "error = 'its lease expired on every agent that claimed it' WHERE id = ?")
          .bind(1, c.item.id)
          .run();
      continue;
    }
    c.item.campaign_options = impl.parse_json(c.options, "campaign options");
    out.push_back(std::move(c.item));
  }
  tx.commit();
  return out;
}

void WorkQueue::heartbeat_agent(const std::string& agent, double lease_s) {
  auto& impl = store_.impl();
  Lock lock(impl.mu);
  sql::Transaction tx(impl.db);
  sql::Stmt(impl.db, "UPDATE dist_work SET lease_expires = now() + make_interval(secs => CAST(? AS DOUBLE PRECISION)) "
                     "WHERE lease_agent = ? AND state = 'leased'")
      .bind(1, lease_s)
      .bind(2, agent)
      .run();
  sql::Stmt(impl.db, "UPDATE dist_agents SET heartbeat = now() WHERE id = ?").bind(1, agent).run();
  tx.commit();
}

namespace {
// Inside a transaction: the item is still leased under this token (else the write is not ours).
void require_lease(sql::Db& db, const WorkItem& item) {
  sql::Stmt q(db, "SELECT 1 FROM dist_work WHERE id = ? AND lease_token = ? AND state = 'leased' FOR UPDATE");
  q.bind(1, item.id).bind(2, item.lease_token);
  if (!q.step())
    throw LeaseLost("work item " + std::to_string(item.id) + ": lease lost (another agent claimed it); result discarded");
}
}  // namespace

int64_t WorkQueue::begin_attempt(const WorkItem& item, const EvaluationRecord& what) {
  auto& impl = store_.impl();
  Lock lock(impl.mu);
  sql::Transaction tx(impl.db);
  require_lease(impl.db, item);
  const int64_t attempt = impl.begin_attempt(item.campaign_id, what.family, what.config, what.shape, what.device);
  sql::Stmt(impl.db, "UPDATE dist_work SET attempt_id = ? WHERE id = ?").bind(1, attempt).bind(2, item.id).run();
  tx.commit();
  return attempt;
}

int64_t WorkQueue::complete(const WorkItem& item, std::optional<int64_t> attempt, const EvaluationRecord& e) {
  auto& impl = store_.impl();
  Lock lock(impl.mu);
  sql::Transaction tx(impl.db);
  require_lease(impl.db, item);
  const int64_t eval = attempt ? impl.finish_attempt(*attempt, e) : impl.add_evaluation(e);
  sql::Stmt(impl.db, "UPDATE dist_work SET state = 'done', evaluation_id = ?, finished_at = now(), lease_agent = NULL "
                     "WHERE id = ?")
      .bind(1, eval)
      .bind(2, item.id)
      .run();
  tx.commit();
  return eval;
}

void WorkQueue::refuse(const WorkItem& item, const std::string& why) {
  auto& impl = store_.impl();
  Lock lock(impl.mu);
  sql::Transaction tx(impl.db);
  require_lease(impl.db, item);
  sql::Stmt(impl.db, "UPDATE dist_work SET state = 'abandoned', error = ?, finished_at = now(), lease_agent = NULL "
                     "WHERE id = ?")
      .bind(1, why)
      .bind(2, item.id)
      .run();
  tx.commit();
}

void WorkQueue::release(const std::string& agent) {
  auto& impl = store_.impl();
  Lock lock(impl.mu);
  sql::Transaction tx(impl.db);
  sql::Stmt(impl.db, "UPDATE dist_work SET state = 'pending', claims = claims - 1, lease_agent = NULL, "
                     "lease_token = NULL, lease_expires = NULL "
                     "WHERE lease_agent = ? AND state = 'leased' AND attempt_id IS NULL")
      .bind(1, agent)
      .run();
  tx.commit();
}

std::vector<int64_t> WorkQueue::running_campaigns(double stale_s) {
  auto& impl = store_.impl();
  Lock lock(impl.mu);
  sql::Stmt q(impl.db, "SELECT campaign_id FROM dist_campaigns WHERE state = 'running' AND "
                       "heartbeat > now() - make_interval(secs => CAST(? AS DOUBLE PRECISION)) ORDER BY campaign_id");
  q.bind(1, stale_s);
  std::vector<int64_t> out;
  while (q.step()) out.push_back(q.int64(0));
  return out;
}

void WorkQueue::agent_exits(const std::string& agent) {
  auto& impl = store_.impl();
  Lock lock(impl.mu);
  sql::Transaction tx(impl.db);
  sql::Stmt(impl.db, "UPDATE dist_agents SET state = 'exited', heartbeat = now() WHERE id = ?").bind(1, agent).run();
  tx.commit();
}

}  // namespace kf
