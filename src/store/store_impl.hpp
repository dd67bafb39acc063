// Internals shared by the Store's write side (store.cpp) and read side (store_queries.cpp).
#pragma once
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "store/sql.hpp"
#include "store/store.hpp"

namespace kf {

// ISO-8601 UTC with milliseconds, "2025-01-31T12:00:00.000Z": sorts as text in time order.
std::string now_utc();

struct Store::Impl {
  Impl(const std::filesystem::path& p, Store::Access access);

  std::filesystem::path path;  // the file, or the URL without its password
  std::unique_ptr<sql::Db> connection;
  sql::Db& db;
  // One connection serves every thread that shares this Store; a transaction must not
  // interleave with another thread's statements on it.
  std::mutex mu;
  int schema_version = 0;  // the file's (a read-only open does not migrate an older one)

  [[noreturn]] void fail(const std::string& what) const;
  nlohmann::json parse_json(const std::string& text, const char* what) const;
  Assignment parse_assignment(const std::string& text, const char* what) const;
  Status parse_status(const std::string& text) const;
  Provenance parse_provenance(const std::string& text) const;  // "kforge" | "imported"

  // Lookups that never write (readers must not take the write lock) ...
  std::optional<int64_t> find_family(const std::string& family);
  std::optional<int64_t> find_shape(const std::string& family, const Shape& s);
  std::optional<int64_t> find_device(const DeviceKey& d);
  // ... and get-or-create, only inside a write transaction.
  int64_t family_id(const std::string& family);
  int64_t config_id(int64_t family, const Config& c);
  int64_t shape_id(int64_t family, const Shape& s);
  int64_t device_id(const DeviceKey& d);
  int64_t kernel_id(const KernelRecord& k);  // upsert by (variant_hash, arch), newest wins

  // Inserts one evaluation row (ids resolved by the caller); returns its id.
  struct EvalIds {
    std::optional<int64_t> attempt, campaign, kernel;
    int64_t config = 0, shape = 0, device = 0;
  };
  int64_t insert_evaluation(const EvalIds& ids, const EvaluationRecord& e);
  void require_campaign(int64_t id);  // throws "no campaign N"
  // The bodies of Store's methods of the same names, inside the caller's transaction (the
  // distributed work queue adds its own conditions to the same transaction).
  int64_t begin_attempt(int64_t campaign_id, const std::string& family, const Config& c, const Shape& s,
                        const DeviceKey& d);
  int64_t finish_attempt(int64_t attempt_id, const EvaluationRecord& e);
  int64_t add_evaluation(const EvaluationRecord& e);
  // Closes a dispatched attempt (ids.attempt) as an interrupted evaluation; returns it.
  EvaluationRecord interrupt_attempt(const EvalIds& ids, const std::string& now);
  void touch_campaign(int64_t campaign_id, const std::string& when);

  // The columns read_evaluation expects, and the joins that produce them; callers append
  // WHERE / ORDER BY. (A file older than schema 4, opened read-only, has no timing_method: NULL; one older than
  // schema 5 has no provenance: provenance_of_older_rows.)
  const std::string& evaluation_select() const;
  // A file older than schema 5 read as it is: an evaluation's provenance from its device (the devices table as
  // `d`), by the rule schema 5's migration applies (store/schema.cpp).
  static const char* provenance_of_older_rows();
  EvaluationRecord read_evaluation(const sql::Stmt& q) const;
  CampaignRecord read_campaign(const sql::Stmt& q) const;  // columns of kCampaignSelect
};

}  // namespace kf
