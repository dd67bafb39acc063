#include "store/sqlite_handle.hpp"

#include <sqlite3.h>

#include <cstdio>
#include <limits>

#include "store/store.hpp"

namespace kf::sqlite {

namespace {
int checked_size(std::string_view v) {
  if (v.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    throw std::length_error("text too long for SQLite");
  }
  return static_cast<int>(v.size());
}
}  // namespace

// ---- Db ----

namespace {
// "file:" URI of a path, for the immutable fallback: '%', '?' and '#' must be escaped.
std::string file_uri(const std::string& path) {
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
      uri += buf;
    } else {
      uri += c;
    }
  }
  return uri;
}
}  // namespace

void Db::open(const std::string& filename, int flags) {
  int rc = sqlite3_open_v2(filename.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    // A handle is returned even on failure (except out of memory); its message is the detail.
    std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw StoreError(label() + ": " + msg);
  }
  sqlite3_extended_result_codes(db_, 1);
}

Db::Db(const std::string& filename, std::string label, sql::Access access, bool create)
    : sql::Db(std::move(label), access) {
  // NOMUTEX: the Store serialises its own calls; FULLMUTEX would only add a second lock.
  if (access == sql::Access::ReadWrite) {
    open(filename, SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX);
    return;
  }
  open(filename, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX);
  // A WAL database whose folder or shared-memory file we may not write (a read-only file,
  // someone else's results) cannot be read the normal way; read it as immutable instead.
  const int rc = sqlite3_exec(db_, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr);
  const int primary = rc & 0xff;
  if (primary == SQLITE_CANTOPEN || primary == SQLITE_READONLY) {
    sqlite3_close(db_);
    db_ = nullptr;
    open(file_uri(filename) + "?immutable=1", SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI);
  }
}

Db::~Db() {
  // close_v2 defers the close until every statement is finalized; with RAII statements
  // there are none left by now.
  sqlite3_close_v2(db_);
}

void Db::fail(int rc, std::string_view context) const {
  std::string msg = label() + ": ";
  if (!context.empty()) {
    msg += context;
    msg += ": ";
  }
  // errmsg describes the most recent failure on this connection; errstr is the generic
  // text for the code, used if the two disagree (e.g. after a later successful call).
  const char* detail = db_ && sqlite3_errcode(db_) == rc ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  msg += detail;
  throw StoreError(msg);
}

void Db::exec(std::string_view sql) {
  std::string s(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string detail = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    throw StoreError(label() + ": " + detail);
  }
}

int64_t Db::last_insert_rowid() { return sqlite3_last_insert_rowid(db_); }
int Db::changes() const { return sqlite3_changes(db_); }
void Db::busy_timeout(int ms) { sqlite3_busy_timeout(db_, ms); }
bool Db::last_failure_was_lock() const {
  const int rc = sqlite3_errcode(db_);  // primary code: BUSY_SNAPSHOT etc. fold into BUSY
  return rc == SQLITE_BUSY || rc == SQLITE_LOCKED;
}

// ---- statements ----

namespace {
class SqliteCursor final : public sql::Cursor {
 public:
  SqliteCursor(Db& db, std::string_view sql) : db_(db) {
    int rc = sqlite3_prepare_v2(db.raw(), sql.data(), checked_size(sql), &stmt_, nullptr);
    if (rc != SQLITE_OK) db_.fail(rc, "");
  }
  ~SqliteCursor() override { sqlite3_finalize(stmt_); }

  void bind_int(int i, int64_t v) override { check(sqlite3_bind_int64(stmt_, i, v)); }
  void bind_real(int i, double v) override { check(sqlite3_bind_double(stmt_, i, v)); }
  void bind_text(int i, std::string_view v) override {
    check(sqlite3_bind_text(stmt_, i, v.data(), checked_size(v), SQLITE_TRANSIENT));
  }
  void bind_null(int i) override { check(sqlite3_bind_null(stmt_, i)); }

  bool step() override {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    db_.fail(rc, "");
  }
  void reset() override {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  bool is_null(int col) const override { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  int64_t int64(int col) const override { return sqlite3_column_int64(stmt_, col); }
  double real(int col) const override { return sqlite3_column_double(stmt_, col); }
  std::string text(int col) const override {
    const auto* p = sqlite3_column_text(stmt_, col);
    if (!p) return {};
    return std::string(reinterpret_cast<const char*>(p),
                       static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
  }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK) db_.fail(rc, "binding parameter");
  }
  Db& db_;
  sqlite3_stmt* stmt_ = nullptr;
};
}  // namespace

std::unique_ptr<sql::Cursor> Db::prepare(std::string_view sql) { return std::make_unique<SqliteCursor>(*this, sql); }

std::set<std::string> Db::tables() {
  // The first read of the file: SQLite reports a non-database or a damaged header here.
  SqliteCursor q(*this, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
  std::set<std::string> names;
  while (q.step()) names.insert(q.text(0));
  return names;
}

void Db::rollback() noexcept {
  // Never throws: a failed rollback leaves SQLite to roll back when the connection closes.
  sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

}  // namespace kf::sqlite
