// The SQLite backend of sql::Db: a thin RAII layer over sqlite3 and sqlite3_stmt.
#pragma once
#include <string>

#include "store/sql.hpp"

struct sqlite3;

namespace kf::sqlite {

class Db final : public sql::Db {
 public:
  // ReadWrite opens (or, with create, creates) a database file; ReadOnly opens an existing one
  // and never writes to it (nor creates it). label prefixes every error message.
  Db(const std::string& filename, std::string label, sql::Access access = sql::Access::ReadWrite,
     bool create = true);
  ~Db() override;

  sql::Dialect dialect() const override { return sql::Dialect::Sqlite; }
  std::unique_ptr<sql::Cursor> prepare(std::string_view sql) override;
  void exec(std::string_view sql) override;
  int64_t last_insert_rowid() override;
  int changes() const override;
  std::set<std::string> tables() override;
  // BEGIN IMMEDIATE takes the write lock up front, so a busy writer is waited for
  // (busy_timeout) at BEGIN instead of failing later when a read transaction tries to
  // upgrade (which WAL refuses with SQLITE_BUSY_SNAPSHOT, without waiting).
  void begin_write() override { exec("BEGIN IMMEDIATE"); }
  void begin_read() override { exec("BEGIN"); }
  void commit() override { exec("COMMIT"); }
  void rollback() noexcept override;

  void busy_timeout(int ms);
  // The last failed call on this connection was refused for a lock (SQLITE_BUSY or LOCKED).
  bool last_failure_was_lock() const;
  sqlite3* raw() const { return db_; }

  // Throws StoreError "<label>: <context>: <sqlite message>" (context may be empty).
  [[noreturn]] void fail(int rc, std::string_view context) const;

 private:
  void open(const std::string& filename, int flags);
  sqlite3* db_ = nullptr;
};

}  // namespace kf::sqlite
