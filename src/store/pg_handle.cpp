// The PostgreSQL backend of sql::Db, through libpq (built only where libpq was found: without
// it, a postgresql:// database is refused with one line). Statements are sent with
// PQexecParams, parameters as text of unspecified type so the server infers each from its
// column. A connection lost outside a transaction is re-opened and the statement re-sent for
// KFORGE_DB_RETRY_S seconds (default 60); inside a transaction the write is lost, and so is
// said: the caller's transaction was rolled back with the connection.
#include <cstdlib>
#include <string>

#include "store/sql.hpp"
#include "store/store.hpp"

namespace kf::sql {

bool is_postgres_url(std::string_view location) {
  return location.rfind("postgresql://", 0) == 0 || location.rfind("postgres://", 0) == 0;
}

std::string redact_url(const std::string& url) {
  // scheme://user:password@host/...: the password runs from the first ':' after "//" to the last '@'.
  const size_t start = url.find("//");
  if (start == std::string::npos) return url;
  const size_t at = url.find('@', start);
  if (at == std::string::npos) return url;
  const size_t colon = url.find(':', start + 2);
  if (colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon + 1) + "***" + url.substr(at);
}

}  // namespace kf::sql

#ifndef KFORGE_HAVE_LIBPQ

namespace kf::sql {
bool postgres_available() { return false; }
std::unique_ptr<Db> open_postgres(const std::string& url, Access) {
  throw StoreError(redact_url(url) +
                   ": this kforge was built without PostgreSQL support (libpq was not found at build "
                   "time: install libpq-dev and rebuild)");
}
}  // namespace kf::sql

#else

#include <libpq-fe.h>

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>


namespace kf::sql {

namespace {

using Clock = std::chrono::steady_clock;

// libpq's messages end in a newline and may run over several lines: the first one says it.
std::string libpq_first_line(const char* message) {
  std::string s = message ? message : "";
  if (auto nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s.empty() ? "unknown error" : s;
}

double retry_seconds() {
  const char* v = std::getenv("KFORGE_DB_RETRY_S");
  if (!v || !*v) return 60;
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  return end && *end == '\0' && std::isfinite(s) && s >= 0 ? s : 60;
}

// SQLite's `?` parameters become $1, $2, ... (never inside a quoted literal or identifier).
std::string number_parameters(std::string_view sql) {
  std::string out;
  out.reserve(sql.size() + 16);
  int n = 0;
  char quote = 0;
  for (char c : sql) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '?') {
      out += '$' + std::to_string(++n);
      continue;
    }
    out += c;
  }
  return out;
}

void ignore_notice(void*, const char*) {}  // "relation already exists, skipping" and the like

class PgDb;

class PgCursor final : public Cursor {
 public:
  PgCursor(PgDb& db, std::string_view sql) : db_(db), sql_(number_parameters(sql)) {}
  ~PgCursor() override { PQclear(res_); }

  void bind_int(int i, int64_t v) override { slot(i) = std::to_string(v); }
  void bind_real(int i, double v) override {
    if (std::isnan(v)) {
      slot(i) = "NaN";
    } else if (std::isinf(v)) {
      slot(i) = v > 0 ? "Infinity" : "-Infinity";
    } else {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.17g", v);
      slot(i) = buf;
    }
  }
  void bind_text(int i, std::string_view v) override { slot(i) = std::string(v); }
  void bind_null(int i) override { slot(i) = std::nullopt; }

  bool step() override;
  void reset() override {
    PQclear(res_);
    res_ = nullptr;
    params_.clear();
  }

  bool is_null(int col) const override { return PQgetisnull(res_, row_, col) != 0; }
  int64_t int64(int col) const override {
    if (is_null(col)) return 0;
    return std::strtoll(PQgetvalue(res_, row_, col), nullptr, 10);
  }
  double real(int col) const override {
    if (is_null(col)) return 0;
    return std::strtod(PQgetvalue(res_, row_, col), nullptr);
  }
  std::string text(int col) const override {
    if (is_null(col)) return {};
    return std::string(PQgetvalue(res_, row_, col), static_cast<size_t>(PQgetlength(res_, row_, col)));
  }

 private:
  std::optional<std::string>& slot(int i) {
    if (params_.size() < static_cast<size_t>(i)) params_.resize(static_cast<size_t>(i));
    return params_[static_cast<size_t>(i - 1)];
  }
  PgDb& db_;
  std::string sql_;
  std::vector<std::optional<std::string>> params_;
  PGresult* res_ = nullptr;
  int row_ = -1;
};

class PgDb final : public Db {
 public:
  PgDb(const std::string& url, Access access)
      : Db(redact_url(url), access), url_(url), retry_s_(retry_seconds()) {
    std::string why;
    if (!connect(why)) throw StoreError(label() + ": cannot connect: " + why);
  }
  ~PgDb() override { PQfinish(conn_); }

