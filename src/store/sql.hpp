// The SQL connection the Store is written against, with two backends: SQLite (sqlite_handle.cpp,
// the embedded default) and PostgreSQL (pg_handle.cpp, through libpq when the build found it).
// Store code writes one dialect: SQLite's, with `?` parameters, `ON CONFLICT`, window functions;
// the PostgreSQL backend numbers the parameters and its schema translates the column types
// (schema.cpp). Every error becomes a StoreError whose message starts with the database's
// label (its path, or its URL without the password), so a failure names the database.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace kf::sql {

enum class Dialect { Sqlite, Postgres };
enum class Access { ReadWrite, ReadOnly };

// One statement's backend: parameters bound by 1-based index, columns read by 0-based index.
class Cursor {
 public:
  virtual ~Cursor() = default;
  virtual void bind_int(int i, int64_t v) = 0;
  virtual void bind_real(int i, double v) = 0;
  virtual void bind_text(int i, std::string_view v) = 0;
  virtual void bind_null(int i) = 0;
  virtual bool step() = 0;  // true while a row is available
  virtual void reset() = 0;
  virtual bool is_null(int col) const = 0;
  virtual int64_t int64(int col) const = 0;
  virtual double real(int col) const = 0;
  virtual std::string text(int col) const = 0;
};

class Db {
 public:
  Db(std::string label, Access access) : label_(std::move(label)), access_(access) {}
  virtual ~Db() = default;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  virtual Dialect dialect() const = 0;
  virtual std::unique_ptr<Cursor> prepare(std::string_view sql) = 0;
  virtual void exec(std::string_view sql) = 0;  // one or more statements, no results
  // The id of the row the last INSERT on this connection created.
  virtual int64_t last_insert_rowid() = 0;
  // Rows changed by the last INSERT/UPDATE/DELETE.
  virtual int changes() const = 0;
  // Names of the user tables (not the engine's own).
  virtual std::set<std::string> tables() = 0;
  // A write transaction that takes its locks up front (SQLite: BEGIN IMMEDIATE), a read
  // transaction that sees one snapshot, and their ends. rollback() never throws.
  virtual void begin_write() = 0;
  virtual void begin_read() = 0;
  virtual void commit() = 0;
  virtual void rollback() noexcept = 0;

  const std::string& label() const { return label_; }
  Access access() const { return access_; }

 private:
  std::string label_;
  Access access_;
};

class Stmt {
 public:
  Stmt(Db& db, std::string_view sql) : cursor_(db.prepare(sql)) {}

  Stmt& bind(int i, int64_t v) { cursor_->bind_int(i, v); return *this; }
  Stmt& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
  Stmt& bind(int i, double v) { cursor_->bind_real(i, v); return *this; }
  Stmt& bind(int i, std::string_view v) { cursor_->bind_text(i, v); return *this; }
  Stmt& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Stmt& bind_null(int i) { cursor_->bind_null(i); return *this; }
  template <class T>
  Stmt& bind(int i, const std::optional<T>& v) {
    return v ? bind(i, *v) : bind_null(i);
  }

  bool step() { return cursor_->step(); }
  void run() { while (step()) {} }
  void reset() { cursor_->reset(); }

  bool is_null(int col) const { return cursor_->is_null(col); }
  int64_t int64(int col) const { return cursor_->int64(col); }
  int int32(int col) const { return static_cast<int>(cursor_->int64(col)); }
  double real(int col) const { return cursor_->real(col); }
  std::string text(int col) const { return cursor_->text(col); }
  std::optional<int64_t> opt_int64(int col) const {
    return is_null(col) ? std::nullopt : std::optional<int64_t>(int64(col));
  }
  std::optional<double> opt_real(int col) const {
    return is_null(col) ? std::nullopt : std::optional<double>(real(col));
  }

 private:
  std::unique_ptr<Cursor> cursor_;
};

// A write transaction, rolled back by the destructor unless committed.
class Transaction {
 public:
  explicit Transaction(Db& db) : db_(db) { db_.begin_write(); }
  ~Transaction() {
    if (open_) db_.rollback();
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit() {
    db_.commit();
    open_ = false;
  }

 private:
  Db& db_;
  bool open_ = true;
};

// Read transaction: several SELECTs see one consistent snapshot.
class ReadTransaction {
 public:
  explicit ReadTransaction(Db& db) : db_(db) { db_.begin_read(); }
  ~ReadTransaction() { db_.rollback(); }
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;

 private:
  Db& db_;
};

// `--db postgresql://...` or `postgres://...` names a PostgreSQL database; anything else is a file.
bool is_postgres_url(std::string_view location);
// The URL with any password replaced by "***", for messages and labels.
std::string redact_url(const std::string& url);
// Connects (throws StoreError with one line: unreachable server, bad credentials, or a build
// without libpq). Lost connections are retried for KFORGE_DB_RETRY_S seconds (default 60).
std::unique_ptr<Db> open_postgres(const std::string& url, Access access);
// Whether this build can reach PostgreSQL at all.
bool postgres_available();

}  // namespace kf::sql
