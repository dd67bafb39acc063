// The Store's read side. Reads never take the write lock, so `kforge best` and `report`
// run while a campaign writes (WAL gives each read a consistent snapshot).
#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <tuple>

#include "store/store_impl.hpp"

namespace kf {

using Lock = std::lock_guard<std::mutex>;

namespace {

constexpr const char* kCampaignSelect = R"sql(
  SELECT c.id, f.name, c.strategy, c.seed, c.shapes_json, c.budget_json, c.options_json,
         c.status, d.name, d.cc, d.sm_count, d.driver, c.created_at, c.updated_at
  FROM campaigns c
  JOIN families f ON f.id = c.family_id
  LEFT JOIN devices d ON d.id = c.device_id
)sql";

// The stored ids a read of one shape filters on: the shape's, and the device's where one is
// given. nullopt when either is not stored: the read has no rows.
struct ShapeIds {
  int64_t shape = 0;
  std::optional<int64_t> device;
};

std::optional<ShapeIds> find_shape_ids(Store::Impl& impl, const std::string& family, const Shape& shape,
                                       const std::optional<DeviceKey>& device) {
  const auto shape_id = impl.find_shape(family, shape);
  if (!shape_id) return std::nullopt;
  ShapeIds ids{*shape_id, std::nullopt};
  if (device) {
    ids.device = impl.find_device(*device);
    if (!ids.device) return std::nullopt;
  }
  return ids;
}

}  // namespace

// ---- campaigns ----

std::optional<CampaignRecord> Store::campaign(int64_t id) const {
  Lock lock(impl_->mu);
  sql::Stmt q(impl_->db, std::string(kCampaignSelect) + " WHERE c.id = ?");
  q.bind(1, id);
  if (!q.step()) return std::nullopt;
  return impl_->read_campaign(q);
}

std::vector<CampaignRecord> Store::campaigns() const {
  Lock lock(impl_->mu);
  sql::Stmt q(impl_->db, std::string(kCampaignSelect) + " ORDER BY c.id");
  std::vector<CampaignRecord> out;
  while (q.step()) out.push_back(impl_->read_campaign(q));
  return out;
}

std::map<std::string, int> Store::status_counts(int64_t campaign_id) const {
  Lock lock(impl_->mu);
  sql::Stmt q(impl_->db,
                 "SELECT status, count(*) FROM evaluations WHERE campaign_id = ? GROUP BY status");
  q.bind(1, campaign_id);
  std::map<std::string, int> out;
  while (q.step()) out[q.text(0)] = q.int32(1);
  return out;
}

// ---- evaluations ----

std::vector<EvaluationRecord> Store::evaluations(const std::string& family,
                                                 const std::optional<Shape>& shape,
                                                 const std::optional<DeviceKey>& device,
                                                 std::optional<int64_t> campaign_id) const {
  Lock lock(impl_->mu);
  sql::ReadTransaction rt(impl_->db);
  std::string sql = impl_->evaluation_select() + " WHERE f.name = ?";
  std::optional<int64_t> shape_id, device_id;
  if (shape) {
    shape_id = impl_->find_shape(family, *shape);
    if (!shape_id) return {};
    sql += " AND e.shape_id = ?";
  }
  if (device) {
    device_id = impl_->find_device(*device);
    if (!device_id) return {};
    sql += " AND e.device_id = ?";
  }
  if (campaign_id) sql += *campaign_id == 0 ? " AND e.campaign_id IS NULL" : " AND e.campaign_id = ?";  // 0: results of no campaign
  sql += " ORDER BY e.id";
  sql::Stmt q(impl_->db, sql);
  int i = 1;
  q.bind(i++, family);
  if (shape_id) q.bind(i++, *shape_id);
  if (device_id) q.bind(i++, *device_id);
  if (campaign_id && *campaign_id != 0) q.bind(i++, *campaign_id);
  std::vector<EvaluationRecord> out;
  while (q.step()) out.push_back(impl_->read_evaluation(q));
  return out;
}