  Dialect dialect() const override { return Dialect::Postgres; }
  std::unique_ptr<Cursor> prepare(std::string_view sql) override { return std::make_unique<PgCursor>(*this, sql); }
  void exec(std::string_view sql) override { PQclear(run(std::string(sql), {}, false)); }
  int64_t last_insert_rowid() override {
    PGresult* r = run("SELECT lastval()", {}, true);
    const int64_t id = std::strtoll(PQgetvalue(r, 0, 0), nullptr, 10);
    PQclear(r);
    return id;
  }
  int changes() const override { return changes_; }
  std::set<std::string> tables() override {
    PGresult* r = run("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()", {}, true);
    std::set<std::string> out;
    for (int i = 0; i < PQntuples(r); ++i) out.insert(PQgetvalue(r, i, 0));
    PQclear(r);
    return out;
  }
  void begin_write() override { begin("BEGIN"); }
  void begin_read() override { begin("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); }
  void commit() override {
    // Still "in a transaction" while COMMIT is on its way: a connection lost now must not be
    // re-opened and the COMMIT re-sent (it would commit nothing and answer success).
    try {
      PQclear(run("COMMIT", {}, false));
    } catch (...) {
      in_tx_ = false;  // whatever COMMIT answered, the transaction is over
      throw;
    }
    in_tx_ = false;
  }
  void rollback() noexcept override {
    if (!in_tx_) return;
    in_tx_ = false;
    if (PQstatus(conn_) == CONNECTION_OK) PQclear(PQexec(conn_, "ROLLBACK"));
  }

  // Sends one statement; returns its result (the caller clears it) or throws StoreError.
  PGresult* run(const std::string& sql, const std::vector<std::optional<std::string>>& params, bool with_params) {
    for (;;) {
      PGresult* r = send(sql, params, with_params);
      const auto st = PQresultStatus(r);
      if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
        if (st == PGRES_COMMAND_OK) changes_ = std::atoi(PQcmdTuples(r));
        return r;
      }
      const std::string why = libpq_first_line(r ? PQresultErrorMessage(r) : PQerrorMessage(conn_));
      PQclear(r);
      if (PQstatus(conn_) != CONNECTION_BAD) throw StoreError(label() + ": " + why);
      if (in_tx_) {
        in_tx_ = false;
        throw ConnectionLost(label() + ": lost the connection to the database during a write (" + why +
                             "); it was not committed");
      }
      reconnect(why);  // then send the statement again: nothing of it had been done
    }
  }

 private:
  PGresult* send(const std::string& sql, const std::vector<std::optional<std::string>>& params, bool with_params) {
    if (!with_params) return PQexec(conn_, sql.c_str());
    std::vector<const char*> values;
    for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
    return PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr,
                        nullptr, 0);
  }

  void begin(const char* sql) {
    PQclear(run(sql, {}, false));  // a lost connection is re-opened here: no write is lost yet
    in_tx_ = true;
  }

  bool connect(std::string& why) {
    PQfinish(conn_);
    conn_ = PQconnectdb(url_.c_str());
    if (PQstatus(conn_) != CONNECTION_OK) {
      why = libpq_first_line(PQerrorMessage(conn_));
      return false;
    }
    PQsetNoticeProcessor(conn_, ignore_notice, nullptr);
    if (access() == Access::ReadOnly) PQclear(PQexec(conn_, "SET default_transaction_read_only = on"));
    return true;
  }

  void reconnect(const std::string& lost_because) {
    const auto deadline = Clock::now() + std::chrono::duration<double>(retry_s_);
    spdlog::warn("{}: lost the connection to the database ({}); reconnecting for up to {:g} s", label(),
                 lost_because, retry_s_);
    std::string why = lost_because;
    for (auto pause = std::chrono::milliseconds(200);; pause = std::min(2 * pause, std::chrono::milliseconds(2000))) {
      if (connect(why)) {
        spdlog::info("{}: reconnected", label());
        return;
      }
      if (Clock::now() + pause >= deadline) break;
      std::this_thread::sleep_for(pause);
    }
    throw StoreError(label() + ": lost the connection to the database and could not reconnect within " +
                     fmt::format("{:g}", retry_s_) + " s: " + why);
  }

  friend class PgCursor;
  std::string url_;
  double retry_s_;
  PGconn* conn_ = nullptr;
  bool in_tx_ = false;
  int changes_ = 0;
};

bool PgCursor::step() {
  if (!res_) {
    res_ = db_.run(sql_, params_, true);
    row_ = -1;
  }
  ++row_;
  return row_ < PQntuples(res_);
}

}  // namespace

bool postgres_available() { return true; }

std::unique_ptr<Db> open_postgres(const std::string& url, Access access) {
  return std::make_unique<PgDb>(url, access);
}

}  // namespace kf::sql

#endif
