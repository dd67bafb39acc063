// The Store's compute-sanitizer records (schema version 2).
#include "store/store_impl.hpp"

namespace kf {

using Lock = std::lock_guard<std::mutex>;

void Store::add_sanitizer_run(const SanitizerRecord& r) {
  Lock lock(impl_->mu);
  auto& db = impl_->db;
  sql::Transaction tx(db);
  if (r.campaign_id != 0) impl_->require_campaign(r.campaign_id);
  const int64_t fam = impl_->family_id(r.family);
  sql::Stmt ins(db, R"sql(
    INSERT INTO sanitizer_runs (family_id, variant_hash, arch, shape_id, device_id, campaign_id, tool, passed,
                                errors, summary, created_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?))sql");
  ins.bind(1, fam).bind(2, r.variant_hash).bind(3, r.arch).bind(4, impl_->shape_id(fam, r.shape));
  ins.bind(5, impl_->device_id(r.device));
  ins.bind(6, r.campaign_id != 0 ? std::optional<int64_t>(r.campaign_id) : std::nullopt);
  ins.bind(7, r.tool).bind(8, int64_t{r.passed ? 1 : 0}).bind(9, r.errors).bind(10, r.summary);
  ins.bind(11, r.created_at.empty() ? now_utc() : r.created_at);
  ins.run();
  tx.commit();
}

std::vector<SanitizerRecord> Store::sanitizer_runs(const std::string& family, const std::string& variant_hash) const {
  Lock lock(impl_->mu);
  sql::ReadTransaction rt(impl_->db);
  const auto fam = impl_->find_family(family);
  if (!fam) return {};
  // A file of schema version 1 opened without migrating (read-only) has no such table: no runs.
  if (!impl_->db.tables().count("sanitizer_runs")) return {};
  sql::Stmt q(impl_->db, R"sql(
    SELECT r.variant_hash, r.arch, s.json, d.name, d.cc, d.sm_count, d.driver, r.campaign_id, r.tool, r.passed,
           r.errors, r.summary, r.created_at
    FROM sanitizer_runs r
    JOIN shapes s ON s.id = r.shape_id
    JOIN devices d ON d.id = r.device_id
    WHERE r.family_id = ? AND r.variant_hash = ?
    ORDER BY r.created_at DESC, r.id DESC)sql");
  q.bind(1, *fam).bind(2, variant_hash);
  std::vector<SanitizerRecord> out;
  while (q.step()) {
    SanitizerRecord r;
    r.family = family;
    r.variant_hash = q.text(0);
    r.arch = q.text(1);
    r.shape = impl_->parse_assignment(q.text(2), "shape");
    r.device = {q.text(3), q.int32(4), q.int32(5), q.text(6)};
    r.campaign_id = q.opt_int64(7).value_or(0);
    r.tool = q.text(8);
    r.passed = q.int64(9) != 0;
    r.errors = q.int64(10);
    r.summary = q.text(11);
    r.created_at = q.text(12);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace kf