std::vector<EvaluationRecord> Store::top(const std::string& family, const Shape& shape,
                                         const std::optional<DeviceKey>& device, size_t k, RecordsFrom from) const {
  Lock lock(impl_->mu);
  if (k == 0) return {};
  sql::ReadTransaction rt(impl_->db);
  const auto ids = find_shape_ids(*impl_, family, shape, device);
  if (!ids) return {};
  // One row per config: its fastest ok evaluation of the newest timing method it was timed with (ties: the
  // earliest), then the k fastest, the configs timed with the newest method first. Times of two methods do not
  // compare (method 1 read 2-12% faster on some kernels), so an old method's fastest must not push the
  // configs timed with the current one out of the top k that refresh, seeding and the finalists take.
  // (NULL reads as method 1; a file older than schema 4 has no method column: all its times are method 1.)
  const std::string method = impl_->schema_version >= 4 ? "COALESCE(timing_method, 1)" : "1";
  std::string sql = R"sql(
    WITH ranked AS (
      SELECT id, @M@ AS method, ROW_NUMBER() OVER (PARTITION BY config_id ORDER BY @M@ DESC, median_us, id) AS rn
      FROM evaluations
      WHERE shape_id = ? AND status = 'ok' AND median_us IS NOT NULL)sql";
  if (ids->device) sql += " AND device_id = ?";
  // Another tool's times were never gated here: they rank only where asked for (seeding). (Before schema 5 an
  // imported row is one on the import's device key, the rule the migration applies.)
  if (from == RecordsFrom::Kforge)
    sql += impl_->schema_version >= 5
               ? " AND provenance = 'kforge'"
               : " AND device_id NOT IN (SELECT id FROM devices WHERE cc = 0 AND driver = 'imported')";
  sql += ")\n" + impl_->evaluation_select() +
         " JOIN ranked r ON r.id = e.id WHERE r.rn = 1 ORDER BY r.method DESC, e.median_us, e.id LIMIT ?";
  for (size_t at; (at = sql.find("@M@")) != std::string::npos;) sql.replace(at, 3, method);
  sql::Stmt q(impl_->db, sql);
  int i = 1;
  q.bind(i++, ids->shape);
  if (ids->device) q.bind(i++, *ids->device);
  const auto max = static_cast<size_t>(std::numeric_limits<int64_t>::max());
  q.bind(i++, static_cast<int64_t>(k < max ? k : max));
  std::vector<EvaluationRecord> out;
  while (q.step()) out.push_back(impl_->read_evaluation(q));
  return out;
}

std::optional<EvaluationRecord> Store::best(const std::string& family, const Shape& shape,
                                            const std::optional<DeviceKey>& device) const {
  auto t = top(family, shape, device, 1);
  if (t.empty()) return std::nullopt;
  return t.front();
}

std::set<std::string> Store::evaluated_config_keys(const std::string& family, const Shape& shape,
                                                   const DeviceKey& device) const {
  Lock lock(impl_->mu);
  sql::ReadTransaction rt(impl_->db);
  const auto ids = find_shape_ids(*impl_, family, shape, device);
  if (!ids) return {};
  sql::Stmt q(impl_->db, R"sql(
    SELECT DISTINCT c.key FROM evaluations e JOIN configs c ON c.id = e.config_id
    WHERE e.shape_id = ? AND e.device_id = ? AND e.status != 'interrupted')sql");
  q.bind(1, ids->shape).bind(2, *ids->device);
  std::set<std::string> out;
  while (q.step()) out.insert(q.text(0));
  return out;
}

std::map<std::string, int> Store::interrupted_counts(const std::string& family, const Shape& shape,
                                                     const DeviceKey& device) const {
  Lock lock(impl_->mu);
  sql::ReadTransaction rt(impl_->db);
  const auto ids = find_shape_ids(*impl_, family, shape, device);
  if (!ids) return {};
  sql::Stmt q(impl_->db, R"sql(
    SELECT c.key, count(*) FROM evaluations e JOIN configs c ON c.id = e.config_id
    WHERE e.shape_id = ? AND e.device_id = ? AND e.status = 'interrupted'
    GROUP BY c.key)sql");
  q.bind(1, ids->shape).bind(2, *ids->device);
  std::map<std::string, int> out;
  while (q.step()) out[q.text(0)] = q.int32(1);
  return out;
}

// ---- shapes, devices, families, baselines ----

std::vector<Shape> Store::shapes(const std::string& family) const {
  Lock lock(impl_->mu);
  sql::Stmt q(impl_->db,
                 "SELECT s.json FROM shapes s JOIN families f ON f.id = s.family_id "
                 "WHERE f.name = ? ORDER BY s.id");
  q.bind(1, family);
  std::vector<Shape> out;
  while (q.step()) out.push_back(impl_->parse_assignment(q.text(0), "shape"));
  return out;
}

