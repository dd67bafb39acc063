#include "store/store_copy.hpp"

#include <string>
#include <vector>

#include "store/store.hpp"
#include "store/store_impl.hpp"

namespace kf {

namespace {

// Each table's columns with their types ('i' integer, 'r' real, 't' text), parents first so
// every reference points at a row already copied.
struct TableSpec {
  const char* name;
  std::vector<std::pair<const char*, char>> columns;
};

const std::vector<TableSpec>& tables() {
  static const std::vector<TableSpec> specs = {
      {"families", {{"id", 'i'}, {"name", 't'}, {"spec_hash", 't'}}},
      {"devices", {{"id", 'i'}, {"name", 't'}, {"cc", 'i'}, {"sm_count", 'i'}, {"driver", 't'}}},
      {"configs", {{"id", 'i'}, {"family_id", 'i'}, {"key", 't'}, {"json", 't'}}},
      {"shapes", {{"id", 'i'}, {"family_id", 'i'}, {"key", 't'}, {"json", 't'}}},
      {"kernels", {{"id", 'i'}, {"variant_hash", 't'}, {"arch", 't'}, {"ok", 'i'}, {"registers", 'i'},
                   {"smem_static", 'i'}, {"smem_dynamic", 'i'}, {"stack_frame", 'i'}, {"spill_stores", 'i'},
                   {"spill_loads", 'i'}, {"compile_ms", 'r'}, {"log", 't'}}},
      {"campaigns", {{"id", 'i'}, {"family_id", 'i'}, {"strategy", 't'}, {"seed", 'i'}, {"shapes_json", 't'},
                     {"budget_json", 't'}, {"options_json", 't'}, {"status", 't'}, {"device_id", 'i'},
                     {"created_at", 't'}, {"updated_at", 't'}}},
      {"attempts", {{"id", 'i'}, {"campaign_id", 'i'}, {"config_id", 'i'}, {"shape_id", 'i'}, {"device_id", 'i'},
                    {"state", 't'}, {"started_at", 't'}, {"finished_at", 't'}}},
      {"evaluations", {{"id", 'i'}, {"attempt_id", 'i'}, {"campaign_id", 'i'}, {"config_id", 'i'}, {"shape_id", 'i'},
                       {"device_id", 'i'}, {"kernel_id", 'i'}, {"status", 't'}, {"error", 't'}, {"max_abs", 'r'},
                       {"rel_l2", 'r'}, {"median_us", 'r'}, {"p10_us", 'r'}, {"p90_us", 'r'}, {"ci_lo_us", 'r'},
                       {"ci_hi_us", 'r'}, {"reps", 'i'}, {"launches_per_rep", 'i'}, {"plain_median_us", 'r'},
                       {"flops", 'r'}, {"bytes", 'r'}, {"created_at", 't'}, {"timing_method", 'i'},
                       {"provenance", 't'}, {"power_w", 'r'}, {"energy_uj", 'r'}}},
      {"baselines", {{"id", 'i'}, {"family_id", 'i'}, {"shape_id", 'i'}, {"device_id", 'i'}, {"backend", 't'},
                     {"median_us", 'r'}, {"extra_json", 't'}, {"created_at", 't'}}},
      {"sanitizer_runs", {{"id", 'i'}, {"family_id", 'i'}, {"variant_hash", 't'}, {"arch", 't'}, {"shape_id", 'i'},
                          {"device_id", 'i'}, {"campaign_id", 'i'}, {"tool", 't'}, {"passed", 'i'}, {"errors", 'i'},
                          {"summary", 't'}, {"created_at", 't'}}},
  };
  return specs;
}

// A column the source file is too old to have, read as its migration would have filled it in.
struct Derived {
  const char* column;
  const char* expression;
};

size_t copy_table(sql::Db& from, sql::Db& to, const TableSpec& t, const std::vector<Derived>& derived) {
  std::string cols, reads, marks;
  for (const auto& [name, type] : t.columns) {
    std::string expr = name;
    for (const auto& d : derived)
      if (expr == d.column) expr = std::string(d.expression) + " AS " + name;
    cols += (cols.empty() ? "" : ", ") + std::string(name);
    reads += (reads.empty() ? "" : ", ") + expr;
    marks += marks.empty() ? "?" : ", ?";
  }
  sql::Stmt read(from, "SELECT " + reads + " FROM " + t.name + " ORDER BY id");
  size_t rows = 0;
  while (read.step()) {
    sql::Stmt write(to, "INSERT INTO " + std::string(t.name) + " (" + cols + ") VALUES (" + marks + ")");
    for (size_t i = 0; i < t.columns.size(); ++i) {
      const int col = static_cast<int>(i), param = col + 1;
      if (read.is_null(col)) {
        write.bind_null(param);
      } else if (t.columns[i].second == 'i') {
        write.bind(param, read.int64(col));
      } else if (t.columns[i].second == 'r') {
        write.bind(param, read.real(col));
      } else {
        write.bind(param, read.text(col));
      }
    }
    write.run();
    ++rows;
  }
  // PostgreSQL's id sequences do not follow explicit ids: the next new row must come after these.
  if (to.dialect() == sql::Dialect::Postgres)
    sql::Stmt(to, std::string("SELECT setval(pg_get_serial_sequence('") + t.name + "', 'id'), COALESCE(MAX(id), 0) + 1, false) FROM " + t.name).run();
  return rows;
}

}  // namespace

std::map<std::string, size_t> copy_store(const std::string& from, const std::string& to) {
  Store source(from, Store::Access::ReadOnly);
  Store dest(to);
  sql::Db& in = source.impl().db;
  sql::Db& out = dest.impl().db;
  sql::Transaction tx(out);
  for (const char* table : {"families", "campaigns", "evaluations", "baselines"}) {
    sql::Stmt q(out, std::string("SELECT count(*) FROM ") + table);
    if (q.step() && q.int64(0) > 0)
      throw StoreError(dest.path().string() + ": already holds results (" + table +
                       "); migrate into a new, empty database");
  }
  const auto present = in.tables();  // an older file may lack a newer table (read as it is)
  std::map<std::string, size_t> copied;
  sql::ReadTransaction snapshot(in);
  for (TableSpec t : tables()) {
    if (!present.count(t.name)) continue;
    if (source.impl().schema_version < 4)  // evaluations.timing_method came with schema 4 (NULL reads as 1)
      std::erase_if(t.columns, [](const auto& c) { return std::string(c.first) == "timing_method"; });
    if (source.impl().schema_version < 6)  // evaluations.power_w and energy_uj came with schema 6 (NULL: not measured)
      std::erase_if(t.columns, [](const auto& c) {
        return std::string(c.first) == "power_w" || std::string(c.first) == "energy_uj";
      });
    std::vector<Derived> derived;
    if (source.impl().schema_version < 5)  // evaluations.provenance came with schema 5: its migration's rule
      derived.push_back({"provenance",
                         "CASE WHEN device_id IN (SELECT id FROM devices WHERE cc = 0 AND driver = 'imported') "
                         "THEN 'imported' ELSE 'kforge' END"});
    copied[t.name] = copy_table(in, out, t, derived);
  }
  tx.commit();
  return copied;
}

}  // namespace kf
