// A thin RAII layer over sqlite3 and sqlite3_stmt. Every error becomes a StoreError whose
// message starts with the database's label (its path), so a failure names the file.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace kf::sqlite {

class Db;

// One prepared statement. Parameters are bound by 1-based index; columns are read by
// 0-based index, as in the C API.
class Stmt {
 public:
  Stmt(Db& db, std::string_view sql);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& bind(int i, int64_t v);
  Stmt& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
  Stmt& bind(int i, double v);
  Stmt& bind(int i, std::string_view v);
  Stmt& bind(int i, const char* v) { return bind(i, std::string_view(v)); }
  Stmt& bind(int i, const std::string& v) { return bind(i, std::string_view(v)); }
  Stmt& bind_null(int i);
  template <class T>
  Stmt& bind(int i, const std::optional<T>& v) {
    return v ? bind(i, *v) : bind_null(i);
  }

  // true while a row is available; false when done. Throws on error.
  bool step();
  // Runs a statement that returns no rows (or ignores them).
  void run();
  void reset();

  bool is_null(int col) const;
  int64_t int64(int col) const;
  int int32(int col) const;
  double real(int col) const;
  std::string text(int col) const;
  std::optional<int64_t> opt_int64(int col) const;
  std::optional<double> opt_real(int col) const;

 private:
  Db& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

enum class Access { ReadWrite, ReadOnly };

class Db {
 public:
  // ReadWrite opens (or creates) a database file; ReadOnly opens an existing one and never
  // writes to it (nor creates it). label prefixes every error message.
  Db(const std::string& filename, std::string label, Access access = Access::ReadWrite);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  void exec(std::string_view sql);  // one or more statements, no results
  int64_t last_insert_rowid() const;
  int changes() const;
  void busy_timeout(int ms);
  // The last failed call on this connection was refused for a lock (SQLITE_BUSY or LOCKED).
  bool last_failure_was_lock() const;
  const std::string& label() const { return label_; }
  sqlite3* raw() const { return db_; }
  Access access() const { return access_; }

  // Throws StoreError "<label>: <context>: <sqlite message>" (context may be empty).
  [[noreturn]] void fail(int rc, std::string_view context) const;

 private:
  void open(const std::string& filename, int flags);
  sqlite3* db_ = nullptr;
  std::string label_;
  Access access_ = Access::ReadWrite;
};

// BEGIN IMMEDIATE ... COMMIT, rolled back by the destructor unless committed. IMMEDIATE
// takes the write lock up front, so a busy writer is waited for (busy_timeout) at BEGIN
// instead of failing later when a read transaction tries to upgrade (which WAL refuses
// with SQLITE_BUSY_SNAPSHOT, without waiting).
class Transaction {
 public:
  explicit Transaction(Db& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Db& db_;
  bool open_ = true;
};

// Read transaction: several SELECTs see one consistent snapshot.
class ReadTransaction {
 public:
  explicit ReadTransaction(Db& db);
  ~ReadTransaction();
  ReadTransaction(const ReadTransaction&) = delete;
  ReadTransaction& operator=(const ReadTransaction&) = delete;

 private:
  Db& db_;
};

}  // namespace kf::sqlite