std::vector<DeviceKey> Store::devices() const {
  Lock lock(impl_->mu);
  sql::Stmt q(impl_->db, "SELECT name, cc, sm_count, driver FROM devices ORDER BY id");
  std::vector<DeviceKey> out;
  while (q.step()) out.push_back({q.text(0), q.int32(1), q.int32(2), q.text(3)});
  return out;
}

std::optional<std::string> Store::family_spec_hash(const std::string& family) const {
  Lock lock(impl_->mu);
  sql::Stmt q(impl_->db, "SELECT spec_hash FROM families WHERE name = ?");
  q.bind(1, family);
  if (!q.step()) return std::nullopt;
  return q.text(0);
}

std::vector<BaselineRecord> Store::baselines(const std::string& family, const Shape& shape,
                                             const std::optional<DeviceKey>& device) const {
  Lock lock(impl_->mu);
  sql::ReadTransaction rt(impl_->db);
  const auto ids = find_shape_ids(*impl_, family, shape, device);
  if (!ids) return {};
  std::string sql = R"sql(
    SELECT f.name, s.json, d.name, d.cc, d.sm_count, d.driver, b.backend, b.median_us,
           b.extra_json, b.created_at
    FROM baselines b
    JOIN families f ON f.id = b.family_id
    JOIN shapes s ON s.id = b.shape_id
    JOIN devices d ON d.id = b.device_id
    WHERE b.shape_id = ?)sql";
  if (ids->device) sql += " AND b.device_id = ?";
  sql += " ORDER BY b.backend, b.created_at DESC, b.id DESC";
  sql::Stmt q(impl_->db, sql);
  q.bind(1, ids->shape);
  if (ids->device) q.bind(2, *ids->device);
  std::vector<BaselineRecord> out;
  while (q.step()) {
    BaselineRecord b;
    b.family = q.text(0);
    b.shape = impl_->parse_assignment(q.text(1), "shape");
    b.device = {q.text(2), q.int32(3), q.int32(4), q.text(5)};
    b.backend = q.text(6);
    b.median_us = q.real(7);
    b.extra = impl_->parse_json(q.text(8), "baseline extra");
    b.created_at = q.text(9);
    out.push_back(std::move(b));
  }
  return out;
}

CampaignRecord Store::Impl::read_campaign(const sql::Stmt& q) const {
  CampaignRecord c;
  c.id = q.int64(0);
  c.family = q.text(1);
  c.strategy = q.text(2);
  c.seed = static_cast<uint64_t>(q.int64(3));
  for (const auto& s : parse_json(q.text(4), "campaign shapes")) {
    try {
      c.shapes.push_back(assignment_from_json(s));
    } catch (const std::exception& e) {
      fail("stored campaign shapes are malformed (" + std::string(e.what()) + ")");
    }
  }
  c.budget = parse_json(q.text(5), "campaign budget");
  c.options = parse_json(q.text(6), "campaign options");
  c.status = q.text(7);
  if (!q.is_null(8)) c.device = DeviceKey{q.text(8), q.int32(9), q.int32(10), q.text(11)};
  c.created_at = q.text(12);
  c.updated_at = q.text(13);
  return c;
}

std::vector<BaselineRecord> typical_baselines(const std::vector<BaselineRecord>& all) {
  using Key = std::tuple<std::string, std::string, int, int, std::string>;
  std::map<Key, std::vector<const BaselineRecord*>> groups;
  std::vector<Key> order;
  for (const auto& b : all) {
    Key k{b.backend, b.device.name, b.device.cc, b.device.sm_count, b.device.driver};
    auto& g = groups[k];
    if (g.empty()) order.push_back(k);
    g.push_back(&b);
  }
  std::vector<BaselineRecord> out;
  for (const auto& k : order) {
    const auto& g = groups[k];
    std::vector<double> us;
    for (const auto* b : g) us.push_back(b->median_us);
    std::sort(us.begin(), us.end());
    const size_t n = us.size();
    BaselineRecord r = **std::max_element(g.begin(), g.end(), [](const auto* a, const auto* b) {
      return a->created_at < b->created_at;
    });
    r.median_us = n % 2 ? us[n / 2] : 0.5 * (us[n / 2 - 1] + us[n / 2]);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace kf
